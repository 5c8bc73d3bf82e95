"""An optimizer step on one parameter, block of rows by block of rows, for updates that are not
held (a real model's: xt_core.training.optim.apply_update(hold=False)).

Every rule of xt_core.training.optim is elementwise, so a block's ΔW is the same bits as those entries of
the whole ΔW. Made whole, AdamW's step on SmolLM2's (49152, 576) embedding makes about ten
113 MB temporaries, each on fresh pages (xt_core.memory); by blocks they stay in cache.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xt_core.memory import reusable_empty

BLOCK = 1 << 18  # entries per block: 1 MB of float32 (a toy model's parameters are one block)


@dataclass
class StepSums:
    """What apply_update keeps of one parameter's step, summed in float64."""

    grad_sq: float = 0.0  # Σ g²
    weight_sq: float = 0.0  # Σ W² (before the step)
    delta_sq: float = 0.0  # Σ ΔW²
    nonfinite: int = 0  # NaN or ±inf entries of W + ΔW


def row_blocks(shape: tuple[int, ...]) -> list[slice]:
    """Slices of the first axis, about BLOCK entries each (one row at least)."""
    if not shape:
        return [slice(None)]
    per_row = int(np.prod(shape[1:], dtype=np.int64))
    rows = max(1, BLOCK // max(per_row, 1))
    return [slice(start, start + rows) for start in range(0, shape[0], rows)]


def _sliced(slot: dict, index) -> dict:
    """The optimizer state of one parameter restricted to `index` (its arrays; `t` stays)."""
    return {k: v[index] if isinstance(v, np.ndarray) else v for k, v in slot.items()}


def _squares(a: np.ndarray) -> float:
    return float(np.sum(np.square(a, dtype=np.float64)))


def step_sums(optimizer, name: str, p: np.ndarray, g: np.ndarray, state: dict) -> StepSums:
    """The statistics of parameter `name`'s step, nothing of its size held."""
    slot, sums = dict(state.get(name, {})), StepSums()
    for block in row_blocks(np.shape(p)):
        weight, grad = p[block], g[block]
        delta = optimizer.update(name, weight, grad, _sliced(slot, block))
        sums.grad_sq += _squares(grad)
        sums.weight_sq += _squares(weight)
        sums.delta_sq += _squares(delta)
        new = weight + delta
        sums.nonfinite += int(new.size - np.count_nonzero(np.isfinite(new)))
    return sums


def stepped(optimizer, name: str, params, grads, state: dict, plus_weights: bool = True, rows=None) -> np.ndarray:
    """W + ΔW of parameter `name` (ΔW alone if not plus_weights), made block by block; only
    `rows` of it, if given (what an embedding lookup reads). A vocabulary-sized result comes from
    reused memory (xt_core.memory.reusable_empty)."""
    p, g, slot = np.asarray(params[name]), grads[name], dict(state.get(name, {}))
    if rows is not None:
        p, g, slot = p[rows], g[rows], _sliced(slot, rows)
    out = None
    for block in row_blocks(np.shape(p)):
        delta = optimizer.update(name, p[block], g[block], _sliced(slot, block))
        if out is None:
            out = reusable_empty(np.shape(p), np.result_type(p, delta))
        if plus_weights:
            np.add(p[block], delta, out=out[block])
        else:
            out[block] = delta
    return out if out is not None else np.empty(np.shape(p), np.result_type(p, g))
