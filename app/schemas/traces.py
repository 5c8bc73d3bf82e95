"""The answers of app/routes/traces.py: a trace's summary, a step's view and check, one head,
a softmax row's Jacobian, a tensor as JSON."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from app.schemas.common import (
    PLOTLY,
    Answer,
    CanonicalSpec,
    FigureEntry,
    ModelConfig,
    Phase,
    PlotlyFigure,
    StepGradCheck,
    Table,
    TensorStats,
)


class StepSummary(Answer):
    index: int = Field(description="position in the trace's step list")
    name: str = Field(description="the recorded tensor the step makes (forward) or differentiates (backward)")
    phase: Phase
    layer: int | None = Field(description="the transformer layer, or null outside the layers")
    title: str
    block: str = Field(description="the id of the block the step belongs to (`blocks`)")


class StepEntry(StepSummary):
    """One step of the step list."""

    group: str = Field(description="the id of the timeline group (`groups`)")
    op: str = Field(description="the op's name within its layer, e.g. attention.probs")
    op_title: str = Field(description="the op in words")


class Block(Answer):
    id: str
    label: str
    layer: int | None


class Tokens(Answer):
    """The batch, (n_seq, T) each: inputs are tokens[:-1], targets tokens[1:]."""

    inputs: list[list[int]]
    targets: list[list[int]]
    input_labels: list[list[str]] = Field(description="each input token as text (whitespace drawn visibly)")
    target_labels: list[list[str]]


class Training(Answer):
    """The optimizer and the training run before the recorded step."""

    optimizer: dict[str, str | float] = Field(description="{name, lr, ...} as the spec gave it, defaults filled in")
    optimizer_label: str
    steps: int = Field(description="training steps taken before the recorded one")
    first_loss: float | None = Field(description="the loss of the first training step (null: none taken)")
    last_loss: float | None
    loss_after: float | None = Field(description="the loss after the recorded step's update")


class FirstNonfinite(Answer):
    """Where NaN or ±inf first appear in the trace."""

    index: int
    name: str
    phase: Phase
    title: str
    tensor: str = Field(description="the tensor holding them")
    count: int
    unit: str = Field(description="what count counts")
    advice: str


class TraceSummary(Answer):
    """POST /api/traces: the trace's id, loss, batch, and the list of its steps."""

    id: str = Field(description="hash of the canonical spec: the {trace_id} of every route below")
    loss: float | None = Field(description="mean cross-entropy of the batch (null: not finite)")
    spec: CanonicalSpec
    query: dict[str, str] = Field(description="the spec as /walk's query string")
    config: ModelConfig
    dtype: Literal["float32", "float64", "bfloat16", "float16"]
    n_seq: int = Field(description="sequences in the batch")
    T: int = Field(description="positions per sequence")
    tokens: Tokens
    blocks: list[Block] = Field(description="the model's blocks, in order")
    steps: list[StepEntry]
    groups: list[Block] = Field(description="the timeline's groups, in model order")
    training: Training | None = Field(description="null for a trace without an update step")
    first_nonfinite: FirstNonfinite | None = Field(description="the divergence banner's step, or null")


class Formula(Answer):
    latex: str
    mathml: str = Field(description="the same formula as MathML (rendered without a script)")


class Formulas(Answer):
    forward: Formula | None
    backward: Formula | None
    update: Formula | None = Field(None, description="the update step only: the optimizer's rule")


class JacobianRef(Answer):
    """Where a softmax backward step's Jacobian is (GET .../jacobian)."""

    kind: Literal["attention", "output"]
    layer: int | None = Field(None, description="attention only")
    n_head: int | None = Field(None, description="attention only")
    T: int


class ParamRow(Answer):
    name: str
    shape: list[int]
    grad_norm: float | None
    weight_rms: float | None
    update_rms: float | None
    update_ratio: float | None = Field(description="RMS(ΔW)/RMS(W)")


