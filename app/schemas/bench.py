"""The answers of app/routes/bench.py: a page of a tensor's numbers, and one step of two traces."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from app.schemas.common import Answer, FigureEntry, Phase, TensorStats


class TensorSlice(Answer):
    """GET .../tensors/{name}/slice: one page of a tensor read as a matrix (the last two axes)."""

    name: str
    grad: bool = Field(description="the gradient dL/d(name) rather than the value")
    shape: list[int] = Field(description="the whole tensor's")
    dtype: str
    axes: list[str] = Field(description="the axis names (B, T, H, V, C, ...), empty when unknown")
    at: list[int] = Field(description="the index of every leading axis but the last two")
    rows: list[int] = Field(description="[start, stop) of the rows shown (the second-to-last axis)")
    cols: list[int] = Field(description="[start, stop) of the columns shown (the last axis)")
    n_rows: int = Field(description="rows of the matrix at `at`")
    n_cols: int
    row_labels: list[str] = Field(description="each row shown: `i token` for positions, a token for the vocabulary")
    col_labels: list[str]
    values: Any = Field(description="rows of numbers (null: not finite)")


class CompareSide(Answer):
    id: str
    query: dict[str, str] = Field(description="its spec as /walk's query string")
    dtype: str
    loss: float | None
    optimizer: dict[str, str | float] | None
    train_steps: int


class Difference(TensorStats):
    """B − A in float64 over the whole tensor, and its size against A."""

    max_abs: float | None = Field(description="max |B − A|")
    rel: float | None = Field(description="‖B − A‖₂ / ‖A‖₂")
    max_rel: float | None = Field(description="max |B − A| / max |A|")
    identical: bool


class ComparedTensor(Answer):
    label: str = Field(description="value, gradient or ΔW")
    name: str
    gradient: bool
    dtype_a: str
    dtype_b: str
    difference: Difference
    figures: list[FigureEntry] = Field(description="A, B and B − A")


class StepCompare(Answer):
    """GET .../steps/{index}/compare/{b}: the same step of two aligned traces."""

    index: int
    name: str
    phase: Phase
    layer: int | None
    title: str
    block: str
    a: CompareSide
    b: CompareSide
    seq: int
    tensors: list[ComparedTensor]
