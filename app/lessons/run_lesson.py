"""A lesson about a recorded run (`run = NAME` in place of `[spec]`; docs/lessons.md): its stops are
the run's film at a step (`film = S`: the loss and score curves, /film?run=NAME&step=S) or an op of
one of its steps' walkthroughs (`run_step = S`, name, phase: the spec {"run": NAME, "run_step": S}).
Checked as a walkthrough lesson is (app.lessons.catalogue), each walkthrough stop against the trace
of its run step (built once per step), and its claims about the run against the run
(app.lessons.run_claims). Each stop carries the page it plays on (`url`) and, on a walkthrough, its
trace's id, so the player (static/js/class/lesson.js) knows when a stop takes it to another page."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlencode

from app.films.runs import DEMO_RUNS, RunNotOpened, open_run, run_names
from app.lessons import catalogue as cat
from app.lessons import claims, run_claims, run_schema, sentences
from app.lessons.schema import LessonFile
from app.settings import Settings
from app.spec import spec_to_query
from app.steps.context import TraceContext
from xt_core.film.files import Run


class RunAbsent(cat.LessonError):
    """The lesson's run is not among this server's runs (settings.runs_dir): the server leaves the
    lesson out quietly (it offers other runs, or none: `xt serve --demo` offers the shipped one)."""


def _run(path: Path, lesson: LessonFile, settings: Settings) -> Run:
    if lesson.run not in run_names(settings):
        where = f"run: no recorded run {lesson.run!r} in {settings.runs_dir} (XT_RUNS_DIR, xt serve --runs DIR)"
        raise RunAbsent(path, [where])
    try:
        return open_run(settings, lesson.run)
    except RunNotOpened as exc:
        raise cat.LessonError(path, [f"run: {exc.said.text(cat.LOG)}"]) from None


def _contexts(path: Path, lesson: LessonFile, run: Run, settings: Settings, trace_for) -> dict[int, TraceContext]:
    """The trace of each run step a stop opens, by step (each built once)."""
    contexts, problems = {}, []
    for i, step in enumerate(lesson.steps):
        if step.run_step is None or step.run_step in contexts:
            continue
        if step.run_step >= run.plan.steps:
            problems.append(f"steps[{i}].run_step: {step.run_step} is past the run's last step {run.plan.steps - 1}")
            continue
        spec = cat.resolve_spec(path, {"run": lesson.run, "run_step": step.run_step}, settings)
        contexts[step.run_step] = TraceContext(spec, trace_for(spec), settings)
    if problems:
        raise cat.LessonError(path, problems)
    if not contexts:
        raise cat.LessonError(path, ["steps: a run lesson opens at least one of the run's steps (run_step = S)"])
    return contexts


def _stop(lesson: LessonFile, run: Run, step, contexts: dict[int, TraceContext]) -> dict:
    """A stop as the page plays it: a film stop, or a walkthrough stop (app.lessons.catalogue's)."""
    if step.film is not None:
        if step.film >= run.plan.steps:
            raise cat.geometry.AnnotationError(f"film: {step.film} is past the run's last step {run.plan.steps - 1}")
        url = "/film?" + urlencode({"run": lesson.run, "step": str(step.film)})
        return {
            "index": None,
            "name": None,
            "phase": None,
            "title": "",
            "annotations": [],
            "film": step.film,
            "run_step": None,
            "trace_id": None,
            "url": url,
        }
    ctx = contexts[step.run_step]
    out = cat.check_step(ctx, step)
    query = spec_to_query(ctx.spec.canonical) | {"step": str(out["index"] + 1)}
    return out | {"film": None, "run_step": step.run_step, "trace_id": ctx.spec.id, "url": "/walk?" + urlencode(query)}


class _RunClaims(cat.ClaimsOf):
    """A run lesson's claims: about the run (its log, or its steps replayed), or about the trace of
    the run step its stop opens (as recorded: no faults, precision or loss scale)."""

    def __init__(self, path: Path, lesson: LessonFile, contexts: dict[int, TraceContext], run: Run, trace_for):
        super().__init__(path, lesson, next(iter(contexts.values())), trace_for)
        self.contexts, self.run = contexts, run

    def _one(self, claim, out: dict) -> claims.Measured:
        if isinstance(claim, run_schema.RUN_CLAIMS):
            return run_claims.measure(claim, self.run)
        if claim.faults is not None or claim.dtype is not None or claim.loss_scale is not None:
            raise claims.ClaimError(
                "a run step is the step as recorded: its claims name no faults, dtype or loss_scale"
            )
        return claims.measure(claim, claims.ClaimContext(self.contexts[out["run_step"]], out["index"]))

    def _against(self, claim, out: dict) -> sentences.Said:
        if isinstance(claim, run_schema.RUN_CLAIMS):
            return sentences.Said("lesson-against-run", {"run": self.lesson.run})
        return sentences.Said("lesson-against-run-step", {"run": self.lesson.run, "step": out["run_step"]})


def _mark(mark: run_schema.FilmMark, measured: dict[str, claims.Measured], lesson: LessonFile) -> dict:
    """A film mark as the page draws it: {"kind": "steps", "from", "to", "label"} (ValueError: why not)."""
    if mark.claim is None:
        first, last = mark.from_, mark.to
    else:
        if mark.claim not in measured:
            raise ValueError(f"claim: no claim named {mark.claim!r} in this lesson")
        kind = next(c.kind for step in lesson.steps for c in step.claims if c.id == mark.claim)
        if kind not in run_schema.MARKED_STEPS:
            raise ValueError(
                f"claim: a {kind} claim measures no steps (marks read {', '.join(run_schema.MARKED_STEPS)})"
            )
        first, last = (int(measured[mark.claim].values[key]) for key in run_schema.MARKED_STEPS[kind])
        if first < 0:
            raise ValueError(f"claim: {mark.claim!r} measured no step")
    return {"kind": "steps", "from": first, "to": last, "label": mark.label}


def _marks(path: Path, lesson: LessonFile, steps: list[dict], measured: dict, run: Run) -> None:
    """Each film stop's marks, resolved into its annotations (the steps a claim measured: after the claims)."""
    problems = []
    for i, (step, out) in enumerate(zip(lesson.steps, steps, strict=True)):
        for j, mark in enumerate(step.marks):
            try:
                out["annotations"].append(_mark(mark, measured, lesson))
            except ValueError as exc:
                problems.append(f"steps[{i}] ({cat.stop_label(step)}): marks[{j}].{exc}")
                continue
            if out["annotations"][-1]["to"] >= run.plan.steps:
                problems.append(f"steps[{i}] ({cat.stop_label(step)}): marks[{j}]: past the run's last step")
    if problems:
        raise cat.LessonError(path, problems)


def run_values(run: Run) -> dict[str, int | float]:
    """The numbers of the run a text may name beside its claims; uniform_loss is ln V, the loss of a
    uniform guess over the vocabulary (what a model that reads nothing of its context cannot beat
    when every token is uniform, as the induction task's are)."""
    plan = run.plan
    return {"run_steps": plan.steps, "batch": plan.batch, "warmup": plan.warmup, "lr": plan.lr,
            "steepest": int(run.steepest["step"]), "uniform_loss": math.log(run.cfg.vocab_size)}  # fmt: skip


def check(path: Path, lesson: LessonFile, settings: Settings, trace_for) -> cat.Lesson:
    """A run lesson checked: its run, every stop, every claim, its words in every language."""
    run = _run(path, lesson, settings)
    contexts = _contexts(path, lesson, run, settings, trace_for)
    steps, problems = [], []
    for i, step in enumerate(lesson.steps):
        try:
            steps.append(_stop(lesson, run, step, contexts))
        except cat.geometry.AnnotationError as exc:
            problems.append(f"steps[{i}] ({cat.stop_label(step)}): {exc}")
    if problems:
        raise cat.LessonError(path, problems)
    claims_of = _RunClaims(path, lesson, contexts, run, trace_for)
    measured = claims_of.check(steps)
    _marks(path, lesson, steps, measured, run)
    first = next(iter(contexts.values()))
    # one step's loss is not the run's: a run lesson names the run's losses (its claims)
    walkthrough = {key: value for key, value in cat.walkthrough_values(first).items() if key != "loss"}
    values = {**walkthrough, **run_values(run), **measured}
    checked = cat.finish(path, lesson, first.spec, steps, values, claims_of.said)
    checked.run = lesson.run
    return checked


def check_lesson(path: Path, settings: Settings, trace_for) -> cat.Lesson:
    """`xt lesson check`'s check: a run lesson whose run is not in settings.runs_dir is checked against
    the shipped runs (those `xt serve --demo` offers), saying so in a warning; RunAbsent if not there either."""
    try:
        return cat.check(path, settings, trace_for)
    except RunAbsent:
        if Path(settings.runs_dir).resolve() == DEMO_RUNS.resolve():
            raise
        shipped = replace(settings, runs_dir=DEMO_RUNS)
        lesson = cat.check(path, shipped, trace_for)
        lesson.warnings.append(f"its run is not in {settings.runs_dir}: checked against the shipped runs ({DEMO_RUNS})")
        return lesson
