"""A recorded run's film exported (app/export/film.py, `xt export --run`): the film page and the run's
answer saved whole beside the walkthroughs of the steps it holds, each walkthrough's way back to the
film; the single file holds the film alone and loads nothing; the steps it holds are bounded and
checked; a walkthrough of a run's step carries its run's film; every refusal names what is wrong."""

from __future__ import annotations

import base64
import gzip
import json
import re

import pytest

from app.export import ExportError, app_client
from app.export.film import MAX_FILM_STEPS, carry_film, chosen_steps, export_film
from app.export.keys import file_name
from tests.helpers.export import FILM_RUN, FILM_STEP, film_settings

STEP_PAGE = f"film-{FILM_RUN}-step-{FILM_STEP:06d}.html"
SERVER_URL = re.compile(r'(?:href|src)="/[^"]*"')  # a URL the export's host would not have


def _server_urls(page: str) -> list[str]:
    """The server's URLs a page links to or loads, but the language switch's (hidden: static/css/export.css)."""
    return SERVER_URL.findall(re.sub(r'<nav class="lang-switch".*?</nav>', "", page, flags=re.S))


def _manifest(page: str) -> dict:
    return json.loads(re.search(r'id="xt-export">([^<]+)<', page).group(1))


def _gunzipped(path) -> bytes:
    return gzip.decompress(path.read_bytes())


def test_the_directory_holds_the_film_its_run_and_a_steps_walkthrough(film_export):
    directory = film_export.directory
    assert sorted(p.name for p in directory.iterdir()) == ["answers", STEP_PAGE, "index.html", "static"]
    film = (directory / "index.html").read_text(encoding="utf-8")
    manifest = _manifest(film)
    assert manifest["answers"] == "files" and manifest["trace"] is None
    assert manifest["film"] == {"run": FILM_RUN, "pages": {str(FILM_STEP): STEP_PAGE}}
    assert "The walkthrough of one step opens from it: step 8." in film
    # the note as the page's HTML has it (not its scripts': from file:// a browser refuses them)
    note = re.search(rf"A static export of the film of the recorded run {FILM_RUN},[^<]*", film).group(0)
    assert "This folder plays from a web server" in note
    assert 'class="static-export film-page"' in film and _server_urls(film) == []
    # the run's answer, whole: the bytes the app sends (whatever it comes to hold, the page gets)
    with app_client(film_settings(film_export.runs_dir)) as client:  # the app the export drives, no warm-up
        served = client.get(f"/api/runs/{FILM_RUN}?lang=en").content
    assert _gunzipped(directory / "answers" / f"{file_name(f'runs/{FILM_RUN}')}.json.gz") == served


def test_a_steps_walkthrough_reads_its_own_answers_and_leads_back_to_the_film(film_export):
    walk = (film_export.directory / STEP_PAGE).read_text(encoding="utf-8")
    manifest = _manifest(walk)
    folder = film_export.directory / manifest["folder"]
    assert manifest["folder"] == f"answers/{STEP_PAGE.removesuffix('.html')}"
    assert manifest["films"] == {FILM_RUN: "index.html"}
    assert f'id="film-back" href="index.html?step={FILM_STEP}"' in walk and _server_urls(walk) == []
    summary = json.loads(_gunzipped(folder / "trace.json.gz"))
    assert summary["spec"]["run"] == FILM_RUN and summary["spec"]["run_step"] == FILM_STEP
    views = [folder / f"{file_name(f'trace/steps/{i}?seq=0')}.json.gz" for i in range(len(summary["steps"]))]
    assert all(view.is_file() for view in views)
    assert not (folder / f"{file_name('trace/steps/0?seq=1')}.json.gz").exists()  # one sequence of the batch
    assert f"The walkthrough of step {FILM_STEP} of the recorded run {FILM_RUN}" in walk


def test_the_single_file_holds_the_film_alone_and_loads_nothing(film_export):
    single = film_export.single.read_text(encoding="utf-8")
    loads = re.findall(r'<(?:script|link|img|iframe|source)\b[^>]*?\b(?:src|href)="([^"]*)"', single)
    assert loads and [url for url in loads if not url.startswith("data:")] == []
    assert _server_urls(single) == []
    assert _manifest(single)["film"]["pages"] == {} and _manifest(single)["answers"] == "inline"
    block = re.search(r'id="xt-export-answers">([^<]+)<', single).group(1)
    answers = json.loads(gzip.decompress(base64.b64decode(block)))
    assert sorted(answers) == [f"runs/{FILM_RUN}", f"runs/{FILM_RUN}/attention"]  # the film and its frames
    assert len(answers[f"runs/{FILM_RUN}"]["step"]) == 16
    assert "No step's walkthrough opens from this file" in single
    note = re.search(rf"A static export of the film of the recorded run {FILM_RUN} in one file[^<]*", single).group(0)
    assert "web server" not in note  # the single file plays from file://


