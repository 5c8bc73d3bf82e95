"""The exported walk page: GET /walk rendered by the app itself, made static.

    directory     index.html, static/ (the page's JS and CSS, Plotly.js), answers/*.json.gz
    single file   the same page with everything inlined: stylesheets as <style>, Plotly.js and
                  prefs.js as classic scripts, the ES modules as data: URLs behind an import map
                  (a module's relative imports rewritten to bare names the map resolves: modules
                  cannot be fetched from file://), and every answer as one gzipped, base64 block

Either way the page carries #xt-export (static/js/lib/static_source.js reads it: the page then
never calls a server), the class `static-export` on <body> (static/css/export.css hides what needs
a server) and a note saying what the export leaves out and where the full app is.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import re
from pathlib import Path
from urllib.parse import urlencode

from app.export.keys import bundle_of, file_name
from app.routes.assets import PLOTLY_JS, RELATIVE_IMPORT, module_graph

PLOTLY_FILE = "static/plotly-xt.min.js"
EXPORT_CSS = "static/css/export.css"
_PLOTLY_TAG = re.compile(r'<script src="/assets/plotly-[^"]+" defer></script>')
_EDIT_LINK = re.compile(r'<a class="button-quiet edit-spec"[^>]*>.*?</a>', re.S)
_PRELOAD = re.compile(r'<link rel="modulepreload" href="[^"]+">')
_STYLESHEET = re.compile(r'<link rel="stylesheet" href="static/([^"]+)">')
_CLASSIC = re.compile(r'<script src="static/([^"]+)"( defer)?></script>')
_SCRIPT_URL = re.compile(r'<script src="static/([^"]+)"')
_MODULE = re.compile(r'<script type="module" src="static/js/([^"]+)"></script>')


def gz(data: bytes) -> bytes:
    """gzip with a fixed mtime: the same answer, the same bytes."""
    return gzip.compress(data, compresslevel=9, mtime=0)


def answers_object(members: list[tuple[str, bytes]]) -> bytes:
    """One JSON object of answers by key, each answer's bytes as the app sent them."""
    return b"{" + b",".join(json.dumps(key).encode() + b":" + answer for key, answer in members) + b"}"


def render(client, query: dict, step: int, manifest: dict, note: str) -> str:
    """The walk page of `query` at `step`, its URLs relative, with #xt-export and the note."""
    response = client.get("/walk?" + urlencode(query | {"step": str(step)}))
    if response.status_code != 200:
        raise ValueError(f"/walk answered {response.status_code}: {response.text[:300]}")
    page = response.text
    page = _PLOTLY_TAG.sub(f'<script src="{PLOTLY_FILE}" defer></script>', page)
    page = _EDIT_LINK.sub("", page)
    page = page.replace('href="/static/', 'href="static/').replace('src="/static/', 'src="static/')
    page = page.replace('href="/static/', 'href="static/').replace('<a class="brand" href="/">', '<a class="brand">')
    page = page.replace("</head>", f'  <link rel="stylesheet" href="{EXPORT_CSS}">\n</head>', 1)
    page = page.replace('<body class="', '<body class="static-export ', 1)
    block = json.dumps(manifest, sort_keys=True).replace("<", "\\u003c")
    notice = f'<p class="export-note" role="note">{html.escape(note)}</p>'
    return page.replace(
        '<main id="main" tabindex="-1">',
        f'<main id="main" tabindex="-1">\n<script type="application/json" id="xt-export">{block}</script>\n{notice}',
        1,
    )


def write_directory(out: Path, page: str, static_dir: Path, answers: dict[str, bytes]) -> None:
    """index.html, the static files the page loads and answers/<name>.json.gz (a bundle's: a
    JSON object of its answers by key, app.export.keys.bundle_of)."""
    (out / "answers").mkdir(parents=True, exist_ok=True)
    (out / "index.html").write_text(page, encoding="utf-8")
    for name in _page_files(page, static_dir):
        target = out / "static" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((static_dir / name).read_bytes())
    (out / PLOTLY_FILE).write_bytes(PLOTLY_JS.read_bytes())
    files: dict[str, list[tuple[str, bytes]]] = {}
    for key, body in sorted(answers.items()):
        files.setdefault(bundle_of(key) or key, []).append((key, body))
    for name, members in files.items():
        if name.startswith("group:"):
            body = answers_object(members)
        else:
            [(_, body)] = members
        (out / "answers" / f"{file_name(name)}.json.gz").write_bytes(gz(body))


def _page_files(page: str, static_dir: Path) -> list[str]:
    """The files under static/ the page loads: its stylesheets, classic scripts and modules."""
    names = set(_STYLESHEET.findall(page)) | set(_SCRIPT_URL.findall(page))
    for entry in _MODULE.findall(page):
        names |= {url.removeprefix("/static/") for url in module_graph(static_dir, entry)} | {f"js/{entry}"}
    return sorted(name for name in names if (static_dir / name).is_file())


def single_file(page: str, static_dir: Path, answers: dict[str, bytes]) -> str:
    """The page with every file it loads inlined (the module's docstring)."""
    page = _PRELOAD.sub("", page)
    page = _STYLESHEET.sub(lambda m: f"<style>\n{_text(static_dir / m.group(1))}</style>", page)
    page = _CLASSIC.sub(lambda m: _inline_classic(static_dir, m.group(1)), page)
    modules = _modules(static_dir / "js", [m.group(1) for m in _MODULE.finditer(page)])
    imports = {
        name: "data:text/javascript;base64," + base64.b64encode(code.encode()).decode() for name, code in modules
    }
    import_map = json.dumps({"imports": imports}, sort_keys=True)
    page = page.replace("</head>", f'<script type="importmap">{import_map}</script>\n</head>', 1)
    page = _MODULE.sub(lambda m: f'<script type="module">import "xt/js/{m.group(1)}";</script>', page)
    encoded = base64.b64encode(gz(answers_object(sorted(answers.items())))).decode()
    block = f'<script type="text/plain" id="xt-export-answers">{encoded}</script>\n'
    return page.replace(
        '<script type="application/json" id="xt-export">', block + '<script type="application/json" id="xt-export">', 1
    )


def _text(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if "</" in text and path.suffix == ".css":  # never: CSS has no markup
        raise ValueError(f"{path} holds '</': it cannot be inlined in a <style>")
    return text


def _inline_classic(static_dir: Path, name: str) -> str:
    code = PLOTLY_JS.read_text(encoding="utf-8") if f"static/{name}" == PLOTLY_FILE else _text(static_dir / name)
    if "</script" in code.lower() or "<!--" in code:
        raise ValueError(f"{name} holds '</script' or '<!--': it cannot be inlined")
    # the page's deferred Plotly.js must still run before the modules: an inline script runs at once
    return f"<script>\n{code}\n</script>"


def _modules(root: Path, entries: list[str]) -> list[tuple[str, str]]:
    """Every module the entries import (and the entries), as (bare name, code with its relative
    imports rewritten to bare names), sorted by name."""
    done: dict[str, str] = {}
    todo = list(entries)
    while todo:
        name = todo.pop()
        if f"xt/js/{name}" in done:
            continue
        path = root / name

        def bare(match: re.Match, path: Path = path) -> str:
            target = (path.parent / match.group(1)).resolve().relative_to(root.resolve()).as_posix()
            todo.append(target)
            return match.group(0).replace(match.group(1), f"xt/js/{target}")

        done[f"xt/js/{name}"] = RELATIVE_IMPORT.sub(bare, path.read_text(encoding="utf-8"))
    return sorted(done.items())
