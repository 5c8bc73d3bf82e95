"""The op table: kind -> forward, backward and the LaTeX shown beside each step."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xt_core.ops import attention, basic, loss, norm


@dataclass(frozen=True)
class Op:
    kind: str
    forward: Callable
    backward: Callable
    forward_latex: str
    backward_latex: str


def _op(kind: str, module, stem: str) -> Op:
    return Op(
        kind=kind,
        forward=getattr(module, f"{stem}_forward"),
        backward=getattr(module, f"{stem}_backward"),
        forward_latex=getattr(module, f"{stem.upper()}_FORWARD_TEX"),
        backward_latex=getattr(module, f"{stem.upper()}_BACKWARD_TEX"),
    )


OPS: dict[str, Op] = {
    op.kind: op
    for op in (
        _op("embedding", basic, "embedding"),
        _op("rmsnorm", norm, "rmsnorm"),
        _op("linear", basic, "linear"),
        _op("unembed", basic, "unembed"),
        _op("residual", basic, "residual"),
        _op("swiglu", basic, "swiglu"),
        _op("rope", attention, "rope"),
        _op("scores", attention, "scores"),
        _op("softmax", attention, "softmax"),
        _op("attend", attention, "attend"),
        _op("merge_heads", attention, "merge_heads"),
        _op("token_loss", loss, "token_loss"),
        _op("mean", loss, "mean"),
    )
}
