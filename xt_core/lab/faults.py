"""The bug lab's catalogue: the classic mistakes of a hand-written backward pass.

Each fault swaps the backward of exactly one op (never a forward), so the loss is
unchanged while every gradient upstream of the op is corrupted. The per-step gradient
check measures against finite differences of the true loss, so it fails first exactly at
the faulted op. Most faults come from the warnings in the hand-written C++ backward pass xt started from.
A fault's words (its description, why it cannot apply, for a page) are in the app's catalogues,
keyed by its name (app/words/locales/<lang>/buglab.ftl); here its structure: the step, the two lines.

Layer-specific faults hit one layer (by default the last, nearest the loss, so the damage
then flows through every earlier layer).

The step knows no fault: the lab hands it a table, step name -> the faulty rule that replaces
that op's backward (`overrides`), as an exercise hands it a learner's backward.

    trace = forward_backward(cfg, params, inputs, targets, backward_override=overrides(cfg, ["batch_mean_twice"]))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from xt_core.config import Config
from xt_core.lab import faults_gpt2
from xt_core.names import OUTPUT_PROBS, entry
from xt_core.ops import OPS
from xt_core.ops.attention import merge_kv, rope_forward


@dataclass(frozen=True)
class Fault:
    name: str
    step: str  # the step whose backward it changes: a pattern of xt_core.names ("{L}" is the layer)
    correct: str  # the line it replaces
    faulty: str  # the line as the mistake writes it
    backward: Callable  # (dout, cache, grads, layer) -> gradients, like the op's backward
    requires: Callable[[Config], str | None] = lambda cfg: None  # why it cannot apply, or None
    family: str = "llama"  # the model family whose table of recorded tensors names `step`

    def __post_init__(self):
        entry(self.step, self.family)  # a step the family's table does not know fails here, at import

    def step_name(self, layer: int) -> str:
        return entry(self.step, self.family).name(layer)


def _softmax_ce_normalized_twice(dp, cache, grads, layer):
    p, row_sum = cache
    (dlogits,) = OPS["softmax"].backward(dp, cache)
    return (dlogits / row_sum,)


def _attention_out_reads_dres(dout, cache, grads, layer):
    return OPS["linear"].backward(grads[entry("layers.{L}.ffn_residual").name(layer)], cache)


def _rope_forward_rotation(dy, cache, grads, layer):
    n_heads, theta = cache
    return (rope_forward(dy, n_heads, theta)[0],)


def _batch_mean_missing(dloss, shape, grads, layer):
    return (np.full(shape, dloss, dtype=dloss.dtype),)


def _batch_mean_twice(dloss, shape, grads, layer):
    n = np.prod(shape)
    return (np.full(shape, dloss / n / n, dtype=dloss.dtype),)


def _tied_embedding_one_contribution(dlogits, cache, grads, layer):
    dx, dweight = OPS["unembed"].backward(dlogits, cache)
    return dx, np.zeros_like(dweight)


def _rmsnorm_missing_projection(dy, cache, grads, layer):
    xhat, r, gain = cache
    dgain = np.einsum("btc,btc->c", dy, xhat)
    return r * (dy * gain), dgain


def _softmax_missing_sum_term(dp, cache, grads, layer):
    p, _ = cache
    return (p * dp,)


def _attention_scale_missing(dscores, cache, grads, layer):
    scale = cache[2]
    return tuple(g / scale for g in OPS["scores"].backward(dscores, cache))


def _swiglu_silu_for_derivative(ds, cache, grads, layer):
    gate, up, sig, silu = cache
    return ds * up * silu, ds * silu


def _gqa_kv_not_summed(dheads, cache, grads, layer):
    ph, vh = cache
    dprobs, _ = OPS["attend"].backward(dheads, cache)
    B, K, G, T, _ = ph.shape
    do = dheads.reshape(B, K, G, T, dheads.shape[-1])
    first_head_only = (ph.swapaxes(-1, -2) @ do)[:, :, :1]
    return dprobs, merge_kv(first_head_only)


def _linear_dw_transposed(dy, cache, grads, layer):
    x, weight = cache
    dx, _ = OPS["linear"].backward(dy, cache)
    return dx, dy.reshape(-1, dy.shape[-1]).T @ x.reshape(-1, x.shape[-1])


def _needs_tied(cfg: Config) -> str | None:
    return None if cfg.tie_embeddings else "needs tied embeddings (tie_embeddings = true)"


def _needs_gqa(cfg: Config) -> str | None:
    return None if cfg.n_kv_head < cfg.n_head else "needs grouped-query attention (n_kv_head < n_head)"


def _needs_llama(cfg: Config) -> str | None:
    """Faults on an op only Llama's script has (RMSNorm, RoPE, SwiGLU)."""
    return None if cfg.family == "llama" else "needs the llama family (family = llama)"


def _needs_unbiased_llama(cfg: Config) -> str | None:
    """Faults that rewrite a plain linear's backward: Llama's projection, or GPT-2's without its bias."""
    biased = cfg.family == "gpt2" and (cfg.o_bias or cfg.qkv_bias)
    return "needs projections without biases (qkv_bias = o_bias = false)" if biased else None


