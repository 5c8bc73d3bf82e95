"""Pooling: a heatmap larger than its cell budget is drawn as blocks, each holding the entry of
largest magnitude in it (a real value; outliers survive)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from app.words import t


@dataclass(frozen=True)
class Pooling:
    row_step: int = 1
    col_step: int = 1

    @property
    def active(self) -> bool:
        return self.row_step > 1 or self.col_step > 1

    def note(self, shape: tuple[int, int], lang: str = "en") -> str | None:
        if not self.active:
            return None
        return t(lang, "names-figure-pooled-note", **self.sizes(shape))

    def sizes(self, shape: tuple[int, int]) -> dict[str, int]:
        """The named values of a note on this pooling of a `shape` matrix: its size, its cells', its blocks'."""
        return {
            "rows": shape[0],
            "cols": shape[1],
            "cell_rows": -(-shape[0] // self.row_step),
            "cell_cols": -(-shape[1] // self.col_step),
            "block_rows": self.row_step,
            "block_cols": self.col_step,
        }


def plan_pooling(n_rows: int, n_cols: int, max_cells: int, keep_rows: bool = True) -> Pooling:
    """Smallest pooling that fits max_cells. keep_rows: pool the columns first, so positions
    keep their own row (and label) as long as possible."""
    max_cells = max(1, max_cells)
    if n_rows * n_cols <= max_cells:
        return Pooling()
    if keep_rows and n_rows <= max_cells:
        return Pooling(1, -(-n_cols // max(1, max_cells // n_rows)))
    step = max(1, math.ceil(math.sqrt(n_rows * n_cols / max_cells)))
    while -(-n_rows // step) * -(-n_cols // step) > max_cells:
        step += 1
    return Pooling(step, step)


def max_abs_pool(z: np.ndarray, pooling: Pooling) -> np.ndarray:
    """(R, C) -> (ceil(R/r), ceil(C/c)): per block, the finite entry of largest |value|
    (NaN only if the block holds no finite entry)."""
    if not pooling.active:
        return z
    r, c = pooling.row_step, pooling.col_step
    R, C = z.shape
    padded = np.full((-(-R // r) * r, -(-C // c) * c), np.nan, dtype=np.float64)
    padded[:R, :C] = z
    blocks = padded.reshape(padded.shape[0] // r, r, padded.shape[1] // c, c).transpose(0, 2, 1, 3)
    blocks = blocks.reshape(blocks.shape[0], blocks.shape[1], r * c)
    key = np.where(np.isfinite(blocks), np.abs(blocks), -1.0)
    return np.take_along_axis(blocks, key.argmax(-1)[..., None], -1)[..., 0]


def pool_labels(labels: list[str] | None, step: int, n: int) -> list[str] | np.ndarray:
    if labels is None:
        return np.arange(0, n, step)
    if step == 1:
        return list(labels)
    return [f"{labels[i]}…" for i in range(0, n, step)]
