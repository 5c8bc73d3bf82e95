"""A recorded run's film exported (`xt export --run RUN`; docs/export.md, "A recorded run's film"):
the film page (GET /film?run=NAME rendered by the app, made static as the walk page is:
app.export.page) reading the run's answer (GET /api/runs/NAME, saved whole, as the app sent it: what
the page draws, and whatever the answer comes to hold), and the walkthroughs of at most
MAX_FILM_STEPS of the run's steps (its checkpoints unless told), each the walk page of
{"run": NAME, "run_step": S} exported as `xt export --spec` exports it, on the first STEP_SEQS
sequences of the step's batch. One directory, its pages side by side sharing static/:

    index.html                          the film (film-NAME.html when another export carries it)
    film-NAME-step-SSSSSS.html          the walkthrough of step S: its way back leads to the film at S
    static/                             the pages' JS and CSS, Plotly.js, Fluent
    answers/runs_2FNAME.json.gz         the run's answer
    answers/runs_2FNAME_2Fattention.json.gz   its attention frames (GET /api/runs/NAME/attention)
    answers/film-NAME-step-SSSSSS/      each walkthrough's answers (its manifest's `folder`)

A single file holds the film alone: no step's walkthrough opens from it, and the page says so.
A walkthrough or lesson whose trace is a run's step carries the run's film (carry_film, from
app.export.export): its "open this step" at that step leads back to the walkthrough itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

from app.export import page
from app.export.answers import AppAnswers, Collected, ExportError, Progress

_WALK_HREF = re.compile(r'href="/walk\?[^"]*"')
MAX_FILM_STEPS = 8  # the steps of a run an export of its film holds as walkthroughs
STEP_SEQS = 1  # the sequences of a step's batch its walkthrough holds (the film's attention draws the first)


@dataclass
class FilmExported:
    run: str
    page: str  # the film page's file name
    pages: dict[int, str]  # the steps that open from the film -> their walkthrough's page
    answers: int  # answers written, the walkthroughs' too
    left_out: list[str] = field(default_factory=list)


def film_page_name(run: str) -> str:
    """The film's page in an export that carries it beside its own page (index.html)."""
    return f"film-{run}.html"


def step_page_name(run: str, step: int) -> str:
    return f"film-{run}-step-{step:06d}.html"


def chosen_steps(run: dict, asked: list[int] | None) -> list[int]:
    """The steps whose walkthroughs the export holds: `asked`, or the run's checkpoints (spread
    evenly over them when there are more than MAX_FILM_STEPS); ExportError naming the bound broken."""
    last = run["plan"]["steps"] - 1
    if asked is None:
        marks = sorted(set(run["checkpoints"]))
        if len(marks) <= MAX_FILM_STEPS:
            return marks
        return sorted({marks[round(i * (len(marks) - 1) / (MAX_FILM_STEPS - 1))] for i in range(MAX_FILM_STEPS)})
    outside = [step for step in asked if not 0 <= step <= last]
    if outside:
        raise ExportError(f"--run-steps: step {outside[0]} is not in the run {run['name']} (steps 0 to {last})")
    chosen = sorted(set(asked))
    if len(chosen) > MAX_FILM_STEPS:
        raise ExportError(f"--run-steps: {len(chosen)} steps, over the limit of {MAX_FILM_STEPS} walkthroughs")
    return chosen


def run_answer(client, run: str, lang: str) -> tuple[dict, dict[str, bytes]]:
    """The run's answer (GET /api/runs/NAME, as the app sends it, kept by its key); the app's
    refusal (an unknown run: the runs there are) as an ExportError."""
    collected = Collected({}, lang=lang)
    answers = AppAnswers(client, collected)
    answer = answers.get(f"/api/runs/{run}")
    # the recorded attention frames the film plays while scrubbing (a run of format 1 has none: its 404 kept)
    answers.get(f"/api/runs/{run}/attention", refusable=True)
    return answer, collected.answers


def carry_film(
    client,
    run: str,
    out: Path,
    lang: str = "en",
    steps: list[int] | None = None,
    opened: dict[int, str] | None = None,
    name: str | None = None,
    progress: Progress | None = None,
    lesson: tuple[str, dict[str, bytes]] | None = None,
) -> FilmExported:
    """Writes the film of `run` into the export directory `out` as the page `name` (default
    film_page_name(run)), with the walkthroughs of `steps` (None: the run's checkpoints; []: none)
    beside it. `opened`: steps whose walkthroughs `out` already holds, by page (a walkthrough of a
    run's step: its own index.html); the film opens those too. `lesson`: (a run lesson's name, its
    answers as the pages read them: app.export.run_lesson), played on every page written."""
    answer, answers = run_answer(client, run, lang)
    played, lesson_answers = lesson or (None, {})
    answers |= lesson_answers
    name = name or film_page_name(run)
    pages = dict(opened or {})
    exported = FilmExported(run, name, pages, len(answers))
    for step in chosen_steps(answer, steps):
        if step not in pages:
            pages[step] = step_page_name(run, step)
            collected = _write_step(
                client, run, step, out, (lang, name, played, lesson_answers), _named(progress, step)
            )
            exported.answers += len(collected.answers)
            exported.left_out += [f"step {step}: {part}" for part in collected.left_out]
    static_dir = client.app.state.settings.static_dir
    note = _film_note(lang, run, pages, single=False)
    manifest = {"answers": "files", "film": _film_manifest(run, pages), "lesson": played}
    film_html = _film_page(client, run, lang, manifest, note)
    page.write_directory(out, film_html, static_dir, answers, lang, name=name)
    return exported