CATALOGUE: dict[str, Fault] = {
    f.name: f
    for f in (
        Fault(
            "softmax_ce_normalized_twice",
            OUTPUT_PROBS,
            "dlogits = p * (dp - sum(p * dp))",
            "dlogits = p * (dp - sum(p * dp)) / sum(exp(logits - max))",
            _softmax_ce_normalized_twice,
        ),
        Fault(
            "attention_out_reads_dres",
            "layers.{L}.attention.out",
            "dconcat, dWo = linear_backward(dh)",
            "dconcat, dWo = linear_backward(dres)",
            _attention_out_reads_dres,
            _needs_unbiased_llama,
        ),
        Fault(
            "rope_forward_rotation",
            "layers.{L}.attention.q_rot",
            "dq = R(-angle) @ dq_rot",
            "dq = R(+angle) @ dq_rot",
            _rope_forward_rotation,
            _needs_llama,
        ),
        Fault(
            "batch_mean_missing",
            "loss",
            "dtoken_loss = dL / N",
            "dtoken_loss = dL",
            _batch_mean_missing,
        ),
        Fault(
            "batch_mean_twice",
            "loss",
            "dtoken_loss = dL / N",
            "dtoken_loss = dL / N / N",
            _batch_mean_twice,
        ),
        Fault(
            "tied_embedding_one_contribution",
            "logits",
            "dE += dlogits^T @ n",
            "(dropped)",
            _tied_embedding_one_contribution,
            _needs_tied,
        ),
        Fault(
            "rmsnorm_missing_projection",
            "layers.{L}.ffn_norm.out",
            "dx = r * (dxhat - xhat * mean(dxhat * xhat))",
            "dx = r * dxhat",
            _rmsnorm_missing_projection,
            _needs_llama,
        ),
        Fault(
            "softmax_missing_sum_term",
            "layers.{L}.attention.probs",
            "dscores = p * (dp - sum(p * dp))",
            "dscores = p * dp",
            _softmax_missing_sum_term,
        ),
        Fault(
            "attention_scale_missing",
            "layers.{L}.attention.scores",
            "dq = dscores @ k * scale",
            "dq = dscores @ k",
            _attention_scale_missing,
        ),
        Fault(
            "swiglu_silu_for_derivative",
            "layers.{L}.feed_forward.swiglu",
            "dgate = ds * up * silu'(gate)",
            "dgate = ds * up * silu(gate)",
            _swiglu_silu_for_derivative,
            _needs_llama,
        ),
        Fault(
            "gqa_kv_not_summed",
            "layers.{L}.attention.heads",
            "dv[κ] = sum over the query heads m with ⌊m/G⌋ = κ of P[m]^T @ do[m]",
            "dv[κ] = P[κ·G]^T @ do[κ·G] (only the group's first query head m = κ·G)",
            _gqa_kv_not_summed,
            _needs_gqa,
        ),
        Fault(
            "linear_dw_transposed",
            "layers.{L}.attention.q",
            "dWq = X^T @ dY",
            "dWq = dY^T @ X",
            _linear_dw_transposed,
            _needs_unbiased_llama,
        ),
        # GPT-2's (xt_core/lab/faults_gpt2.py)
        Fault(
            "layernorm_missing_mean",
            "layers.{L}.ffn_norm.out",
            "dx = r * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))",
            "dx = r * (dxhat - xhat * mean(dxhat * xhat))",
            faults_gpt2.layernorm_missing_mean,
            faults_gpt2.needs_gpt2,
            family="gpt2",
        ),
        Fault(
            "bias_grad_one_row",
            "layers.{L}.feed_forward.out",
            "db2 = sum over all B·T rows of dY",
            "db2 = dY[last row]",
            faults_gpt2.bias_grad_one_row,
            faults_gpt2.needs_gpt2_mlp_bias,
            family="gpt2",
        ),
    )
}


def overrides(cfg: Config, names, layer: int | None = None) -> dict[str, Callable]:
    """The named faults as the step takes them: an override table, step name -> the faulty rule
    that replaces that op's backward, (dout, cache, grads) -> gradients like the op's own
    (forward_backward's `backward_override`). Empty without names.
    Raises ValueError naming an unknown or inapplicable fault, or two faults on one step."""
    layer = cfg.n_layer - 1 if layer is None else layer
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < cfg.n_layer:
        raise ValueError(f"fault layer must be in [0, {cfg.n_layer}), got {layer!r}")
    table: dict[str, Callable] = {}
    planted: dict[str, str] = {}  # step -> the fault planted there
    for name in names:
        fault = CATALOGUE.get(name)
        if fault is None:
            raise ValueError(f"unknown fault {name!r}; known: {', '.join(CATALOGUE)}")
        reason = fault.requires(cfg)
        if reason:
            raise ValueError(f"fault {name!r} {reason}")
        step = fault.step_name(layer)
        if step in planted:
            raise ValueError(f"faults {planted[step]!r} and {name!r} both change step {step!r}; pick one")
        planted[step] = name
        table[step] = partial(fault.backward, layer=layer)
    return table
