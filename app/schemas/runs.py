"""The answers of app/routes/runs.py: the recorded training runs (docs/film.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.errors import whole_number
from app.schemas.common import Answer
from xt_core.film.plan import MAX_DENSE


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


class RecordBody(BaseModel):
    """POST /api/runs: a run of a demo task recorded by the server (docs/film.md, "Recording from the page").
    Every limit is a setting (app/settings.py), checked before anything is written."""

    model_config = ConfigDict(extra="forbid")
    task: str = Field(max_length=64, description="a demo task, as `xt train --task` offers: induction, text, gpt2-text")
    steps: int = Field(description="training steps, 1 to max_record_steps (and within max_record_seconds' estimate)")
    warmup: int | None = Field(None, description="steps of linear learning-rate warm-up (default: steps / 15)")
    decay: Literal["constant", "cosine"] = Field("constant", description="the learning rate after warm-up")
    every: int | None = Field(
        None,
        description="a checkpoint every this many steps (default: steps / 4, or fewer if the run would pass its bound)",
    )
    dense: int = Field(1, ge=0, le=MAX_DENSE, description="checkpoints added where the loss fell fastest")
    seed: int = Field(0, ge=0, le=2**32 - 1, description="the initial weights' and the batches' seed")
    _integers = field_validator("steps", "warmup", "every", "dense", "seed", mode="before")(whole_number)


class RecordStarted(Answer):
    """POST /api/runs (202): the recording has started; poll `progress`, then open `film`."""

    name: str = Field(description="the run's name, made by the server")
    state: str = Field(description="queued: its first slice waits its turn in the build queue")
    task: str
    steps: int
    every: int = Field(description="a checkpoint every this many steps")
    warmup: int
    dense: int
    estimated_bytes: int = Field(description="the run's size on disk at most (within max_record_bytes)")
    estimated_seconds: float = Field(description="the cost model's estimate of its work (this machine: about a fifth)")
    progress: str = Field(description="GET it for where the recording stands")
    film: str = Field(description="the film page of the run, once it is done")


class RecordProgress(Answer):
    """GET /api/runs/{name}/progress."""

    name: str
    state: Literal["queued", "recording", "finishing", "done", "failed"]
    done: int = Field(description="training steps recorded")
    total: int
    loss: float | None = Field(description="the last step's loss")
    seconds: float = Field(description="since its first step")
    waiting: bool = Field(description="a slice waits its turn in the build queue")
    ahead: int = Field(description="builds that start before it")
    error: str | None = Field(description="why it failed")
