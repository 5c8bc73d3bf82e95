"""The vendored Plotly.js bundle (app/vendor/plotly) can draw every figure xt sends: each trace
type any view emits is registered in it, and it is the plotly.js release the Python plotly
package writes figures for."""

from __future__ import annotations

import json
import re

import pytest
from plotly.offline import get_plotlyjs_version

from app.routes.assets import PLOTLY_JS, bundle_version, module_graph, plotly_bundle
from app.settings import Settings
from tests.helpers.specs import SMALL_CONFIG

# Specs whose views together hold every kind of figure: every forward and backward op, the
# loss, both Jacobians, an enlarged head, a bug-lab diff and its checks chart, an update step.
SPECS = [
    {"config": SMALL_CONFIG, "text": "the cat sat", "faults": ["softmax_missing_sum_term"]},
    {"config": SMALL_CONFIG, "text": "hello hello", "optimizer": {"name": "adamw"}, "train_steps": 2},
]


def registered_trace_types(bundle: bytes) -> set[str]:
    """The trace modules a plotly.js bundle registers (each module object names itself)."""
    return {m.decode() for m in re.findall(rb'moduleType:"trace",name:"(\w+)"', bundle)}


def figure_trace_types(node) -> set[str]:
    """Trace types of every Plotly figure ({"data": [...], "layout": {...}}) inside a JSON answer."""
    found: set[str] = set()
    if isinstance(node, dict):
        if isinstance(node.get("data"), list) and isinstance(node.get("layout"), dict):
            found |= {trace.get("type", "scatter") for trace in node["data"]}
        for value in node.values():
            found |= figure_trace_types(value)
    elif isinstance(node, list):
        for value in node:
            found |= figure_trace_types(value)
    return found


def view_urls(client, spec: dict) -> list[str]:
    summary = client.post("/api/traces", json=spec).json()
    base = f"/api/traces/{summary['id']}"
    urls = [f"{base}/steps/{step['index']}" for step in summary["steps"]]
    urls += [f"{base}/jacobian?layer=0&head=1&pos=3", f"{base}/jacobian?layer=output&top_k=3"]
    urls += [f"{base}/steps/{s['index']}/head?head=1" for s in summary["steps"] if s["name"].endswith(".probs")]
    if spec.get("faults"):
        backward = [s["index"] for s in summary["steps"] if s["phase"] == "backward"]
        urls += [f"{base}/steps/{backward[0]}/diff", f"{base}/checks?wait=true"]
    if spec.get("optimizer"):
        urls.append(f"{base}/update?param=layers.0.attention.wq")
    return urls


def test_the_bundle_registers_every_trace_type_the_views_draw(client):
    registered = registered_trace_types(plotly_bundle().raw)
    assert {"scatter", "bar", "heatmap"} <= registered  # the parse itself works
    drawn: set[str] = set()
    for spec in SPECS:
        for url in view_urls(client, spec):
            response = client.get(url)
            assert response.status_code == 200, (url, response.text[:300])
            drawn |= figure_trace_types(response.json())
    assert drawn, "no figure found: the walk through the views is broken"
    missing = drawn - registered
    assert not missing, f"views draw {sorted(missing)}, not in {PLOTLY_JS.name}: register them in recipe/entry.js"


def test_the_bundle_is_the_release_plotly_writes_figures_for():
    raw = PLOTLY_JS.read_bytes()
    pinned = json.loads((PLOTLY_JS.parent / "recipe" / "package.json").read_text())["devDependencies"]["plotly.js"]
    assert bundle_version(raw) == pinned == get_plotlyjs_version()


def test_a_bundle_without_a_version_in_its_banner_is_refused():
    with pytest.raises(ValueError, match="names no plotly.js version"):
        bundle_version(b'"use strict";var Plotly=1;')


def test_module_graph_follows_every_relative_import_once(tmp_path):
    js = tmp_path / "js"
    (js / "lib").mkdir(parents=True)
    (js / "page.js").write_text('import { a,\n  b } from "./lib/a.js";\nimport "./lib/b.js";\nconst x = "./no.js";\n')
    (js / "lib" / "a.js").write_text('export { c } from "./c.js";\nimport { page } from "../page.js";\n')
    (js / "lib" / "b.js").write_text('import { a } from "./a.js";\nimport { gone } from "./missing.js";\n')
    (js / "lib" / "c.js").write_text("export const c = 1;\n")
    assert module_graph(tmp_path, "page.js") == [
        "/static/js/lib/a.js",
        "/static/js/lib/b.js",
        "/static/js/lib/c.js",
        "/static/js/page.js",  # imported back by a.js: listed once, the cycle ends
    ]


def test_the_walk_page_preloads_each_module_of_walk_js(client):
    page = client.get("/walk?n_layer=1&n_head=2&n_embd=8&ffn_hidden=8&text=hello", follow_redirects=True).text
    preloaded = re.findall(r'<link rel="modulepreload" href="([^"]+)">', page)
    modules = module_graph(Settings().static_dir, "walk.js")
    assert preloaded == modules and "/static/js/lib/figures.js" in modules
    for href in preloaded:
        assert client.get(href).status_code == 200
    assert re.search(r'<script src="/assets/plotly-[^"]+" defer></script>', page)


def test_a_russian_walk_page_loads_plotlys_russian_locale_after_the_bundle(client):
    """Plotly's mode bar in the page's language: its vendored ru locale, after the bundle; none in English."""
    walk = "/walk?n_layer=1&n_head=2&n_embd=8&ffn_hidden=8&text=hello"
    english = client.get(walk + "&lang=en", follow_redirects=True).text
    russian = client.get(walk + "&lang=ru", follow_redirects=True).text
    client.cookies.clear()
    assert "plotly-locale" not in english
    tags = re.findall(r'<script src="(/assets/plotly-[^"]+)" defer>', russian)
    assert len(tags) == 2 and tags[1] == "/assets/plotly-locale-ru.js"
    locale = client.get(tags[1])
    assert locale.status_code == 200 and locale.headers["content-type"].startswith("text/javascript")
    assert b'name:"ru"' in locale.content and b"Plotly.register(locale)" in locale.content
    assert client.get("/assets/plotly-locale-xx.js").status_code == 404


def test_plotlys_locales_are_the_vendored_files_of_xts_languages():
    """A language's Plotly locale is one file dropped beside the bundle (docs/translating.md): the
    server finds it there, and every one it finds is for a language xt speaks."""
    from app.routes.assets import PLOTLY_LOCALES
    from app.words import LANGUAGES

    assert "ru" in PLOTLY_LOCALES and set(PLOTLY_LOCALES) <= set(LANGUAGES) - {"en"}
    assert all(path.name == f"plotly-locale-{lang}.js" and path.is_file() for lang, path in PLOTLY_LOCALES.items())
