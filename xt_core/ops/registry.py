"""The op table: kind -> forward, backward and the LaTeX shown beside each step."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xt_core.ops import attention, basic, bias, gelu, loss, norm, qk_norm


@dataclass(frozen=True)
class Op:
    kind: str
    forward: Callable
    backward: Callable
    forward_latex: str
    backward_latex: str
    # the backward without parameter gradients (None: backward itself), for ops whose weight
    # gradient costs as much as the rest: what the backward loop runs where it keeps no parameter
    # gradient (xt_core.tape.KeepOnly without a sink: a trace's build, the float64 twin)
    input_backward: Callable | None = None
    # cache -> the rows of its last input (a table) outside which its backward's contribution is
    # zero (an embedding lookup: the batch's tokens), so the tape adds that contribution by rows
    sparse_rows: Callable | None = None
    # the backward's parameter gradients alone (None for every other input), with the bits the
    # backward gives them: a replay makes them when read (xt_core.recompute.DeferredParams)
    param_backward: Callable | None = None


# Each entry names its functions and formulas directly, so a reader (or a tool) follows a
# step's kind straight to the code that computes it.
_TABLE = (
    Op(
        "embedding",
        basic.embedding_forward,
        basic.embedding_backward,
        basic.EMBEDDING_FORWARD_TEX,
        basic.EMBEDDING_BACKWARD_TEX,
        sparse_rows=basic.embedding_rows,
    ),
    Op(
        "rmsnorm",
        norm.rmsnorm_forward,
        norm.rmsnorm_backward,
        norm.RMSNORM_FORWARD_TEX,
        norm.RMSNORM_BACKWARD_TEX,
    ),
    Op(
        "linear",
        basic.linear_forward,
        basic.linear_backward,
        basic.LINEAR_FORWARD_TEX,
        basic.LINEAR_BACKWARD_TEX,
        basic.linear_input_backward,
        param_backward=basic.linear_param_backward,
    ),
    Op(
        "unembed",
        basic.unembed_forward,
        basic.unembed_backward,
        basic.UNEMBED_FORWARD_TEX,
        basic.UNEMBED_BACKWARD_TEX,
        basic.unembed_input_backward,
        param_backward=basic.unembed_param_backward,
    ),
    Op(
        "residual",
        basic.residual_forward,
        basic.residual_backward,
        basic.RESIDUAL_FORWARD_TEX,
        basic.RESIDUAL_BACKWARD_TEX,
    ),
    Op(
        "swiglu",
        basic.swiglu_forward,
        basic.swiglu_backward,
        basic.SWIGLU_FORWARD_TEX,
        basic.SWIGLU_BACKWARD_TEX,
    ),
    Op(
        "rope",
        attention.rope_forward,
        attention.rope_backward,
        attention.ROPE_FORWARD_TEX,
        attention.ROPE_BACKWARD_TEX,
    ),
    Op(
        "scores",
        attention.scores_forward,
        attention.scores_backward,
        attention.SCORES_FORWARD_TEX,
        attention.SCORES_BACKWARD_TEX,
    ),
    Op(
        "softmax",
        attention.softmax_forward,
        attention.softmax_backward,
        attention.SOFTMAX_FORWARD_TEX,
        attention.SOFTMAX_BACKWARD_TEX,
    ),
    Op(
        "attend",
        attention.attend_forward,
        attention.attend_backward,
        attention.ATTEND_FORWARD_TEX,
        attention.ATTEND_BACKWARD_TEX,
    ),
    Op(
        "merge_heads",
        attention.merge_heads_forward,
        attention.merge_heads_backward,
        attention.MERGE_HEADS_FORWARD_TEX,
        attention.MERGE_HEADS_BACKWARD_TEX,
    ),
    Op("bias", bias.bias_forward, bias.bias_backward, bias.BIAS_FORWARD_TEX, bias.BIAS_BACKWARD_TEX),
    Op(
        "qk_norm",
        qk_norm.qk_norm_forward,
        qk_norm.qk_norm_backward,
        qk_norm.QK_NORM_FORWARD_TEX,
        qk_norm.QK_NORM_BACKWARD_TEX,
    ),
    Op(
        "token_loss",
        loss.token_loss_forward,
        loss.token_loss_backward,
        loss.TOKEN_LOSS_FORWARD_TEX,
        loss.TOKEN_LOSS_BACKWARD_TEX,
    ),
    Op(
        "mean",
        loss.mean_forward,
        loss.mean_backward,
        loss.MEAN_FORWARD_TEX,
        loss.MEAN_BACKWARD_TEX,
    ),
    # GPT-2's: LayerNorm, learned positions, linear layers with bias, GELU in both forms
    Op(
        "layernorm",
        norm.layernorm_forward,
        norm.layernorm_backward,
        norm.LAYERNORM_FORWARD_TEX,
        norm.LAYERNORM_BACKWARD_TEX,
    ),
    Op(
        "positions",
        basic.positions_forward,
        basic.positions_backward,
        basic.POSITIONS_FORWARD_TEX,
        basic.POSITIONS_BACKWARD_TEX,
    ),
    Op(
        "linear_bias",
        basic.linear_bias_forward,
        basic.linear_bias_backward,
        basic.LINEAR_BIAS_FORWARD_TEX,
        basic.LINEAR_BIAS_BACKWARD_TEX,
        basic.linear_bias_input_backward,
        param_backward=basic.linear_bias_param_backward,
    ),
    Op(
        "gelu_tanh",
        gelu.gelu_tanh_forward,
        gelu.gelu_tanh_backward,
        gelu.GELU_TANH_FORWARD_TEX,
        gelu.GELU_TANH_BACKWARD_TEX,
    ),
    Op(
        "gelu",
        gelu.gelu_forward,
        gelu.gelu_backward,
        gelu.GELU_FORWARD_TEX,
        gelu.GELU_BACKWARD_TEX,
    ),
)
OPS: dict[str, Op] = {op.kind: op for op in _TABLE}
