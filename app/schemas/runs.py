"""The answers of app/routes/runs.py: the recorded training runs (docs/film.md)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from app.schemas.common import Answer


class RunEntry(Answer):
    name: str
    task: str
    steps: int = Field(description="training steps recorded")
    bytes: int = Field(description="the run's size on disk")


class RunListing(Answer):
    """GET /api/runs."""

    runs: list[RunEntry]


class Steepest(Answer):
    step: int = Field(description="where the loss, smoothed over `window` steps, fell fastest")
    drop: float = Field(description="mean loss of the window before it minus the window from it on")
    window: int


class Stretch(Answer):
    start: int
    stop: int
    stride: int


class RunAnswer(Answer):
    """GET /api/runs/{name}: the run's plan and a stretch of its steps (every list is by step)."""

    name: str
    plan: dict[str, Any] = Field(description="how it was trained and recorded (xt_core.film.plan.RunPlan)")
    config: dict[str, Any]
    params: list[str] = Field(description="the parameters, in the order of grad_norm's and update_norm's columns")
    checkpoints: list[int] = Field(
        description="the steps whose weights are kept: a step is rebuilt from the last before it"
    )
    dense: list[int] = Field(description="the checkpoints added where the loss fell fastest")
    steepest: Steepest
    bytes: int = Field(description="the run's size on disk")
    max_bytes: int = Field(description="its stated bound")
    shown: Stretch
    step: list[int] = Field(description="the steps shown: range(start, stop, stride)")
    loss: list[float | None]
    grad_norm: list[list[float | None]] = Field(description="(step, parameter): ||dL/dW||")
    update_norm: list[list[float | None]] = Field(description="(step, parameter): ||ΔW||")
    induction: list[list[list[float | None]]] = Field(description="(step, layer, head): the induction score")
    previous: list[list[list[float | None]]] = Field(description="(step, layer, head): the previous-token score")
