"""The exported walk page: GET /walk rendered by the app itself, made static.

    directory     index.html, static/ (the page's JS and CSS, Plotly.js), answers/*.json.gz
    single file   the same page with everything inlined: stylesheets as <style>, Plotly.js and
                  prefs.js as classic scripts, the ES modules as data: URLs behind an import map
                  (a module's relative imports rewritten to bare names the map resolves: modules
                  cannot be fetched from file://), and every answer as one gzipped, base64 block

Either way the page carries its words: the language's Fluent catalogue in #xt-words (the page has
no server to fetch /words/<lang>.ftl from; static/js/lib/words.js reads the block), @fluent/bundle
beside it (static/vendor/fluent/ behind an import map, or inlined in the single file), and Plotly's
locale for a language other than English. And it carries #xt-export (static/js/lib/static_source.js reads it: the page then
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
from urllib.parse import unquote, urlencode

from app.export.keys import bundle_of, file_name
from app.routes.assets import FLUENT_DIR, PLOTLY_JS, PLOTLY_LOCALES, RELATIVE_IMPORT, module_graph

PLOTLY_FILE = "static/plotly-xt.min.js"
FLUENT_FILES = "static/vendor/fluent"  # @fluent/bundle in the directory (the server's /vendor/fluent)
# import("./words.js") (lib/say.js: loaded when a message is needed): a data: URL resolves no relative URL
_DYNAMIC_IMPORT = re.compile(r"""\bimport\(\s*["'](\.{1,2}/[^"']+)["']\s*\)""")
_FLUENT_IMPORT = re.compile(r"""(["'])/vendor/fluent/([^"']+)\1""")
_PLOTLY_LOCALE_TAG = re.compile(r'<script src="/assets/plotly-locale-([a-z]+)\.js" defer></script>')
EXPORT_CSS = "static/css/export.css"
_PLOTLY_TAG = re.compile(r'<script src="/assets/plotly-[^"]+" defer></script>')
_EDIT_LINK = re.compile(r'<a class="button-quiet edit-spec"[^>]*>.*?</a>', re.S)
_FILM_HREF = re.compile(r'href="/film\?run=([^"&]+)((?:&amp;step=\d+)?)"')
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


def render(client, query: dict, step: int, manifest: dict, note: str, films: dict[str, str] | None = None) -> str:
    """The walk page of `query` at `step`, its URLs relative, with #xt-export and the note."""
    response = client.get("/walk?" + urlencode(query | {"step": str(step)}))
    if response.status_code != 200:
        raise ValueError(f"/walk answered {response.status_code}: {response.text[:300]}")
    return made_static(client, response.text, manifest, note, films)


def made_static(client, page: str, manifest: dict, note: str, films: dict[str, str] | None = None) -> str:
    """A page the app rendered (the walk page, the film page), made static: its URLs relative,
    #xt-export (`manifest`), its catalogue and the note. `films`: the runs whose films the export
    carries, by name, each the file name of its film page: a link to one (GET /film?run=) leads
    there, its step kept; a link to another of the server's pages that edits the spec goes."""
    # the locale first: its URL is /assets/plotly-locale-<lang>.js, which _PLOTLY_TAG matches too
    page = _PLOTLY_LOCALE_TAG.sub(lambda m: f'<script src="static/plotly-locale-{m.group(1)}.js" defer></script>', page)
    page = _PLOTLY_TAG.sub(f'<script src="{PLOTLY_FILE}" defer></script>', page)
    page = _film_links(page, films or {})
    page = _EDIT_LINK.sub(lambda m: "" if 'href="/' in m.group(0) else m.group(0), page)  # the film's way back stays
    page = page.replace('href="/static/', 'href="static/').replace('src="/static/', 'src="static/')
    page = page.replace('href="/static/', 'href="static/').replace('<a class="brand" href="/">', '<a class="brand">')
    page = page.replace("</head>", f'  <link rel="stylesheet" href="{EXPORT_CSS}">\n</head>', 1)
    page = page.replace('<body class="', '<body class="static-export ', 1)
    block = json.dumps(manifest, sort_keys=True).replace("<", "\\u003c")
    notice = f'<p class="export-note" role="note">{html.escape(note)}</p>'
    return page.replace(
        '<main id="main" tabindex="-1">',
        f'<main id="main" tabindex="-1">\n<script type="application/json" id="xt-export">{block}</script>\n'
        f"{_words_block(client, _page_lang(page))}\n{notice}",
        1,
    )


def _film_links(page: str, films: dict[str, str]) -> str:
    """Every link to the film of a run in `films` (GET /film?run=NAME[&step=S]) made a link to its
    exported page (`films[NAME]`, ?step=S kept: the exported film opens there)."""

    def carried(match: re.Match) -> str:
        target = films.get(unquote(match.group(1)))
        return match.group(0) if target is None else f'href="{target}{match.group(2).replace("&amp;", "?")}"'

    return _FILM_HREF.sub(carried, page)


def _page_lang(page: str) -> str:
    match = re.search(r'<html lang="([a-z]+)"', page)
    return match.group(1) if match else "en"


def _words_block(client, lang: str) -> str:
    """#xt-words: the catalogue the page's script reads (GET /words/<lang>.ftl, the app's own)."""
    response = client.get(f"/words/{lang}.ftl")
    response.raise_for_status()
    block = json.dumps({"lang": lang, "ftl": response.text}, ensure_ascii=False).replace("<", "\\u003c")
    return f'<script type="application/json" id="xt-words">{block}</script>'


def _fluent_map(page: str) -> str:
    """The directory's import map: /vendor/fluent/ (what static/js/lib/words.js imports) is the
    export's static/vendor/fluent/. Before every module, so each resolves through it."""
    import_map = json.dumps({"imports": {"/vendor/fluent/": f"./{FLUENT_FILES}/"}})
    return page.replace("<head>\n", f'<head>\n<script type="importmap">{import_map}</script>\n', 1)


def write_directory(
    out: Path,
    page: str,
    static_dir: Path,
    answers: dict[str, bytes],
    lang: str = "en",
    name: str = "index.html",
    folder: str = "answers",
) -> None:
    """index.html (or `name`), the static files the page loads (Fluent's modules and Plotly's locale
    too) and answers/<name>.json.gz (a bundle's: a JSON object of its answers by key,
    app.export.keys.bundle_of). Several pages may share a directory (a film and its steps'
    walkthroughs: app.export.film), each its answers in a `folder` of its own (the manifest's)."""
    (out / folder).mkdir(parents=True, exist_ok=True)
    (out / name).write_text(_fluent_map(page), encoding="utf-8")
    (out / FLUENT_FILES).mkdir(parents=True, exist_ok=True)
    for module in sorted(FLUENT_DIR.glob("*.js")):
        (out / FLUENT_FILES / module.name).write_bytes(module.read_bytes())
    if lang in PLOTLY_LOCALES:
        (out / "static" / PLOTLY_LOCALES[lang].name).write_bytes(PLOTLY_LOCALES[lang].read_bytes())
    for loaded in _page_files(page, static_dir):
        target = out / "static" / loaded
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((static_dir / loaded).read_bytes())
    (out / PLOTLY_FILE).write_bytes(PLOTLY_JS.read_bytes())
    files: dict[str, list[tuple[str, bytes]]] = {}
    for key, body in sorted(answers.items()):
        files.setdefault(bundle_of(key) or key, []).append((key, body))
    for key, members in files.items():
        if key.startswith("group:"):
            body = answers_object(members)
        else:
            [(_, body)] = members
        (out / folder / f"{file_name(key)}.json.gz").write_bytes(gz(body))


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
    vendored = {f"static/{path.name}": path for path in [PLOTLY_JS, *PLOTLY_LOCALES.values()]}
    path = vendored.get(f"static/{name}", static_dir / name)
    code = path.read_text(encoding="utf-8") if path in vendored.values() else _text(path)
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

        code = _DYNAMIC_IMPORT.sub(bare, RELATIVE_IMPORT.sub(bare, path.read_text(encoding="utf-8")))
        done[f"xt/js/{name}"] = _FLUENT_IMPORT.sub(
            lambda m: f"{m.group(1)}xt/vendor/fluent/{m.group(2)}{m.group(1)}", code
        )
    if any("xt/vendor/fluent/" in code for code in done.values()):
        done |= _fluent_modules()
    return sorted(done.items())


def _fluent_modules() -> dict[str, str]:
    """@fluent/bundle's modules by bare name, their relative imports made bare (data: URLs
    resolve no relative import)."""

    def bare(match: re.Match) -> str:
        return match.group(0).replace(match.group(1), f"xt/vendor/fluent/{match.group(1).removeprefix('./')}")

    return {
        f"xt/vendor/fluent/{path.name}": RELATIVE_IMPORT.sub(bare, path.read_text(encoding="utf-8"))
        for path in sorted(FLUENT_DIR.glob("*.js"))
    }
