"""A recorded run's step as a spec: {"run": NAME, "run_step": s} (or /walk?run=NAME&run_step=s) opens
step s of a run in settings.runs_dir in the walkthrough like any other trace. Its trace is rebuilt
from the run's last checkpoint at or before s (xt_core.film.rebuild: the recorded training's bits),
its batch is the run's batch of step s, its update the run's optimizer at step s. The run fixes every
other field: one given must hold the run's own value (the page posts its canonical spec back), and
`run_digest`, if given, the digest of the run's weights before the step (a page of a run recorded
again since is refused, never shown another run's step)."""

from __future__ import annotations

from app.errors import SpecError, check_between
from app.films.runs import RunNotOpened, open_run
from app.settings import Settings
from app.spec.resolve import RecordedStep, ResolvedSpec, check_build_bytes, check_trace_bytes, spec_id
from app.spec.schema import TraceSpec
from app.spec.training import canonical_optimizer
from app.words.said import Said
from xt_core import Config
from xt_core.film.files import Run
from xt_core.film.rebuild import batch_at, replayed_steps
from xt_core.lab.tasks import TASKS
from xt_core.training.optim import optimizer_dict

RUN_FIELDS = ("run", "run_step", "run_digest")


def is_run_step(spec: TraceSpec) -> bool:
    return any(getattr(spec, field) is not None for field in RUN_FIELDS)


def resolve_run_step(spec: TraceSpec, settings: Settings) -> ResolvedSpec:
    """The spec of a run's step, checked: the run known and readable, the step within it, every
    other field given at the run's own value."""
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
    canonical, tokenizer = _canonical(run, spec.run, step)
    _check_given(spec, canonical, run.cfg)
    inputs, targets = batch_at(run, step)
    n_seq, T = inputs.shape
    replayed = replayed_steps(run, step)
    check_trace_bytes(run.cfg, n_seq, T, "float32", settings)
    optimizer = canonical["optimizer"]
    check_build_bytes(run.cfg, n_seq, T, "float32", replayed, optimizer, False, settings, ("body", "run_step"))
    recorded = RecordedStep(run.folder, step, replayed)
    return ResolvedSpec(
        spec_id(canonical), canonical, run.cfg, tokenizer, inputs, targets, run.plan.seed, "float32",
        optimizer=optimizer, run=recorded,
    )  # fmt: skip


def _canonical(run: Run, name: str, step: int):
    """(the canonical spec of the run's step, the run task's tokenizer)."""
    _, tokenizer, _ = TASKS[run.plan.task].setup(batch=1, seed=0)
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
        "optimizer": canonical_optimizer(optimizer_dict(run.plan.optimizer_at(step)), 0),
        "train_steps": 0,  # no steps on this batch before it: the run's own training led to it
        "run": name,
        "run_step": step,
        "run_digest": f"{int(run.log.digest[step]):016x}",  # the weights': a run recorded again is another trace
    }
    return canonical, tokenizer


def _check_given(spec: TraceSpec, canonical: dict, cfg: Config) -> None:
    """Every field the spec gives besides run and run_step at the run's own value (SpecError naming
    the first that is not; run_digest: the run was recorded again)."""
    for field in sorted(spec.model_fields_set - {"run", "run_step"}):
        value = getattr(spec, field)
        if field == "config":
            same = value is None or Config.from_dict({**cfg.to_dict(), **value.model_dump(exclude_none=True)}) == cfg
        elif field == "optimizer":
            same = value is None or canonical_optimizer(value, 0) == canonical["optimizer"]
        else:
            same = value == canonical.get(field)
        if field == "run_digest" and not same:
            raise SpecError(("body", field), Said("film-error-run-changed", run=spec.run, step=spec.run_step))
        if not same:
            raise SpecError(("body", field), Said("film-error-run-alone", field=field))
