"""The lessons of settings.lessons_dir, read and checked against the traces their specs build:
every step named exists (by recorded name and phase), every annotation fits its figure, every
claim holds (app.lessons.claims), every placeholder of the text names a measured value
(app.lessons.template), the spec is one the server accepts. Checked at startup (the sessions
router's lifespan), by `xt lesson check FILE`, and in `make test`.

A checked lesson is JSON-ready: each step carries its index in the walkthrough, its annotations
resolved into polygons (app.lessons.geometry), its claims with what they measured, and its text
filled from those measurements.
"""

from __future__ import annotations

import difflib
import math
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

from pydantic import ValidationError

import xt_core
from app import words
from app.errors import SpecError
from app.lessons import claims, geometry, sentences
from app.lessons import words as lesson_words
from app.lessons.schema import LessonFile, LessonStep
from app.settings import Settings
from app.spec import ResolvedSpec, TraceSpec, resolve, spec_to_query
from app.steps.context import TraceContext
from app.steps.titles import title

NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
SUGGESTED_STEPS = (8, 15)
# what a text names beside its claims: the batch, the loss, the quiz and the model's widths
WALKTHROUGH_VALUES = (
    "N", "T", "V", "loss", "quiz_probes",
    "n_embd", "ffn_hidden", "n_head", "n_kv_head", "kv_group", "head_dim", "q_dim", "kv_dim", "sqrt_head_dim",
)  # fmt: skip
LOG = "en"  # `xt lesson check` and the log speak English, as the CLI does
TraceFor = Callable[[ResolvedSpec], xt_core.Trace]


class LessonError(ValueError):
    """Everything wrong with one lesson file, each problem on its own line."""

    def __init__(self, path: Path, problems: list[str]):
        self.path, self.problems = path, problems
        super().__init__("\n".join(f"{path.name}: {p}" for p in problems))


@dataclass
class Lesson:
    """A checked lesson. `title`, `summary` and `steps` read in its first language (English when
    it has it); `texts` holds its words in each language it has (app.lessons.words), `said` each
    step's claims as sentences any language can put into words."""

    name: str
    title: str
    summary: str
    spec: ResolvedSpec
    steps: list[dict]
    warnings: list[str] = field(default_factory=list)
    texts: dict[str, dict] = field(default_factory=dict)
    said: list[list[tuple]] = field(default_factory=list)
    run: str | None = None  # a recorded run's lesson (app.lessons.run_lesson): `spec` is its first run step's
    # each walkthrough stop's step title by language (None: a film stop, titled by its words)
    titles: list[dict[str, str] | None] = field(default_factory=list)

    def language(self, lang: str) -> str:
        """The language the lesson answers in when asked for `lang`: that one if it has it, else its first."""
        return lang if lang in self.texts else next(iter(self.texts), words.DEFAULT)

    def in_language(self, lang: str) -> tuple[str, str, list[dict]]:
        """Title, summary and steps in `lang` (the lesson's first language if it has not that one)."""
        lang = self.language(lang)
        if lang not in self.texts:
            return self.title, self.summary, self.steps
        text = self.texts[lang]
        steps = [
            lesson_words.with_words(step, words_of_step, said, lang)
            for step, words_of_step, said in zip(self.steps, text["steps"], self.said, strict=True)
        ]
        if self.titles:  # a walkthrough stop's title is its step's, in `lang` (the page's own title of it)
            steps = [s if ti is None else s | {"title": ti[lang]} for s, ti in zip(steps, self.titles, strict=True)]
        return text["title"], text["summary"], steps

    def brief(self, lang: str = words.DEFAULT) -> dict:
        query = spec_to_query(self.spec.canonical)
        title, summary, _ = self.in_language(lang)
        return {
            "name": self.name,
            "title": title,
            "summary": summary,
            "lang": self.language(lang),
            "trace_id": self.spec.id,
            "buglab": bool(self.spec.faults),
            "steps": len(self.steps),
            "url": f"/lessons/{self.name}",
            "query": query,
        }

    def json(self, lang: str = words.DEFAULT) -> dict:
        run = {} if self.run is None else {"run": self.run}
        return {**self.brief(lang), "spec": self.spec.canonical, "steps": self.in_language(lang)[2], **run}

    def start_url(self, lang: str | None = None) -> str:
        """A run lesson's first page: its first stop's (the film's or a run step's walk page), playing it."""
        asked = "" if lang is None else f"&{urlencode({'lang': lang})}"
        return f"{self.steps[0]['url']}{asked}#lesson={self.name}"


def stop_label(step: LessonStep) -> str:
    """How a problem names a stop: its op and phase (a run step's: its step too), or its film step."""
    if step.film is not None:
        return f"film {step.film}"
    return (
        f"{step.name}, {step.phase}"
        if step.run_step is None
        else f"run step {step.run_step}: {step.name}, {step.phase}"
    )