class LineSearch(Answer):
    eta: list[float] = Field(description="step sizes along −g")
    loss: list[float | None] = Field(description="loss(W − η·g), W all the parameters (null: not finite)")
    first_order: list[float | None] = Field(description="loss − η‖g‖²")
    grad_norm_sq: float | None


class UpdateStep(Answer):
    """The update step's own fields."""

    optimizer: dict[str, str | float]
    optimizer_label: str
    loss_before: float | None
    loss_after: float | None
    grad_norm: float | None
    train_steps: int
    params: list[ParamRow]
    shown: str = Field(description="the parameter whose ΔW the figures show (GET .../update?param= for another)")
    line_search: LineSearch | None = Field(description="SGD only")
    skipped: bool | None = Field(None, description="present (true) when the dynamic loss scaler skipped it: ΔW = 0")


class StepView(StepSummary):
    """GET .../steps/{index}: one step's explanation, formulas, tensors, figures and check."""

    kind: str = Field(description="the op's kind (linear, softmax, rmsnorm, ...)")
    explanation: str
    formula: Formulas
    shapes: dict[str, list[int]] = Field(description="shape of every tensor the step reads and writes")
    figures: list[FigureEntry]
    gradcheck: StepGradCheck
    jacobian: JacobianRef | None = Field(description="a softmax backward step's Jacobian, or null")
    warnings: list[str] = Field(description="a failed check, non-finite values, a softmax identity off")
    update: UpdateStep | None = Field(None, description="the update step only")


class StepCheckAnswer(Answer):
    """GET .../steps/{index}/check: the step view's badge and its failed-check warning."""

    index: int
    gradcheck: StepGradCheck
    warning: str | None = Field(description="the step view's failed-check warning (null: it passed, or sealed)")


class OneHead(Answer):
    count: int
    shape: list[int]
    head: int


class HeadView(Answer):
    """GET .../steps/{index}/head: one attention head of a grid, every value."""

    index: int
    seq: int
    head: int
    grid: str = Field(description="the id of the step's head grid it enlarges")
    id: str
    title: str
    role: str
    figure: PlotlyFigure = Field(description=PLOTLY)
    table: Table | None
    note: str | None
    heads: OneHead
    download: str | None = Field(None, description="the URL of the whole tensor as .npy")
    stats: TensorStats | None = Field(None, description="the whole tensor's numbers (every head)")


class JacobianView(Answer):
    """GET .../jacobian: J = diag(p) − ppᵀ of one softmax row and the chain-rule check
    J·dL/dp == the recorded gradient."""

    kind: Literal["attention", "output"]
    layer: int | Literal["output"]
    head: int | None = Field(description="attention only")
    seq: int
    pos: int
    labels: list[str] = Field(description="the keys (attention) or tokens (output) of the row shown")
    p: list[float | None] = Field(description="the softmax row")
    dprobs: list[float | None] = Field(description="dL/dp")
    chain: list[float | None] = Field(description="J·dL/dp")
    sealed: bool = Field(description="a quiz's, before its answer: the fields below marked so are absent")
    recorded: list[float | None] = Field(None, description="the recorded dL/dscores or dL/dlogits (absent: sealed)")
    max_abs_error: float | None = Field(None, description="absent: sealed")
    max_rel_error: float | None = Field(None, description="absent: sealed")
    ok: bool = Field(None, description="the chain rule holds (absent: sealed)")
    figure: PlotlyFigure = Field(description=PLOTLY)
    vectors_figure: PlotlyFigure = Field(None, description=PLOTLY + " (absent: sealed)")
    note: str
    indices: list[int] = Field(None, description="output only: the token ids shown")
    target: int = Field(None, description="output only: the target token id")


class TensorJSON(Answer):
    """GET .../tensors/{name}?format=json."""

    name: str
    grad: bool = Field(description="the gradient dL/d(name) rather than the value")
    shape: list[int]
    dtype: str
    data: Any = Field(description="nested lists of the values (null: not finite)")
