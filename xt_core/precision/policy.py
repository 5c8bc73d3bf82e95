"""The rounding model of a low-precision step: which op runs in which precision, forward and backward.

The model is the one frameworks use for mixed precision (PyTorch's autocast, a loss scaler and
float32 master weights), stated here and in docs/precision.md rather than inherited from a library:

* the parameters stay float32 ("master weights"); the update adds ΔW to them in float32;
* a ROUNDED op (matmuls, the elementwise ops, lookups) rounds its float inputs to the format,
  computes in float32 (a matmul accumulates in float32) and rounds its output once: that output is
  a low-precision tensor;
* a FLOAT32 op (the reductions: softmax, the norms, the loss and its mean) reads its inputs as they
  come and returns float32;
* backward, a ROUNDED op reads dL/d its output rounded to the format and rounds every gradient it
  makes (an activation's, and its weight's contribution, as a low-precision matmul's output); a
  FLOAT32 op's gradients stay float32 except those of a low-precision input, rounded as autocast's
  cast back rounds them; a tensor's contributions are summed in float32 (the master gradient);
* loss scaling: the backward runs on S·L (S a power of two). Scaling by 2^k is exact in float32,
  and every backward rule is linear in dL/d its output, so rounding S·g to the format and dividing
  by S gives, bit for bit, the unscaled value of the scaled backward: xt records that unscaled
  value (what the update reads after the unscale), rounded where S·g is rounded.

All of it is a policy the tape consults (xt_core.tape.Node.precision): the ops' bodies are not
touched, and a step without a policy computes exactly as before.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from xt_core.precision.formats import FORMATS, Format

ROUNDED = "rounded"  # inputs rounded to the format, computed in float32, output rounded
FLOAT32 = "float32"  # inputs as they come, computed and returned in float32

# Every op kind's precision (xt_core.ops.registry.OPS: a test holds them equal)
OP_PRECISION: dict[str, str] = {
    "embedding": ROUNDED,
    "positions": ROUNDED,
    "linear": ROUNDED,
    "linear_bias": ROUNDED,
    "unembed": ROUNDED,
    "residual": ROUNDED,
    "bias": ROUNDED,
    "swiglu": ROUNDED,
    "gelu": ROUNDED,
    "gelu_tanh": ROUNDED,
    "rope": ROUNDED,
    "scores": ROUNDED,
    "attend": ROUNDED,
    "merge_heads": ROUNDED,
    "rmsnorm": FLOAT32,
    "layernorm": FLOAT32,
    "qk_norm": FLOAT32,
    "softmax": FLOAT32,
    "token_loss": FLOAT32,
    "mean": FLOAT32,
}
MAX_LOSS_SCALE_EXPONENT = 32  # a static loss scale is 2^k, 0 <= k <= this


def check_loss_scale(scale: float) -> float:
    """A loss scale is a power of two in [1, 2^MAX_LOSS_SCALE_EXPONENT] (only then is the scaling
    exact, and the recorded unscaled gradients the scaled backward's bits)."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale < 1:
        raise ValueError(f"loss_scale must be a power of two in [1, 2^{MAX_LOSS_SCALE_EXPONENT}], got {scale!r}")
    mantissa, exponent = math.frexp(scale)
    if mantissa != 0.5 or exponent - 1 > MAX_LOSS_SCALE_EXPONENT:
        raise ValueError(f"loss_scale must be a power of two in [1, 2^{MAX_LOSS_SCALE_EXPONENT}], got {scale!r}")
    return float(scale)


@dataclass(frozen=True)
class Precision:
    """How a step emulates a low-precision format (module docstring). `low`: the names of the tensors
    held in the format, filled by bind()."""

    format: Format
    loss_scale: float = 1.0
    flush_to_zero: bool = False
    low: frozenset = field(default=frozenset(), repr=False)

    @classmethod
    def of(cls, name: str, loss_scale: float = 1.0, flush_to_zero: bool = False) -> Precision:
        if name not in FORMATS:
            raise ValueError(f"precision must be one of {', '.join(FORMATS)}, got {name!r}")
        return cls(FORMATS[name], check_loss_scale(loss_scale), bool(flush_to_zero))

    @property
    def name(self) -> str:
        return self.format.name

    def bind(self, nodes: list) -> list:
        """The tape's nodes, each consulting this policy (xt_core.tape.Node.precision)."""
        unknown = sorted({n.kind for n in nodes} - set(OP_PRECISION))
        if unknown:
            raise ValueError(f"no precision is stated for the ops {', '.join(unknown)}")
        policy = replace(self, low=frozenset(n.name for n in nodes if OP_PRECISION[n.kind] == ROUNDED))
        return [replace(n, precision=policy) for n in nodes]

    def round(self, x):
        """A float array rounded to the format (as float32); anything else (token ids) as it is."""
        if not isinstance(x, np.ndarray) or x.dtype.kind != "f":
            return x
        return self.format.round(x, self.flush_to_zero)

    def round_grad(self, g: np.ndarray) -> np.ndarray:
        """A gradient as the scaled backward holds it: S·g rounded, then unscaled (exact: S = 2^k)."""
        if self.loss_scale == 1.0:
            return self.round(g)
        scale = np.float32(self.loss_scale)
        with np.errstate(over="ignore"):
            return self.round(np.asarray(g, dtype=np.float32) * scale) / scale

    def forward(self, node, args: list):
        """node's op run forward in this precision: (output, cache)."""
        if OP_PRECISION[node.kind] == FLOAT32:
            return node.op.forward(*args, **node.attrs)
        out, cache = node.op.forward(*map(self.round, args), **node.attrs)
        return self.round(out), cache

    def backward(self, node, rule, dout: np.ndarray, cache) -> tuple:
        """rule(dout, cache) (the op's backward, or a fault's) run in this precision: the gradient
        it makes for each of node's inputs (None where it makes none)."""
        rounded = OP_PRECISION[node.kind] == ROUNDED
        in_grads = rule(self.round_grad(dout) if rounded else dout, cache)
        return tuple(
            None if g is None else self.round_grad(g) if rounded or name in self.low else g
            for name, g in zip(node.inputs, in_grads, strict=True)
        )
