"""Static assets: Plotly.js (xt's own bundle, vendored in app/vendor/plotly), and the page's own files.

The browser parses Plotly.js before the first figure draws, so the pages load a bundle with
only the trace types xt draws (scatter, bar, heatmap: 1.2 MB) rather than the full 4.8 MB
one (app/vendor/plotly/README.md: how it is built). It is read and gzip-compressed once, kept
in memory, and served under a URL naming its version and content hash with an immutable
one-year cache, so a browser downloads it once per build. The page's own JS/CSS (/static) is
small and changes with every xt release, so browsers revalidate it on each load (a cheap 304)
instead of guessing.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import pass_context

router = APIRouter(include_in_schema=False)

PLOTLY_JS = Path(__file__).resolve().parent.parent / "vendor" / "plotly" / "plotly-xt.min.js"
FLUENT_DIR = Path(__file__).resolve().parent.parent / "vendor" / "fluent"
# Plotly's own words (the mode bar's) and its figures' decimal mark by language: plotly.js 4.1.1's
# dist/plotly-locale-<lang>.js, vendored beside the bundle (a new language's is one file dropped
# there: docs/translating.md); English is the bundle's own.
PLOTLY_LOCALE_PREFIX = "plotly-locale-"
PLOTLY_LOCALES = {
    path.stem.removeprefix(PLOTLY_LOCALE_PREFIX): path
    for path in sorted(PLOTLY_JS.parent.glob(f"{PLOTLY_LOCALE_PREFIX}*.js"))
}
IMMUTABLE = "public, max-age=31536000, immutable"
# The first line of the bundle's banner names the plotly.js release it was built from.
_BANNER_VERSION = re.compile(rb"plotly\.js v(\d+\.\d+\.\d+)")
# A static import or re-export of a relative module: `import {a, b} from "./x.js";`, `import "../y.js";`.
RELATIVE_IMPORT = re.compile(r"""^\s*(?:import|export)\s(?:[^"';]*?\sfrom\s*)?["'](\.{1,2}/[^"']+)["']""", re.M)


@dataclass(frozen=True)
class Bundle:
    version: str  # the plotly.js release
    raw: bytes
    gzipped: bytes
    digest: str  # the SHA-256 of `raw`, 16 hex digits: its URL and ETag change with any rebuild

    @property
    def etag(self) -> str:
        return f'"{self.digest}"'

    @property
    def tag(self) -> str:
        """What the URL names: the release and the content."""
        return f"{self.version}-{self.digest}"


_bundle_lock = threading.Lock()


def plotly_bundle() -> Bundle:
    """The compressed bundle, built once: concurrent first requests wait for the one build
    (lru_cache alone lets each of them compress 1.2 MB at once)."""
    with _bundle_lock:
        return _build_bundle()


def bundle_version(raw: bytes) -> str:
    """The plotly.js release a bundle was built from, read from its banner."""
    match = _BANNER_VERSION.search(raw[:300])
    if match is None:
        raise ValueError(f"{PLOTLY_JS} names no plotly.js version in its first 300 bytes")
    return match.group(1).decode()


@lru_cache(maxsize=1)
def _build_bundle() -> Bundle:
    raw = PLOTLY_JS.read_bytes()
    # mtime=0 keeps the compressed bytes (and so any proxy's copy) identical across restarts.
    gzipped = gzip.compress(raw, compresslevel=9, mtime=0)
    return Bundle(bundle_version(raw), raw, gzipped, hashlib.sha256(raw).hexdigest()[:16])


def plotly_url() -> str:
    """The URL pages load Plotly.js from (app.main builds the bundle at startup)."""
    return f"/assets/plotly-{plotly_bundle().tag}.min.js"


@pass_context
def plotly_locale_url(context) -> str:
    """The URL of Plotly's locale for the page's language, or "" (English: the bundle's own)."""
    from app.words.jinja import page_lang

    lang = page_lang(context)
    return f"/assets/plotly-locale-{lang}.js" if lang in PLOTLY_LOCALES else ""


@router.get("/assets/plotly-locale-{lang}.js")
def plotly_locale(lang: str) -> Response:
    if lang not in PLOTLY_LOCALES:
        raise HTTPException(404, f"no Plotly locale for {lang!r}; this server has {', '.join(PLOTLY_LOCALES)}")
    body = PLOTLY_LOCALES[lang].read_bytes()
    return Response(body, media_type="text/javascript", headers={"Cache-Control": "no-cache"})


def _accepts_gzip(request: Request) -> bool:
    for part in request.headers.get("accept-encoding", "").split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip().lower() in ("gzip", "*") and params.replace(" ", "") not in ("q=0", "q=0.0"):
            return True
    return False


@router.get("/assets/plotly-{tag}.min.js")
def plotly_js(tag: str, request: Request) -> Response:
    bundle = plotly_bundle()
    if tag != bundle.tag:
        raise HTTPException(404, f"this server has another plotly.js bundle: {plotly_url()}")
    headers = {"Cache-Control": IMMUTABLE, "ETag": bundle.etag, "Vary": "Accept-Encoding"}
    if request.headers.get("if-none-match") == bundle.etag:
        return Response(status_code=304, headers=headers)
    if _accepts_gzip(request):
        headers["Content-Encoding"] = "gzip"
        return Response(bundle.gzipped, media_type="text/javascript", headers=headers)
    return Response(bundle.raw, media_type="text/javascript", headers=headers)


class RevalidatedStaticFiles(StaticFiles):
    """/static with `Cache-Control: no-cache`: ES modules import each other by plain URL,
    so a versioned URL cannot reach them; revalidation (ETag -> 304) keeps them fresh."""

    def file_response(self, *args, **kwargs) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["Cache-Control"] = "no-cache"
        return response


# ---------------------------------------------------------------------- module preloads


@lru_cache(maxsize=256)
def _relative_imports(path: Path, mtime_ns: int) -> tuple[str, ...]:
    """The relative module specifiers `path` imports (cached until the file changes)."""
    return tuple(RELATIVE_IMPORT.findall(path.read_text(encoding="utf-8")))


def module_graph(static_dir: Path, entry: str) -> list[str]:
    """Every module the ES module static/js/<entry> imports, directly or not, as /static URLs
    in the order found. A page lists them as <link rel="modulepreload">: the browser then
    fetches them all at once instead of one level of imports after another."""
    root = (static_dir / "js").resolve()
    seen: dict[Path, None] = {}
    todo = [root / entry]
    while todo:
        path = todo.pop(0)
        for spec in _relative_imports(path, path.stat().st_mtime_ns):
            target = (path.parent / spec).resolve()
            if target not in seen and target.is_relative_to(root) and target.is_file():
                seen[target] = None
                todo.append(target)
    return [f"/static/js/{p.relative_to(root).as_posix()}" for p in seen]


@pass_context
def module_preloads(context, entry: str) -> list[str]:
    """Template global: module_graph of the request's app's static directory."""
    return module_graph(context["request"].app.state.settings.static_dir, entry)