def _named(progress: Progress | None, step: int) -> Progress | None:
    if progress is None:
        return None
    return lambda done, total, what: progress(done, total, f"step {step}: {what}")


def _write_step(client, run: str, step: int, out: Path, page_of: tuple, progress: Progress | None) -> Collected:
    """The walkthrough of the run's `step` as the page step_page_name(run, step) of `out`; `page_of`:
    (its language, the film page its way back leads to, the run lesson it plays or None, and that
    lesson's answers); its answers."""
    from app.export import collect_walk
    from app.words import t

    lang, film, played, lesson_answers = page_of
    collected, manifest = collect_walk(client, {"run": run, "run_step": step}, None, progress, lang, STEP_SEQS)
    collected.answers |= lesson_answers  # the lesson as exported, over the server's (its URLs)
    stem = step_page_name(run, step).removesuffix(".html")
    manifest |= {"answers": "files", "folder": f"answers/{stem}", "films": {run: film}, "lesson": played}
    query = collected.summary["query"] | ({} if lang == "en" else {"lang": lang})
    note = t(lang, "film-export-step-note", run=run, step=step, seqs=STEP_SEQS)
    html = page.render(client, query, manifest["step"], manifest, note, films={run: film})
    static_dir = client.app.state.settings.static_dir
    page.write_directory(out, html, static_dir, collected.answers, lang, name=f"{stem}.html", folder=f"answers/{stem}")
    return collected


def _film_manifest(run: str, pages: dict[int, str]) -> dict:
    """#xt-export of a film page (static/js/film/exported.js reads `film`): no trace of its own."""
    return {"run": run, "pages": {str(step): pages[step] for step in sorted(pages)}}


def _film_page(client, run: str, lang: str, manifest: dict, note: str) -> str:
    query = {"run": run} | ({} if lang == "en" else {"lang": lang})
    response = client.get("/film?" + urlencode(query))
    if response.status_code != 200:
        raise ExportError(f"/film answered {response.status_code} for the run {run!r}")
    manifest = {"lesson": None, "quiz": False, "step": 0, "steps": [], "trace": None} | manifest
    # "open this step" before the script points it (film/exported.js): the step's page, or no link
    first = manifest["film"]["pages"].get("0")
    html = _WALK_HREF.sub(f'href="{first}"' if first else "", response.text)
    return page.made_static(client, html, manifest, note)


def _film_note(lang: str, run: str, pages: dict[int, str], single: bool) -> str:
    from app.words import t

    if single:
        return t(lang, "film-export-note-single", run=run)
    steps = ", ".join(str(step) for step in sorted(pages))
    return t(lang, "film-export-note", run=run, count=len(pages), steps=steps)


def export_film(
    run: str,
    out: Path | None = None,
    single: Path | None = None,
    steps: list[int] | None = None,
    progress: Progress | None = None,
    settings=None,
    lang: str = "en",
) -> FilmExported:
    """Writes the film of the run `run` (a name in settings.runs_dir) to the directory `out` (the
    film as index.html, the walkthroughs of `steps` beside it: the module's docstring) and/or the
    single HTML file `single` (the film alone)."""
    from app.export import app_client, check_language, replaced

    check_language(lang)
    with app_client(settings) as client:
        exported = None
        if out is not None:
            exported = replaced(Path(out), lambda staging: _carried(client, run, staging, lang, steps, progress))
        if single is not None:
            _, answers = run_answer(client, run, lang)
            manifest = {"answers": "inline", "film": _film_manifest(run, {})}
            html = _film_page(client, run, lang, manifest, _film_note(lang, run, {}, single=True))
            Path(single).write_text(page.single_file(html, client.app.state.settings.static_dir, answers), "utf-8")
            exported = exported or FilmExported(run, Path(single).name, {}, len(answers))
            exported.left_out.append(f"{Path(single).name}: the steps' walkthroughs (it holds the film alone)")
        if exported is None:
            raise ExportError("give a directory (--out), a single file (--single-file) or both")
        return exported


def _carried(client, run: str, staging: Path, lang: str, steps, progress) -> FilmExported:
    return carry_film(client, run, staging, lang, steps, name="index.html", progress=progress)


def carried_films(summary: dict, films: dict[str, list[int] | None] | None) -> dict[str, tuple]:
    """The films a walkthrough's directory carries, by run: (the steps whose walkthroughs each holds,
    the steps it opens from the export's own page). `films` as asked (app.export.export); a trace that
    is a run's step (its summary's spec names the run) carries its run's, opening at that step."""
    carried: dict[str, tuple] = {run: (steps, {}) for run, steps in (films or {}).items()}
    spec = summary.get("spec") or {}
    if spec.get("run"):
        steps, _ = carried.get(spec["run"], ([], {}))
        carried[spec["run"]] = (steps, {int(spec["run_step"]): "index.html"})
    return carried


__all__ = ["MAX_FILM_STEPS", "STEP_SEQS", "FilmExported", "carried_films", "carry_film", "chosen_steps", "export_film"]
