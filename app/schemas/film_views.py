"""The answers of the film's own API (app/routes/film.py): the attention frames on the probe sequence
and which gradients build the head at a step (docs/film.md)."""

from __future__ import annotations

from pydantic import Field

from app.schemas.common import Answer


class Probe(Answer):
    period: int = Field(description="the repeated segment's length (the plan's probe_period)")
    tokens: list[int] = Field(description="the probe sequence's inputs: the first of the sequences the scores read")
    labels: list[str] = Field(description="each token as text")


class FramesAnswer(Answer):
    """GET /api/runs/{name}/attention: every head's attention on the probe sequence at the recorded steps."""

    name: str
    probe: Probe
    levels: int = Field(description="a probability p is kept as round(p × levels)")
    n_layer: int
    n_head: int
    seq_len: int
    step: list[int] = Field(description="the steps recorded in [start, stop), rising")
    probs: list[list[list[list[int]]]] = Field(
        description="(frame, layer, head, T (T + 1) / 2): the causal lower triangle, row q holding keys 0..q"
    )


class WriteMeasure(Answer):
    share: float = Field(description="⟨G_c, G⟩ / ‖G‖²: the part's share of the whole gradient (they sum to 1)")
    cosine_with_change: float = Field(description="cosine of −G_c with the weight's change over the next steps")


class Measured(Answer):
    cosine_with_change: float = Field(description="cosine of the whole −G with the weight's change")
    writes: dict[str, WriteMeasure] = Field(description="by write of the residual stream: embedding, L0.head0, ...")


class ProjectionMeasures(Answer):
    one_step: Measured = Field(description="step's own gradient (one batch)")
    summed: Measured = Field(description="the gradients of the `ahead` steps summed, each at its own weights")


class CompositionAnswer(Answer):
    """GET /api/runs/{name}/composition: layer's dL/dW_Q and dL/dW_K split by the writes they read."""

    name: str
    step: int
    layer: int
    ahead: int = Field(description="the steps after `step` whose weights' change the parts are measured against")
    projections: dict[str, ProjectionMeasures] = Field(description="wq and wk")
    exact: bool = Field(description="the replay reached the recorded weights at step + ahead bit for bit")
    replayed: int = Field(description="training steps replayed from the checkpoint before step to reach it")
    seconds: float = Field(description="the wall time the answer took when first made")
    cached: bool = Field(description="answered from the cache (the same question asked before)")
    previous: list[list[float]] = Field(
        description="(layer, head): the previous-token score at step of the heads before"
    )
