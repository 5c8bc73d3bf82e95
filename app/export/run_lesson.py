"""A lesson about a recorded run exported (`xt export --lesson induction-head --out DIR`; docs/export.md,
"A lesson about a recorded run"): its stops are on the run's film and on several run steps' walk
pages, never one trace, so its export is the run's film (app.export.film, as `xt export --run` writes
it) with the walkthroughs of the lesson's run steps beside it, every page playing the lesson. The
lesson's answer (GET /api/lessons/NAME, in the export's language) is saved beside each page's other
answers with each stop's `url` made the exported page that plays it (the film at its step, a run
step's walkthrough), so the lesson moves between the export's pages, never to the server's.
"""

from __future__ import annotations

import json
from pathlib import Path

from app.export import film
from app.export.answers import ExportError, Progress
from app.export.keys import answer_key


def run_lesson(client, name: str, lang: str) -> dict | None:
    """The lesson `name` as the app sends it in `lang` when it is about a recorded run, else None
    (an unknown lesson: the app's refusal, as an ExportError)."""
    response = client.get(f"/api/lessons/{name}?lang={lang}")
    if response.status_code != 200:
        raise ExportError(response.json().get("detail", f"no lesson named {name!r}"))
    lesson = response.json()
    return lesson if lesson.get("run") else None


def run_steps(lesson: dict) -> list[int]:
    """The run's steps whose walkthroughs the lesson's stops open."""
    return sorted({stop["run_step"] for stop in lesson["steps"] if stop.get("run_step") is not None})


def stop_page(run: str, stop: dict) -> str:
    """The exported page a stop plays on: the film (index.html) at its step, or its run step's walkthrough."""
    if stop.get("film") is not None:
        return f"index.html?step={stop['film']}"
    return film.step_page_name(run, stop["run_step"])


def played_answers(lesson: dict) -> dict[str, bytes]:
    """The lesson's answers as the exported pages read them: the lesson, each stop's `url` its page,
    and the lessons' list holding it alone (its `url`: its first stop's page, playing it)."""
    run = lesson["run"]
    steps = [stop | {"url": stop_page(run, stop)} for stop in lesson["steps"]]
    played = lesson | {"steps": steps, "url": f"{steps[0]['url']}#lesson={lesson['name']}"}
    brief = {key: played[key] for key in played if key not in ("spec", "steps", "run")} | {"steps": len(steps)}
    return {
        answer_key(f"/api/lessons/{lesson['name']}"): json.dumps(played, sort_keys=True).encode(),
        answer_key("/api/lessons"): json.dumps({"lessons": [brief]}, sort_keys=True).encode(),
    }


def export_run_lesson(
    client, lesson: dict, out: Path | None, single: Path | None, progress: Progress | None, lang: str
) -> film.FilmExported:
    """Writes the run lesson `lesson` (run_lesson's answer) to the directory `out`: the film as
    index.html and the walkthroughs of its run steps, each page playing the lesson."""
    if single is not None or out is None:
        raise ExportError(
            f"lesson {lesson['name']} is about the recorded run {lesson['run']}: it plays on the run's film and on "
            f"the walkthroughs of steps {', '.join(map(str, run_steps(lesson)))}, several pages, so it exports as "
            "a directory only: --out DIR, without --single-file"
        )
    from app.export import replaced

    played = (lesson["name"], played_answers(lesson))

    def write(staging: Path) -> film.FilmExported:
        steps = run_steps(lesson)
        return film.carry_film(client, lesson["run"], staging, lang, steps, name="index.html", progress=progress, lesson=played)  # fmt: skip

    return replaced(Path(out), write)


__all__ = ["export_run_lesson", "played_answers", "run_lesson", "run_steps", "stop_page"]
