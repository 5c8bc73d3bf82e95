"""One small walkthrough exported by `xt export` (app/export), shared by the export's tests: a
one-layer model of width 8 on 8 characters (every step a walkthrough has, each one cheap to draw),
with a two-stop lesson of its own, as a directory and as one HTML file; a sealed quiz of the
same sizes; and the film of a tiny recorded run (app/export/film.py) with one step's walkthrough.
Made once a run (session fixtures; the export's test modules share one xdist group)."""

from __future__ import annotations

import base64
import gzip
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

CONFIG = {"n_layer": 1, "n_head": 2, "n_kv_head": 1, "n_embd": 8, "ffn_hidden": 16, "seq_len": 16}
# T = 7 positions (the Jacobian row the walk opens is query position 5); 4 distinct characters:
# the output softmax's Jacobian shows the whole vocabulary (the page sends no top_k)
SPEC = {"text": "abcdabca", "tokenizer": "char", "config": CONFIG}
QUIZ_SPEC = SPEC | {"quiz": 4242}
LESSON = "tiny-tour"
LESSON_TOML = f"""title = "A tiny tour"
summary = "Two stops through a one-layer model."

[spec]
text = "{SPEC["text"]}"
tokenizer = "char"
config = {{ {", ".join(f"{k} = {v}" for k, v in CONFIG.items())} }}

[[steps]]
name = "embedding"
phase = "forward"
takeaway = "Each letter becomes a vector."
narration = "Point at the rows of the output: one row per position, eight numbers each."
next = "Then the softmax's backward."

[[steps]]
name = "layers.0.attention.probs"
phase = "backward"
takeaway = "The softmax's Jacobian carries the gradient to the scores."
narration = "Open a row's Jacobian below the figures."
"""


@dataclass
class Export:
    directory: Path
    single: Path
    trace_id: str
    steps: int
    seconds: float


def settings_with_lesson(root: Path, lesson: bool = True):
    """The app's settings with a lessons directory holding LESSON only (or none)."""
    from app.settings import get_settings

    lessons = root / "lessons"
    lessons.mkdir(parents=True, exist_ok=True)
    if lesson:
        (lessons / f"{LESSON}.toml").write_text(LESSON_TOML, encoding="utf-8")
    return replace(get_settings(), lessons_dir=lessons)


def export_small(root: Path, spec: dict = SPEC, name: str = "walk") -> Export:
    from app.export import export

    started = time.perf_counter()
    directory, single = root / name, root / f"{name}.html"
    settings = settings_with_lesson(root, lesson=spec is SPEC)
    exported = export(spec, out=directory, single=single, settings=settings)
    return Export(directory, single, exported.trace_id, exported.steps, time.perf_counter() - started)


# The tiny run whose film is exported: the induction task at one layer of width 8, 16 steps of batch 4,
# checkpoints at 0 and 8 (and 2 where the loss fell fastest); step 8's walkthrough exported with it.
FILM_RUN = "tiny"
FILM_SIZES = {"n_layer": 1, "n_embd": 8, "ffn_hidden": 16, "n_head": 2, "n_kv_head": 1}
FILM_STEP = 8


@dataclass
class FilmExport:
    directory: Path
    single: Path
    runs_dir: Path
    pages: dict[int, str]


def film_settings(runs_dir: Path):
    from app.settings import get_settings

    return replace(get_settings(), runs_dir=runs_dir)


def record_tiny_run(root: Path) -> Path:
    """The runs' folder holding FILM_RUN, recorded (about 0.2 s)."""
    from tests.helpers.film import small_plan
    from xt_core.film.record import record

    record(small_plan(steps=16, sizes=FILM_SIZES), root / "runs" / FILM_RUN)
    return root / "runs"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StaticServer:
    """`python -m http.server` serving one directory on 127.0.0.1 (a subprocess)."""

    def __init__(self, directory: Path):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        command = [
            sys.executable,
            "-m",
            "http.server",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--directory",
            str(directory),
        ]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("python -m http.server did not start")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=5)


@pytest.fixture(scope="session")
def small_export(tmp_path_factory) -> Export:
    return export_small(tmp_path_factory.mktemp("export"))


@pytest.fixture(scope="session")
def quiz_export(tmp_path_factory) -> Export:
    return export_small(tmp_path_factory.mktemp("export-quiz"), QUIZ_SPEC, "quiz")


@pytest.fixture(scope="session")
def russian_export(tmp_path_factory) -> Path:
    """The small walkthrough as one HTML file in Russian, made as a teacher would: `xt export --lang ru`."""
    import json

    import xt_cli

    single = tmp_path_factory.mktemp("export-ru") / "walk-ru.html"
    assert xt_cli.main(["export", "--spec", json.dumps(SPEC), "--single-file", str(single), "--lang", "ru"]) == 0
    return single


@pytest.fixture(scope="session")
def film_export(tmp_path_factory) -> FilmExport:
    from app.export.film import export_film

    root = tmp_path_factory.mktemp("export-film")
    runs_dir = record_tiny_run(root)
    directory, single = root / "film", root / "film.html"
    exported = export_film(FILM_RUN, directory, single, [FILM_STEP], settings=film_settings(runs_dir))
    return FilmExport(directory, single, runs_dir, exported.pages)


def exported_texts(export: Export) -> dict[str, str]:
    """Every file of the export as text (answers gunzipped) and the single file's answers block."""
    texts = {}
    for path in sorted(export.directory.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            texts[str(path.relative_to(export.directory))] = (
                gzip.decompress(data) if path.suffix == ".gz" else data
            ).decode()
    single = export.single.read_text(encoding="utf-8")
    block = re.search(r'id="xt-export-answers">([^<]+)<', single).group(1)
    texts["single file"] = single
    texts["single file's answers"] = gzip.decompress(base64.b64decode(block)).decode()
    return texts


# A lesson about the tiny run (docs/lessons.md, "A lesson about a recorded run"): a film stop, a stop on
# step FILM_STEP's walkthrough, a film stop again; exported as a directory (app/export/run_lesson.py).
RUN_LESSON = "tiny-run"
RUN_LESSON_TOML = f"""title = "A tiny run"
summary = "The tiny run's film and one of its steps."
run = "{FILM_RUN}"

[[steps]]
film = 3
takeaway = "The loss at step 3."
narration = "Point at the loss."

[[steps]]
run_step = {FILM_STEP}
name = "embedding"
phase = "forward"
takeaway = "Step {FILM_STEP}'s embedding."
narration = "One row per position."

[[steps]]
film = 12
takeaway = "The loss later."
narration = "Lower or not: the run says."
"""


@dataclass
class RunLessonExport:
    directory: Path
    settings: object
    exported: object


def run_lesson_settings(root: Path, runs_dir: Path):
    lessons = root / "lessons"
    lessons.mkdir(parents=True, exist_ok=True)
    (lessons / f"{RUN_LESSON}.toml").write_text(RUN_LESSON_TOML, encoding="utf-8")
    return replace(film_settings(runs_dir), lessons_dir=lessons)


@pytest.fixture(scope="session")
def run_lesson_export(tmp_path_factory, film_export) -> RunLessonExport:
    from app.export import export

    root = tmp_path_factory.mktemp("export-run-lesson")
    settings = run_lesson_settings(root, film_export.runs_dir)
    exported = export(lesson=RUN_LESSON, out=root / "lesson", settings=settings)
    return RunLessonExport(root / "lesson", settings, exported)
