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


class ParamUpdate(Answer):
    """GET .../update?param=: ΔW beside its gradient."""

    param: str
    figures: list[FigureEntry]
