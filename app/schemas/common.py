"""The pieces several answers share: a figure entry with its numbers table, a gradient check's
badge (done, pending or sealed), a model config and the canonical spec."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# Plotly's figure JSON ({data, layout}) as plotly.py writes it: open, the page hands it to Plotly.
PlotlyFigure = dict[str, Any]
PLOTLY = "a Plotly figure: {data: [traces], layout} (numpy arrays as base64 typed arrays)"
Phase = Literal["forward", "loss", "backward", "update"]


class Answer(BaseModel):
    """A JSON answer: every key it has is a field (additionalProperties: false)."""

    model_config = ConfigDict(extra="forbid")


class Message(Answer):
    detail: str = Field(description="what went wrong, in words")


class Table(Answer):
    """The 'numbers' toggle of a figure: rows × columns of values (6 significant digits)."""

    columns: list[str] = Field(description="column labels")
    index: list[str] = Field(description="row labels")
    rows: list[list[float | None]] = Field(description="values, row by row (null: not finite)")


class HeadGrid(Answer):
    """A grid of attention heads, downsampled for the overview (GET .../head: one head's every value)."""

    count: int = Field(description="heads in the grid")
    shape: list[int] = Field(description="one head's full (rows, columns)")
    shown: list[int] = Field(description="one head's (rows, columns) as drawn")
    pooled: bool = Field(description="whether the drawn cells pool several values")


class TensorStats(Answer):
    """The whole tensor's numbers (app/steps/stats.py), not the cells drawn: NaN and ±inf are
    counted and left out of the others."""

    shape: list[int]
    dtype: str
    axes: list[str] = Field(description="the axis names (B, T, H, V, C, ...), empty when unknown")
    count: int = Field(description="entries")
    finite: int = Field(description="entries that are neither NaN nor ±inf")
    nan: int
    inf: int = Field(description="±inf entries (attention scores: the masked keys, −∞)")
    min: float | None = Field(description="null: no finite entry")
    max: float | None
    mean: float | None
    std: float | None = Field(description="population std (numpy's np.std)")
    norm: float | None = Field(description="‖·‖₂ over every finite entry")
    argmax: list[int] | None = Field(description="the index of the largest entry")
    argmax_labels: list[str | None] | None = Field(
        description="what each coordinate of argmax names: the token at a position or of the vocabulary, a head"
    )


class FigureEntry(Answer):
    """One figure of a view, with its numbers and notes."""

    id: str = Field(description="the figure's id, stable across traces (e.g. input.layers.0.attention.probs)")
    title: str
    role: str = Field(
        description="what the figure shows: input, output, grad, attention, loss, residual, diff, update, check"
    )
    figure: PlotlyFigure = Field(description=PLOTLY)
    table: Table | None = Field(description="the values behind the figure, or null")
    note: str | None = Field(description="what the figure or its table leaves out, or null")
    heads: HeadGrid | None = Field(description="set on a grid of attention heads")
    download: str | None = Field(
        None, description="the URL of the whole tensor as .npy (null: not a whole recorded tensor); diffs have none"
    )
    stats: TensorStats | None = Field(None, description="the whole tensor's numbers (absent for charts)")


class TensorCheck(Answer):
    """One tensor's directional check: <dL/dX, u> against the central difference of L along u."""

    tensor: str = Field(description="the recorded tensor checked")
    analytic: float | None = Field(description="<dL/dX, u> from the backward (float64 twin)")
    numeric: float | None = Field(description="(L(X + δ·u) − L(X − δ·u)) / 2δ in float64, δ the step")
    rel_error: float | None = Field(description="|analytic − numeric| relative to their size")
    float32_shown: float | None = Field(description="<dL/dX, u> of the gradient on screen (its own dtype)")
    resolution: float = Field(description="> 0: the extrapolated difference resolves the gradient only to this")


class GradCheck(Answer):
    """A step's gradient check (docs/gradients.md)."""

    passed: bool
    max_rel_error: float | None = Field(description="the largest rel_error of its checks")
    tolerance: float = Field(description="float64's tolerance the error is judged against")
    floor: float = Field(description="rel error = |analytic − numeric| / max(|analytic|, |numeric|, floor)")
    # a float32 or float64 trace's (float64: roundoff null); a bfloat16 or float16 trace's are named for it
    float32_roundoff: float | None = Field(None, description="how far the float32 gradient shown sits from its twin")
    float32_nonfinite: bool | None = Field(None, description="the rule checked fine but the float32 values overflowed")
    bfloat16_roundoff: float | None = Field(None, description="a bfloat16 step's float32_roundoff")
    bfloat16_nonfinite: bool | None = Field(None, description="a bfloat16 step's float32_nonfinite")
    float16_roundoff: float | None = Field(None, description="a float16 step's float32_roundoff")
    float16_nonfinite: bool | None = Field(None, description="a float16 step's float32_nonfinite")
    resolution: float = Field(description="the coarsest resolution of its checks (0: all exact differences)")
    error_bound: float | None = Field(description="rel_error + resolution: the most the checks vouch for")
    checks: list[TensorCheck]


class PendingCheck(Answer):
    """A view answered before its check: GET .../steps/{index}/check has it."""

    pending: Literal[True]


class SealedCheck(Answer):
    """A quiz hides the verdict until it is answered or the step probed."""

    sealed: Literal[True]


StepGradCheck = GradCheck | PendingCheck | SealedCheck


class ModelConfig(Answer):
    """xt_core.Config as JSON."""

    vocab_size: int = Field(description="tokens in the vocabulary")
    n_layer: int
    n_head: int
    n_kv_head: int = Field(description="key/value heads (grouped-query attention when < n_head)")
    n_embd: int
    ffn_hidden: int
    seq_len: int = Field(description="the most positions the model takes")
    tie_embeddings: bool = Field(description="the LM head reads tok_embeddings")
    rope_theta: float
    norm_eps: float
    # the model family and its parts (xt_core.config.FAMILY_PARTS): each present only where it is not
    # its default (Config.to_dict), so a Llama's config names none of them
    family: Literal["llama", "gpt2"] = Field(None, description="the model family (absent: llama)")
    head_dim: int = Field(None, description="a head's width (absent: n_embd / n_head)")
    positions: Literal["rope", "learned"] = Field(None, description="absent: the family's default")
    norm_type: Literal["rmsnorm", "layernorm"] = Field(None, description="absent: the family's default")
    norm_bias: bool = Field(None, description="absent: the family's default")
    activation: Literal["swiglu", "gelu_tanh", "gelu"] = Field(None, description="absent: the family's default")
    qkv_bias: bool = Field(None, description="absent: the family's default")
    o_bias: bool = Field(None, description="absent: the family's default")
    mlp_bias: bool = Field(None, description="absent: the family's default")
    qk_norm: bool = Field(None, description="absent: the family's default")


class CanonicalSpec(Answer):
    """A spec with every default filled in: what the trace id hashes (docs/api.md, "The spec")."""

    model: str | None = Field(description="a checkpoint's name, or null for a random init")
    config: ModelConfig | None = Field(description="the random init's config (null with a checkpoint)")
    tokenizer: str | None
    seed: int
    text: str | None
    tokens: list[int] | list[list[int]] | None = Field(description="token ids given directly (text null)")
    dtype: Literal["float32", "float64", "bfloat16", "float16"]
    # a bfloat16 or float16 spec's only (app/spec/precision.py): absent from every other
    loss_scale: float | None = Field(None, description="a low-precision step's loss scale (a power of two)")
    loss_scale_growth: int | None = Field(None, description="the dynamic scaler's growth interval; null: static")
    flush_to_zero: bool | None = Field(None, description="a low-precision step's subnormal results become 0")
    faults: list[str] = Field(description="bug-lab faults planted in the backward pass")
    fault_layer: int | None
    quiz: int | None = Field(description="a quiz's seed (its fault is resolved on the server)")
    optimizer: dict[str, str | float] | None = Field(description="{name, lr, ...}: the update step's optimizer")
    train_steps: int = Field(description="training steps on the batch before the recorded one")
    # a recorded run's step only (app/spec/run_step.py): absent from every other
    run: str | None = Field(None, description="the recorded run (GET /api/runs) whose step this is")
    run_step: int | None = Field(None, description="the step of the run")
    run_digest: str | None = Field(None, description="the run's weights before the step, 64 bits of BLAKE2b in hex")


class FaultEntry(Answer):
    """One bug-lab fault: the op it breaks, the correct and the faulty line."""

    name: str
    op: str = Field(description="the recorded name of the op whose backward it changes")
    op_title: str
    description: str
    correct: str = Field(description="the correct backward line")
    faulty: str = Field(description="the line the fault puts in its place")
    applies: bool = Field(description="whether the fault applies to this config")
    reason: str | None = Field(description="why it does not apply, or null")
