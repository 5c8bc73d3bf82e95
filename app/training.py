"""Training from the page: the spec's optimizer as a canonical dict, N deterministic training
steps on the spec's own batch before the recorded step, and their live progress.

Every training step uses the spec's own batch (its text or token rows): the model learns to
predict that text, and the loss curve shows it doing so ("overfit one batch", the first sanity
check of any training loop). Same spec, same bits: nothing here draws random numbers.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from app.models import load_checkpoint
from xt_core.config import Config
from xt_core.model import init_params
from xt_core.optim import OPTIMIZERS, make_optimizer, optimizer_dict
from xt_core.trace import Trace
from xt_core.train import train, train_step

# Optimizer fields as flat /walk query keys (optimizer=adamw&lr=0.003); none is a config field.
OPTIMIZER_FIELDS = ("lr", "momentum", "weight_decay", "beta1", "beta2", "eps")
# What "train N steps" uses when the spec names no optimizer.
DEFAULT_OPTIMIZER = {"name": "adamw", "lr": 3e-3}
# xt's defaults where they differ from the optimizer classes' (torch's): AdamW's lr 1e-3 is
# tuned for large models; 3e-3 trains the small demo models in tens of steps.
APP_DEFAULTS = {"adamw": {"lr": DEFAULT_OPTIMIZER["lr"]}}


class OptimizerFieldError(ValueError):
    """A bad optimizer field: `field` is its name within the optimizer object."""

    def __init__(self, field: str, msg: str):
        super().__init__(msg)
        self.field = field
        self.msg = msg


def canonical_optimizer(raw: dict | None, train_steps: int) -> dict | None:
    """The optimizer with every field filled in (floats, `name` first), or None for a trace
    without an update step. Training steps without an optimizer use DEFAULT_OPTIMIZER."""
    if raw is None:
        if not train_steps:
            return None
        raw = DEFAULT_OPTIMIZER
    name = raw.get("name")
    if name not in OPTIMIZERS:
        raise OptimizerFieldError("name", f'optimizer name must be "sgd" or "adamw", got {name!r}')
    known = [f for f in OPTIMIZERS[name].__dataclass_fields__ if f != "name"]
    for field in raw:
        if field != "name" and field not in known:
            raise OptimizerFieldError(field, f"{name} has no field {field!r}; its fields: {', '.join(known)}")
    try:
        optimizer = make_optimizer({**APP_DEFAULTS.get(name, {}), **raw})
    except ValueError as exc:
        message = str(exc)
        field = message.split(" ", 1)[0]
        raise OptimizerFieldError(field if field in known else "name", message) from None
    values = optimizer_dict(optimizer)
    return {"name": name, **{k: float(values[k]) for k in known}}


def describe_optimizer(optimizer: dict | None) -> str:
    """ "AdamW, lr 0.003" for the page."""
    if optimizer is None:
        return "none (forward and backward only)"
    label = {"adamw": "AdamW", "sgd": "SGD"}[optimizer["name"]]
    extras = [f"{k} {optimizer[k]:g}" for k in ("momentum", "weight_decay") if optimizer.get(k)]
    return ", ".join([f"{label}, lr {optimizer['lr']:g}", *extras])


def train_work(cfg: Config, n_tokens: int, steps: int) -> int:
    """A cost estimate: each step touches every parameter once per position."""
    return steps * cfg.n_params() * n_tokens


def max_steps_within(cfg: Config, n_tokens: int, budget: int) -> int:
    return budget // max(1, cfg.n_params() * n_tokens)


def run(
    cfg: Config,
    params: dict[str, np.ndarray],
    inputs: np.ndarray,
    targets: np.ndarray,
    optimizer: dict,
    steps: int,
    progress: Callable[[int, float], None] | None = None,
    **step_kwargs,
) -> Trace:
    """`steps` optimizer steps on the batch, then the recorded training step (its last
    record is the update; step_kwargs, e.g. bug-lab faults, apply to it alone). The
    trace's train_losses hold the loss of each earlier step."""
    opt = make_optimizer(optimizer)
    params, state, losses = train(cfg, params, opt, itertools.repeat((inputs, targets)), steps, progress)
    trace = train_step(cfg, params, inputs, targets, opt, state, **step_kwargs)
    trace.train_losses = [float(x) for x in losses]
    return trace


def initial_params(spec) -> dict[str, np.ndarray]:
    """The weights a spec (app.spec.ResolvedSpec) starts from: its checkpoint's, in the
    spec's dtype (a copy: the cached checkpoint is shared), or a seeded random init."""
    dtype = np.dtype(spec.dtype)
    if spec.checkpoint is None:
        return init_params(spec.cfg, seed=spec.seed, dtype=dtype)
    checkpoint = load_checkpoint(spec.checkpoint)
    return {name: np.array(value, dtype=dtype) for name, value in checkpoint.params.items()}


def build(spec, params: dict[str, np.ndarray], progress: TrainingProgress | None = None, **step_kwargs) -> Trace:
    """A spec's training step, reporting the training before it to `progress`."""
    report = progress.reporter(spec.id, spec.train_steps) if progress is not None and spec.train_steps else None
    try:
        trace = run(
            spec.cfg, params, spec.inputs, spec.targets, spec.optimizer, spec.train_steps, report, **step_kwargs
        )
    except BaseException:
        if report is not None:
            progress.finish(spec.id, failed=True)
        raise
    if report is not None:
        progress.finish(spec.id)
    return trace


def update_nbytes(trace: Trace) -> int:
    """Bytes the update holds beyond Trace.nbytes(): new weights, ΔW and optimizer state."""
    update = trace.update
    if update is None:
        return 0
    arrays = list(update.params.values()) + [u.delta for u in update.per_param.values()]
    arrays += [v for slot in update.state.values() for v in slot.values() if isinstance(v, np.ndarray)]
    return sum(a.nbytes for a in arrays)


class TrainingProgress:
    """Trainings in flight (and the last few finished), by trace id: what the walk page
    polls while its POST /api/traces is busy training. Written from worker threads."""

    KEEP_FINISHED = 256

    def __init__(self):
        self._runs: OrderedDict[str, dict] = OrderedDict()
        self._lock = threading.Lock()

    def reporter(self, trace_id: str, total: int) -> Callable[[int, float], None]:
        started = time.monotonic()
        with self._lock:
            self._runs[trace_id] = {"state": "training", "done": 0, "total": total, "loss": None, "seconds": 0.0}
            self._runs.move_to_end(trace_id)

        def report(step: int, loss: float) -> None:
            with self._lock:
                run = self._runs.get(trace_id)
                if run is not None:
                    run.update(done=step + 1, loss=float(loss), seconds=round(time.monotonic() - started, 2))

        return report

    def finish(self, trace_id: str, failed: bool = False) -> None:
        with self._lock:
            run = self._runs.get(trace_id)
            if run is not None:
                run["state"] = "failed" if failed else "done"
            while len(self._runs) > self.KEEP_FINISHED:
                oldest = next(iter(self._runs))
                if self._runs[oldest]["state"] == "training":
                    break
                self._runs.popitem(last=False)

    def get(self, trace_id: str) -> dict | None:
        with self._lock:
            run = self._runs.get(trace_id)
            return dict(run) if run is not None else None
