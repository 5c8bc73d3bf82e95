"""The first 30 seconds (issue 34): the hero button and the form's Start open one setup; `xt serve
--model` preselects its model and says what to open; the lessons say what each is and how long;
the page says how a class starts; the real model is explained, not a bare shell command."""

from __future__ import annotations

import argparse
import html
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.helpers.client import make_client
from tests.helpers.gguf_files import STAND_IN_NAME, write_stand_in


def hero(page: str) -> dict[str, str]:
    href = html.unescape(re.search(r'id="home-default-walk" href="([^"]+)"', page).group(1))
    return {k: v[0] for k, v in parse_qs(urlsplit(href).query).items()}


def form_choice(page: str) -> dict[str, str]:
    """The model, text and optimizer the home form's Start sends (without the page's script)."""
    model = re.search(r'id="f-model" name="model" data-selected="([^"]*)"', page).group(1)
    text = html.unescape(re.search(r'<textarea id="f-text"[^>]*>([^<]*)</textarea>', page).group(1))
    optimizer = re.search(r'<select id="f-optimizer".*?</select>', page, re.S).group(0)
    chosen = re.search(r'<option value="([^"]*)" selected', optimizer).group(1)
    return {"model": model, "text": text} | ({"optimizer": chosen} if chosen else {})


def test_the_hero_and_start_open_one_setup_with_the_update(client):
    page = client.get("/?lang=en").text
    link = hero(page)
    assert link.pop("step") == "1" and link["optimizer"] == "sgd"
    assert form_choice(page) == link


def test_the_lessons_say_what_each_is_and_how_long_in_both_languages(client):
    lessons = client.get("/api/lessons?lang=en").json()["lessons"]
    for lang, length in (("en", "{} stops · about {} min"), ("ru", "{} остановок · около {} мин")):
        page = client.get(f"/?lang={lang}").text
        items = re.findall(r'<li class="home-lesson".*?</li>', page, re.S)
        assert len(items) == len(lessons)
        forward = next(i for i in items if "/lessons/forward-in-ten" in i)
        assert length.format(10, 5) in forward  # ten stops at the player's 30 s
        summary = client.get(f"/api/lessons/forward-in-ten?lang={lang}").json()["summary"]
        assert html.escape(summary, quote=False) in forward
    assert "Present to class" in client.get("/?lang=en").text.split('id="home-class-how"')[1][:400]
    assert "xt serve --host 0.0.0.0" in client.get("/?lang=ru").text.split('id="home-class-how"')[1][:600]


def test_the_real_model_is_explained_and_fetching_stays_a_command(tmp_path):
    with make_client(models_dir=tmp_path) as bare:  # no real model fetched here
        page = bare.get("/?lang=en").text
    title, line = re.search(
        r'<span class="home-way" id="home-real" title="([^"]*)">(.*?)</span>\s*\n', page, re.S
    ).groups()
    assert "how to fetch it" in line and "is not on this machine yet: a trained language model" in title
    assert "<code>" not in line  # not a bare command: the command is in the paragraph it links to
    anchor = re.search(r'href="#([^"]+)"', line).group(1)
    fetch = re.search(rf'<p class="field-help model-fetchable"[^>]*id="{anchor}">(.*?)</p>', page, re.S).group(1)
    assert "xt models fetch smollm2-135m" in fetch


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    directory = write_stand_in(tmp_path_factory.mktemp("served"))
    path = directory / f"{STAND_IN_NAME}.gguf"
    with make_client(model_paths=(path,)) as c:
        yield c, path


def test_xt_serve_model_preselects_it_and_says_what_to_open(served):
    client, path = served
    page = client.get("/?lang=en").text
    assert form_choice(page)["model"] == path.name == hero(page)["model"]
    assert re.search(rf'<option lang="en" value="{re.escape(path.name)}" selected>', page)
    assert form_choice(page) == {k: v for k, v in hero(page).items() if k != "step"}
    from xt_cli import _open_line

    args = argparse.Namespace(host="127.0.0.1", port=8000, model=[str(path)])
    assert _open_line(args) == f"xt: open http://127.0.0.1:8000/ ({path.name} preselected)"