def _loc(parts) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def read(path: Path) -> LessonFile:
    """The file as a LessonFile; LessonError naming the line (TOML) or the field (shape)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise LessonError(path, [f"cannot be read: {exc}"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise LessonError(path, [f"is not valid TOML: {exc}"]) from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise LessonError(path, ["is nested too deeply to read (arrays or tables within each other)"]) from None
    try:
        return LessonFile.model_validate(data)
    except ValidationError as exc:
        problems = [f"{_loc(e['loc']) or 'file'}: {e['msg']}" for e in exc.errors()]
        raise LessonError(path, problems) from None


def resolve_spec(path: Path, spec: dict, settings: Settings) -> ResolvedSpec:
    try:
        return resolve(TraceSpec.model_validate(spec), settings)
    except ValidationError as exc:
        raise LessonError(path, [f"spec.{_loc(e['loc'])}: {e['msg']}" for e in exc.errors()]) from None
    except SpecError as exc:
        where = _loc([p for p in exc.loc if p != "body"]) or "spec"
        raise LessonError(path, [f"spec.{where}: the server refuses this spec: {exc.msg}"]) from None


def _step_index(ctx: TraceContext, step: LessonStep) -> int:
    for record in ctx.trace.records:
        if record.name == step.name and record.phase == step.phase:
            return record.index
    same_phase = [r.name for r in ctx.trace.records if r.phase == step.phase]
    close = difflib.get_close_matches(step.name, same_phase, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else f"; {step.phase} steps are: {', '.join(same_phase)}"
    raise geometry.AnnotationError(f"no {step.phase} step named {step.name!r} in this lesson's walkthrough{hint}")


def check_step(ctx: TraceContext, step: LessonStep) -> dict:
    index = _step_index(ctx, step)
    figures = geometry.step_figures(ctx, index)
    annotations = []
    for i, note in enumerate(step.annotations):
        info = figures.get(note.figure)
        if info is None:
            known = ", ".join(figures) or "none"
            raise geometry.AnnotationError(
                f"annotations[{i}]: no figure {note.figure!r} on this step (its figures: {known})"
            )
        try:
            annotations.append(geometry.resolve(note, info, ctx.vocab))
        except geometry.AnnotationError as exc:
            raise geometry.AnnotationError(f"annotations[{i}] ({note.kind} on {note.figure}): {exc}") from None
    record = ctx.trace.records[index]
    return {
        "index": index,
        "name": step.name,
        "phase": step.phase,
        "title": title(record),
        "titles": {lang: title(record, lang) for lang in words.LANGUAGES},
        "annotations": annotations,
    }


def check(path: Path, settings: Settings, trace_for: TraceFor) -> Lesson:
    """One lesson file checked against its trace (built by trace_for); LessonError listing
    every problem found."""
    name = path.stem
    if not NAME.match(name):
        raise LessonError(
            path, [f"the file name {name!r} must be lowercase letters, digits and dashes (it is the lesson's name)"]
        )
    lesson = read(path)
    if lesson.run is not None:  # a recorded run's lesson: its stops open the run's film and steps
        from app.lessons import run_lesson  # it builds on this module

        return run_lesson.check(path, lesson, settings, trace_for)
    spec = resolve_spec(path, lesson.spec, settings)
    ctx = TraceContext(spec, trace_for(spec), settings)
    steps, problems = [], []
    for i, step in enumerate(lesson.steps):
        try:
            steps.append(check_step(ctx, step))
        except geometry.AnnotationError as exc:
            problems.append(f"steps[{i}] ({stop_label(step)}): {exc}")
    if problems:
        raise LessonError(path, problems)
    claims_of = ClaimsOf(path, lesson, ctx, trace_for)
    measured = claims_of.check(steps)
    return finish(path, lesson, spec, steps, {**walkthrough_values(ctx), **measured}, claims_of.said)


def finish(path: Path, lesson: LessonFile, spec: ResolvedSpec, steps: list[dict], values: dict, said) -> Lesson:
    """The checked lesson: its words in every language, filled from `values` (LessonError if one is missing)."""
    texts, problems = (
        lesson_words.from_file(lesson, steps, values)
        if lesson.title
        else lesson_words.from_catalogues(lesson.words, steps, values)
    )
    if problems:
        raise LessonError(path, problems)
    low, high = SUGGESTED_STEPS
    warnings = (
        [] if low <= len(steps) <= high else [f"{len(steps)} steps: a lesson is a path of {low}–{high} key steps"]
    )
    titles = [step.pop("titles", None) for step in steps]
    checked = Lesson(path.stem, "", "", spec, steps, warnings, texts, said, titles=titles)
    checked.title, checked.summary, checked.steps = checked.in_language(words.DEFAULT)
    return checked


class ClaimsOf:
    """Every claim of one lesson measured against the trace it is about: the lesson's own, or
    the variant of its spec with the claim's faults (each variant built once)."""

    def __init__(self, path: Path, lesson: LessonFile, ctx: TraceContext, trace_for: TraceFor):
        self.path, self.lesson, self.ctx, self.trace_for = path, lesson, ctx, trace_for
        self.variants: dict[str, TraceContext] = {}
        self.said: list[list[tuple]] = []  # each step's (claim, measured, against)

    def _context(self, claim) -> TraceContext:
        variant = {k: v for k, v in (("dtype", claim.dtype), ("loss_scale", claim.loss_scale)) if v is not None}
        if claim.faults is None:
            if self.lesson.spec.get("quiz") is not None:
                raise claims.ClaimError(
                    "a quiz lesson's claims name their faults (faults = [] for the correct backward): "
                    "a claim about the hidden fault's trace would give the answer away"
                )
            if not variant:
                return self.ctx
        drop = ("quiz", "faults", "fault_layer") if claim.faults is not None else ("quiz",)
        spec = {k: v for k, v in self.lesson.spec.items() if k not in drop} | variant
        if claim.faults is not None:
            spec["faults"] = list(claim.faults)
        if claim.fault_layer is not None:
            spec["fault_layer"] = claim.fault_layer
        try:
            resolved = resolve_spec(self.path, spec, self.ctx.settings)
        except LessonError as exc:
            raise claims.ClaimError("; ".join(exc.problems)) from None
        if resolved.id not in self.variants:
            self.variants[resolved.id] = TraceContext(resolved, self.trace_for(resolved), self.ctx.settings)
        return self.variants[resolved.id]

    def _one(self, claim, out: dict) -> claims.Measured:
        return claims.measure(claim, claims.ClaimContext(self._context(claim), out["index"]))

    def _against(self, claim, out: dict) -> sentences.Said:  # noqa: ARG002 (a run lesson's reads the stop)
        return sentences.against(claim)

    def check(self, steps: list[dict]) -> dict[str, claims.Measured]:
        """Each step's claims (JSON, into steps[i]["claims"]); the measured ones by id.
        LessonError naming the step, the claim and what was measured when one is false."""
        by_id: dict[str, claims.Measured] = {}
        problems = []
        for i, (step, out) in enumerate(zip(self.lesson.steps, steps, strict=True)):
            out["claims"], said = [], []
            self.said.append(said)
            for j, claim in enumerate(step.claims):
                where = f"steps[{i}] ({stop_label(step)}): claims[{j}] ({claim.kind}{_named(claim)})"
                try:
                    measured = self._one(claim, out)
                except claims.ClaimError as exc:
                    problems.append(f"{where}: {exc}")
                    continue
                against = self._against(claim, out)
                if not measured.ok:
                    problems.append(
                        f"{where} is false against {against.text(LOG)}: claimed {measured.claimed.text(LOG)}; "
                        f"{measured.measured.text(LOG)}"
                    )
                if claim.id in WALKTHROUGH_VALUES:
                    problems.append(f"{where}: {claim.id!r} names a number of the walkthrough: pick another name")
                if claim.id in by_id:
                    problems.append(f"{where}: another claim is named {claim.id!r} (a name is one claim)")
                if claim.id:
                    by_id[claim.id] = measured
                out["claims"].append(measured.json(claim, against))
                said.append((claim, measured, against))
        if problems:
            raise LessonError(self.path, problems)
        return by_id


def _named(claim) -> str:
    return f" {claim.id!r}" if claim.id else ""


def walkthrough_values(ctx: TraceContext) -> dict[str, float | int]:
    """The numbers of the walkthrough itself a lesson's text may name (app.lessons.template)."""
    targets, cfg = ctx.trace.targets, ctx.trace.cfg
    return {
        "N": int(targets.size),
        "T": int(targets.shape[1]),
        "V": int(cfg.vocab_size),
        "loss": float(ctx.trace.loss),
        "quiz_probes": ctx.settings.quiz_probes,
        "n_embd": int(cfg.n_embd),
        "ffn_hidden": int(cfg.ffn_hidden),
        "n_head": int(cfg.n_head),
        "n_kv_head": int(cfg.n_kv_head),
        "kv_group": int(cfg.kv_group),
        "head_dim": int(cfg.head_dim),
        "q_dim": int(cfg.n_head * cfg.head_dim),
        "kv_dim": int(cfg.n_kv_head * cfg.head_dim),
        "sqrt_head_dim": math.sqrt(cfg.head_dim),
    }
