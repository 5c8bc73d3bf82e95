"""The sentences with numbers of the ops GPT-2 and Qwen add (LayerNorm, GELU, learned positions,
biases, QK-norm), each filled from this trace's tensors as app.steps.measured's are: what the
explanation says of a step is what this trace holds."""

from __future__ import annotations

import numpy as np

import xt_core
from app.steps.measured import row_sum_sentence
from app.steps.wording import num, t
from xt_core.ops import gelu
from xt_core.trace import Record

_GELU = {
    "gelu_tanh": (gelu.gelu_tanh_forward, gelu.gelu_tanh_backward),
    "gelu": (gelu.gelu_forward, gelu.gelu_backward),
}


def _f64(array) -> np.ndarray:
    return np.asarray(array, dtype=np.float64)


def _range(values: np.ndarray, spec: str, lang: str) -> dict:
    return {"low": num(float(values.min()), spec, lang), "high": num(float(values.max()), spec, lang)}


def _layernorm_forward(record: Record, trace: xt_core.Trace, judge: bool, lang: str) -> str:
    x = _f64(trace[record.inputs[0]])
    means, spreads = x.mean(axis=-1), x.std(axis=-1)
    spread = {f"{k}_std": v for k, v in _range(spreads, ".3g", lang).items()}
    return t(lang, "step-measured-layernorm-forward", **_range(means, ".3g", lang), **spread)


def _layernorm_backward(record: Record, trace: xt_core.Trace, judge: bool, lang: str) -> str:
    """dL/dx of every position sums to zero over its C features (the mean term). M, the largest
    term a sum adds: r·(|dx̂_j| + |mean dx̂| + |x̂_j|·|mean(dx̂·x̂)|), from the step's own tensors."""
    x, gain = _f64(trace[record.inputs[0]]), _f64(trace[record.inputs[1]])
    centred = x - x.mean(axis=-1, keepdims=True)
    r = 1.0 / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + trace.cfg.norm_eps)
    xhat, dxhat = centred * r, _f64(trace.grad(record.name)) * gain
    terms = np.abs(dxhat) + np.abs(dxhat.mean(axis=-1, keepdims=True))
    terms += np.abs(xhat) * np.abs((dxhat * xhat).mean(axis=-1, keepdims=True))
    magnitude = float((r * terms).max(initial=0.0))
    dx = record.contributions[record.inputs[0]]
    return row_sum_sentence(dx, "dL/dx", magnitude, judge, lang, "step-row-sums-not-layernorm")


def _gelu_forward(record: Record, trace: xt_core.Trace, judge: bool, lang: str) -> str:
    a, g = _f64(trace[record.inputs[0]]), _f64(trace[record.name])
    share = num(100.0 * float((a < 0).mean()), ".0f", lang)
    return t(lang, "step-measured-gelu-forward", share=share, count=a.size, smallest=num(float(g.min()), ".3g", lang))


def _gelu_backward(record: Record, trace: xt_core.Trace, judge: bool, lang: str) -> str:
    forward, backward = _GELU[record.kind]
    a = _f64(trace[record.inputs[0]])
    (slope,) = backward(np.ones_like(a), forward(a)[1])
    return t(lang, "step-measured-gelu-backward", **_range(slope, ".3g", lang))


def _positions_forward(record: Record, trace: xt_core.Trace, judge: bool, lang: str) -> str:
    T, rows = trace.tokens.shape[-1], trace.cfg.seq_len
    return t(lang, "step-measured-positions-forward", t=T, last=T - 1, rows=rows)


def _positions_backward(record: Record, trace: xt_core.Trace, judge: bool, lang: str) -> str:
    B, T, rows = *trace.tokens.shape, trace.cfg.seq_len
    table = _f64(record.contributions[record.inputs[1]])
    values = {"b": B, "t": T, "last": T - 1, "rows": rows, "end": rows - 1}
    if rows <= T:
        return t(lang, "step-measured-positions-backward-all", **values)
    unused = num(float(np.abs(table[T:]).max(initial=0.0)), ".3g", lang)
    return t(lang, "step-measured-positions-backward", unused=unused, **values)


def _bias_backward(record: Record, trace: xt_core.Trace, judge: bool, lang: str) -> str:
    B, T = trace.tokens.shape
    bias = _f64(record.contributions[record.inputs[-1]])
    largest = num(float(np.abs(bias).max(initial=0.0)), ".3g", lang)
    return t(lang, "step-measured-bias-backward", n=B * T, b=B, t=T, largest=largest)


def _qk_norm_forward(record: Record, trace: xt_core.Trace, judge: bool, lang: str) -> str:
    x = _f64(trace[record.inputs[0]])
    heads = trace.cfg.n_head if ".q_norm." in record.name else trace.cfg.n_kv_head
    rms = np.sqrt((x.reshape(*x.shape[:-1], heads, -1) ** 2).mean(axis=-1))
    return t(lang, "step-measured-qk-norm-forward", heads=heads, **_range(rms, ".3g", lang))


_FORWARD = {
    "layernorm": _layernorm_forward,
    "gelu_tanh": _gelu_forward,
    "gelu": _gelu_forward,
    "positions": _positions_forward,
    "qk_norm": _qk_norm_forward,
}
_BACKWARD = {
    "layernorm": _layernorm_backward,
    "gelu_tanh": _gelu_backward,
    "gelu": _gelu_backward,
    "positions": _positions_backward,
    "linear_bias": _bias_backward,
    "bias": _bias_backward,
}


def sentences(record: Record, trace: xt_core.Trace, judge: bool = True, lang: str = "en") -> dict:
    """{"measured": the sentence with this trace's numbers of a GPT-2 or Qwen op's step} ("" for
    the others); judge False (a sealed quiz's step): numbers without a verdict on them."""
    table = _BACKWARD if record.phase == "backward" else _FORWARD
    said = table.get(record.kind)
    return {"measured": said(record, trace, judge, lang) if said else ""}
