"""The answers of app/routes/training.py: a training run's progress, one parameter's update."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from app.schemas.common import Answer, FigureEntry


class Progress(Answer):
    """GET .../progress."""

    state: Literal["pending", "training", "done", "failed"]
    done: int = Field(description="training steps done")
    total: int | None
    loss: float | None = Field(description="the last training step's loss")
    seconds: float


class QueuePlace(Answer):
    """GET .../queue: where a trace's build waits (app.traces.admission)."""

    state: Literal["queued", "building", "idle"] = Field(description="idle: neither waiting nor being built")
    position: int | None = Field(description="1: the next build to start; null unless queued")
    ahead: int = Field(description="builds that start before it")
    ahead_seconds: float = Field(description="their estimated seconds, with the builds under way")
    seconds: float | None = Field(description="its own estimated seconds; null unless queued")
    waiting: int = Field(description="every build waiting")


class ParamUpdate(Answer):
    """GET .../update?param=: ΔW beside its gradient."""

    param: str
    figures: list[FigureEntry]
