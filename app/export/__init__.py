"""`xt export`: a walkthrough or a lesson as files any static host serves (docs/export.md).

A trace is a pure function of its spec and every view of it is JSON the page already draws, so
the answers can be computed once, by the app itself (app.export.answers drives the real routes in
process), and written next to the page (app.export.page): a directory, or one HTML file that opens
from file:// with the network off. A quiz is exported sealed (app.export.sealed). The output is
deterministic: the same spec gives byte-identical files (no dates, sorted keys, gzip mtime 0).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from app.export import film, page, run_lesson
from app.export.answers import MAX_JACOBIAN_ROWS, MAX_SEQS, AppAnswers, Collected, ExportError, Progress, collect
from app.export.keys import answer_key

__all__ = ["MAX_JACOBIAN_ROWS", "MAX_SEQS", "ExportError", "Exported", "export"]

T = TypeVar("T")
FULL_APP = "the full app (`make run` in a checkout of xt)"


@dataclass
class Exported:
    trace_id: str
    steps: int  # the walkthrough's steps (the timeline)
    answers: int  # answers written
    left_out: list[str] = field(default_factory=list)
    html: str = ""  # the page (the single file's, when one was asked for)
    films: list[film.FilmExported] = field(default_factory=list)  # the films the directory carries


def app_client(settings=None):
    """The app, driven in process, without a server's warm-up (a few seconds of batch work: its
    first requests load what they need). A sealed quiz asks as a new learner for every probe and
    answer (app.export.sealed): the identities one address may get are not bounded here."""
    from dataclasses import replace

    from fastapi.testclient import TestClient

    from app.main import create_app
    from app.settings import get_settings

    settings = replace(settings or get_settings(), voters_per_address=1 << 30, quiz_probes_per_address=1 << 30)
    return TestClient(create_app(settings, warm_up=False), base_url="http://127.0.0.1")


def _note(collected: Collected, quiz: bool) -> str:
    parts = ["A static export of xt, computed once by the app's own code."]
    if collected.left_out:
        parts.append(f"Not in it: {'; '.join(collected.left_out)}.")
    if quiz:
        parts.append("The quiz is sealed: your browser decrypts its verdict once you answer.")
    parts.append(f"New text, training and classes need {FULL_APP}.")
    return " ".join(parts)


def _lesson(client, name: str) -> dict:
    response = client.get(f"/api/lessons/{name}")
    if response.status_code != 200:
        raise ExportError(response.json().get("detail", f"no lesson named {name!r}"))
    lesson = response.json()
    if lesson.get("run"):  # its stops are on the film and on several steps' walk pages (export_run_lesson)
        raise ExportError(f"lesson {name} is about the recorded run {lesson['run']}: not one walkthrough")
    return lesson


def _add_lessons(client, collected: Collected, only: str | None, handed_over: bool) -> None:
    """The lessons of this walkthrough (only `only`, for a lesson's export) and their list; a
    trace handed over (a notebook's) is no lesson's: the catalogue (seconds to check) is not read."""
    entries = [] if handed_over else AppAnswers(client).get("/api/lessons", keep=False)["lessons"]
    mine = [e for e in entries if e["trace_id"] == collected.trace_id and only in (None, e["name"])]
    for entry in mine:
        AppAnswers(client, collected).get(f"/api/lessons/{entry['name']}")
    collected.answers[answer_key("/api/lessons")] = json.dumps({"lessons": mine}, sort_keys=True).encode()


def collect_walk(
    client,
    spec: dict | None,
    lesson: str | None,
    progress: Progress | None,
    lang="en",
    max_seqs: int = MAX_SEQS,
    handed_over: bool = False,
) -> tuple[Collected, dict]:
    """The answers and the page's manifest of `spec` or of the lesson named `lesson`, in `lang`
    (the batch's first `max_seqs` sequences)."""
    lesson_json = None if lesson is None else _lesson(client, lesson)
    spec = spec if lesson_json is None else lesson_json["spec"]
    steps = None if lesson_json is None else [s["index"] for s in lesson_json["steps"]]
    collected = collect(client, spec, steps, progress, lang, max_seqs)
    _add_lessons(client, collected, lesson, handed_over)
    quiz = collected.summary["spec"].get("quiz") is not None
    if quiz:
        from app.export import sealed

        sealed.seal(client, collected)
    first = steps[0] if steps else 0
    # `steps`: the steps whose views it holds (null: every one), so the page never asks the host
    # for another (a prefetch of the next step: a 404 in the console of a lesson's export)
    manifest = {"trace": collected.trace_id, "lesson": lesson, "quiz": quiz, "step": first, "steps": steps}
    return collected, manifest


def export(
    spec: dict | None = None,
    lesson: str | None = None,
    out: Path | None = None,
    single: Path | None = None,
    progress: Progress | None = None,
    settings=None,
    want_html: bool = False,
    trace=None,
    tensors: bool = False,
    lang: str = "en",
    films: dict[str, list[int] | None] | None = None,
) -> Exported:
    """Writes the export of `spec` (or of the lesson named `lesson`) to the directory `out`
    and/or the single HTML file `single`; `want_html` keeps the single file's page in the answer.
    `trace`: the trace of `spec` already built (a notebook's, app.notebook), used as it is;
    `tensors`: the directory also holds every tensor a step names, and its gradient, as .npy;
    `lang`: the page's language (app.words.LANGUAGES), its catalogue carried in the page;
    `films`: the runs whose films the directory carries (app.export.film.carry_film), each with the
    steps whose walkthroughs it holds (None: the run's checkpoints). A trace that is a run's step
    carries its run's film unasked, no other step's walkthrough in it (its own: this page)."""
    if (spec is None) == (lesson is None):
        raise ExportError("export one thing: a spec or a lesson")
    check_language(lang)
    with app_client(settings) as client:  # one event loop for every request (and the app's lifespan)
        about_run = None if lesson is None else run_lesson.run_lesson(client, lesson, lang)
        if about_run is not None:  # the run's film and its steps' walkthroughs, the lesson playing on each
            carried = run_lesson.export_run_lesson(client, about_run, out, single, progress, lang)
            steps = len(about_run["steps"])
            return Exported(about_run["trace_id"], steps, carried.answers, carried.left_out, films=[carried])
        if trace is not None:
            _hand_over(client, spec, trace)
        collected = collect_walk(client, spec, lesson, progress, lang, handed_over=trace is not None)
        return _write(client, *collected, out, single, want_html, tensors, films)


def check_language(lang: str) -> None:
    from app.words import LANGUAGES

    if lang not in LANGUAGES:
        raise ExportError(f"no language {lang!r}: xt speaks {', '.join(LANGUAGES)}")


def _write(client, collected: Collected, manifest: dict, out, single, want_html, tensors, films=None) -> Exported:
    static_dir = client.app.state.settings.static_dir
    carried = film.carried_films(collected.summary, films)
    if carried and single is not None:
        collected.left_out.append(f"the film of the run {', '.join(carried)} (an export as a directory carries it)")
    note = _note(collected, manifest["quiz"])

    def render(mode: str) -> str:
        chosen = {} if collected.lang == "en" else {"lang": collected.lang}  # English: the page as it was
        query = collected.summary["query"] | chosen
        pages = {run: film.film_page_name(run) for run in carried} if mode == "files" else {}
        shown = manifest | {"answers": mode, "films": pages}
        return page.render(client, query, manifest["step"], shown, note, films=pages)

    exported = Exported(collected.trace_id, len(collected.summary["steps"]), len(collected.answers), collected.left_out)
    if out is not None:
        arrays = _tensors(client, collected) if tensors else {}

        def write(staging: Path) -> None:
            _write_directory(staging, render("files"), static_dir, collected.answers, arrays, collected.lang)
            for run, (steps, opened) in carried.items():
                exported.films.append(film.carry_film(client, run, staging, collected.lang, steps, opened))

        replaced(Path(out), write)
    if single is not None or want_html:
        exported.html = page.single_file(render("inline"), static_dir, collected.answers)
    if single is not None:
        Path(single).write_text(exported.html, encoding="utf-8")
    return exported


def _hand_over(client, spec: dict, trace) -> None:
    """The app's store holds `trace` as the trace of `spec`: the export shows it, never a rebuild."""
    from app.spec import TraceSpec, resolve

    settings = client.app.state.settings
    client.app.state.services.store.put(resolve(TraceSpec.model_validate(spec), settings), trace)


def _tensors(client, collected: Collected) -> dict[str, bytes]:
    """tensors/<name>.npy and tensors/<name>.grad.npy of every tensor the exported steps name
    (GET .../tensors/{name}: the app's own .npy)."""
    names: set[str] = set()
    for key, body in collected.answers.items():
        if key.startswith("trace/steps/") and key.endswith("?seq=0"):
            names |= set(json.loads(body).get("shapes", {}))
    arrays = {}
    for name in sorted(names):
        for grad in (False, True):
            response = client.get(f"/api/traces/{collected.trace_id}/tensors/{name}?grad={str(grad).lower()}")
            if response.status_code == 200:  # a tensor without a gradient (the token ids) has none
                arrays[f"{name}{'.grad' if grad else ''}.npy"] = response.content
    return arrays


def _write_directory(
    out: Path, base: str, static_dir: Path, answers: dict[str, bytes], arrays: dict, lang: str = "en"
) -> None:
    page.write_directory(out, base, static_dir, answers, lang)
    if arrays:
        (out / "tensors").mkdir()
        for name, data in arrays.items():
            (out / "tensors" / name).write_bytes(data)


def replaced(out: Path, write: Callable[[Path], T]) -> T:
    """`write(staging)` beside `out`, then swapped in: an old export's files never linger."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        written = write(staging)
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)
