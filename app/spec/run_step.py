"""A recorded run's step as a spec: {"run": NAME, "run_step": s} (or /walk?run=NAME&run_step=s) opens
step s of a run in settings.runs_dir in the walkthrough like any other trace. Its trace is rebuilt
from the run's last checkpoint at or before s (xt_core.film.rebuild: the recorded training's bits),
its batch is the run's batch of step s, its update the run's optimizer at step s. A run's step takes
no other field: the run fixes the model, the weights, the batch and the optimizer."""

from __future__ import annotations

from app.errors import SpecError, check_between
from app.films.runs import RunNotOpened, open_run
from app.settings import Settings
from app.spec.resolve import RecordedStep, ResolvedSpec, check_build_bytes, check_trace_bytes, spec_id
from app.spec.schema import TraceSpec
from app.spec.training import canonical_optimizer
from app.words.said import Said
from xt_core.film.rebuild import batch_at, replayed_steps
from xt_core.lab.tasks import TASKS
from xt_core.training.optim import optimizer_dict

RUN_FIELDS = ("run", "run_step")


def is_run_step(spec: TraceSpec) -> bool:
    return spec.run is not None or spec.run_step is not None


def resolve_run_step(spec: TraceSpec, settings: Settings) -> ResolvedSpec:
    """The spec of a run's step, checked: the run known and readable, the step within it, nothing else given."""
    others = sorted(spec.model_fields_set - {*RUN_FIELDS, "dtype"}) + (["dtype"] if spec.dtype != "float32" else [])
    if others:
        raise SpecError(("body", others[0]), Said("film-error-run-alone", field=others[0]))
    if spec.run is None:
        raise SpecError(("body", "run"), Said("film-error-run-missing"))
    try:
        run = open_run(settings, spec.run)
    except RunNotOpened as exc:
        raise SpecError(("body", "run"), exc.said) from None
    if spec.run_step is None:
        raise SpecError(("body", "run_step"), Said("film-error-run-step-missing", last=run.plan.steps - 1))
    step = spec.run_step
    check_between(("body", "run_step"), step, 0, run.plan.steps - 1)
    _, tokenizer, _ = TASKS[run.plan.task].setup(batch=1, seed=0)
    inputs, targets = batch_at(run, step)
    n_seq, T = inputs.shape
    optimizer = canonical_optimizer(optimizer_dict(run.plan.optimizer_at(step)), 0)
    replayed = replayed_steps(run, step)
    check_trace_bytes(run.cfg, n_seq, T, "float32", settings)
    check_build_bytes(run.cfg, n_seq, T, "float32", replayed, optimizer, False, settings, ("body", "run_step"))
    canonical = {
        "model": None,
        "config": run.cfg.to_dict(),
        "tokenizer": tokenizer.name,
        "seed": run.plan.seed,
        "text": None,
        "tokens": None,  # the run's batch of the step: the run names it
        "dtype": "float32",
        "faults": [],
        "fault_layer": None,
        "quiz": None,
        "optimizer": optimizer,
        "train_steps": 0,  # no steps on this batch before it: the run's own training led to it
        "run": spec.run,
        "run_step": step,
        "run_digest": f"{int(run.log.digest[step]):016x}",  # the weights': a run recorded again is another trace
    }
    recorded = RecordedStep(run.folder, step, replayed)
    return ResolvedSpec(
        spec_id(canonical), canonical, run.cfg, tokenizer, inputs, targets, run.plan.seed, "float32",
        optimizer=optimizer, run=recorded,
    )  # fmt: skip