def test_the_steps_an_export_holds_are_bounded_and_checked():
    run = {"name": "r", "plan": {"steps": 2000}, "checkpoints": [0, 500, 769, 1000]}
    assert chosen_steps(run, None) == [0, 500, 769, 1000] and chosen_steps(run, [7, 7, 3]) == [3, 7]
    many = run | {"checkpoints": list(range(0, 2000, 100))}
    spread = chosen_steps(many, None)
    assert len(spread) == MAX_FILM_STEPS and spread[0] == 0 and spread[-1] == 1900
    with pytest.raises(ExportError, match=r"step 2000 is not in the run r \(steps 0 to 1999\)"):
        chosen_steps(run, [0, 2000])
    with pytest.raises(ExportError, match=f"9 steps, over the limit of {MAX_FILM_STEPS} walkthroughs"):
        chosen_steps(run, list(range(9)))


def test_a_film_carried_opens_the_steps_its_export_holds_and_is_deterministic(film_export, tmp_path):
    """A walkthrough of a run's step carries its run's film (app.export.export): the film opens that
    step at the walkthrough's own page; two exports of a film are the same bytes."""
    from app.export.page import made_static

    settings = film_settings(film_export.runs_dir)
    with app_client(settings) as client:
        carried = carry_film(client, FILM_RUN, tmp_path / "walk", steps=[], opened={FILM_STEP: "index.html"})
        link = made_static(client, '<a href="/film?run=tiny&amp;step=8">', {}, "", {FILM_RUN: carried.page})
    film = (tmp_path / "walk" / f"film-{FILM_RUN}.html").read_text(encoding="utf-8")
    assert _manifest(film)["film"]["pages"] == {str(FILM_STEP): "index.html"}
    assert f'<a href="film-{FILM_RUN}.html?step=8">' in link
    for name in ("a", "b"):
        export_film(FILM_RUN, tmp_path / name, steps=[], settings=settings)
    first, second = (
        {p.relative_to(tmp_path / n): p.read_bytes() for p in (tmp_path / n).rglob("*") if p.is_file()} for n in "ab"
    )
    assert first == second and "index.html" in map(str, first)


@pytest.mark.long
def test_a_run_steps_walkthrough_exported_carries_the_film(film_export, tmp_path):
    from app.export import export

    spec = {"run": FILM_RUN, "run_step": FILM_STEP}
    exported = export(spec, out=tmp_path / "walk", single=tmp_path / "walk.html", settings=film_settings(film_export.runs_dir))  # fmt: skip
    walk = (tmp_path / "walk" / "index.html").read_text(encoding="utf-8")
    assert f'id="film-back" href="film-{FILM_RUN}.html?step={FILM_STEP}"' in walk
    assert _manifest(walk)["films"] == {FILM_RUN: f"film-{FILM_RUN}.html"}
    assert [carried.pages for carried in exported.films] == [{FILM_STEP: "index.html"}]
    assert 'id="film-back"' not in (tmp_path / "walk.html").read_text(encoding="utf-8")  # the single file: no film
    assert any("the film of the run tiny" in part for part in exported.left_out)


def test_xt_export_refuses_what_it_cannot_export(film_export, tmp_path, capsys):
    import xt_cli

    out = str(tmp_path / "out")
    refused = [
        (
            ["--run", "nope", "--runs", str(film_export.runs_dir)],
            "no recorded run named nope on this server (its runs: tiny)",
        ),
        (["--run", str(tmp_path / "nowhere")], "no run.json there"),
        (["--run", str(film_export.runs_dir / FILM_RUN), "--run-steps", "0,x"], "--run-steps takes steps separated"),
        (["--run", str(film_export.runs_dir / FILM_RUN), "--run-steps", "99"], "step 99 is not in the run tiny"),
        (["--run", str(film_export.runs_dir / FILM_RUN), "--lang", "xx"], "no language 'xx'"),
    ]
    for args, said in refused:
        assert xt_cli.main(["export", *args, "--out", out]) == 1
        assert said in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    assert xt_cli.main(["export", "--run", str(film_export.runs_dir / FILM_RUN)]) == 2  # neither --out nor a file
