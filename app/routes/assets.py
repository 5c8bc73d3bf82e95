"""Static assets: Plotly.js from the installed plotly package, and the page's own files.

Plotly.js is ~4.8 MB; it is read and gzip-compressed once, kept in memory, and served under
a versioned URL with an immutable one-year cache, so a browser downloads it once per
plotly release. The page's own JS/CSS (/static) is small and changes with every xt
release, so browsers revalidate it on each load (a cheap 304) instead of guessing.
"""

from __future__ import annotations

import gzip
import hashlib
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import plotly
from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.staticfiles import StaticFiles
from plotly.offline import get_plotlyjs_version

router = APIRouter(include_in_schema=False)

PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
IMMUTABLE = "public, max-age=31536000, immutable"


@dataclass(frozen=True)
class Bundle:
    version: str
    raw: bytes
    gzipped: bytes
    etag: str


_bundle_lock = threading.Lock()


def plotly_bundle() -> Bundle:
    """The compressed bundle, built once: concurrent first requests wait for the one build
    (lru_cache alone lets each of them compress 4.8 MB at once)."""
    with _bundle_lock:
        return _build_bundle()


@lru_cache(maxsize=1)
def plotly_version() -> str:
    return get_plotlyjs_version()


@lru_cache(maxsize=1)
def _build_bundle() -> Bundle:
    raw = PLOTLY_JS.read_bytes()
    # mtime=0 keeps the compressed bytes (and so any proxy's copy) identical across restarts.
    gzipped = gzip.compress(raw, compresslevel=9, mtime=0)
    etag = '"' + hashlib.sha256(raw).hexdigest()[:16] + '"'
    return Bundle(plotly_version(), raw, gzipped, etag)


def plotly_url() -> str:
    """The versioned URL pages load Plotly.js from."""
    return f"/assets/plotly-{plotly_version()}.min.js"  # pages need the version, not the bytes


def _accepts_gzip(request: Request) -> bool:
    for part in request.headers.get("accept-encoding", "").split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip().lower() in ("gzip", "*") and params.replace(" ", "") not in ("q=0", "q=0.0"):
            return True
    return False


@router.get("/assets/plotly-{version}.min.js")
def plotly_js(version: str, request: Request) -> Response:
    bundle = plotly_bundle()
    if version != bundle.version:
        raise HTTPException(404, f"this server has plotly.js {bundle.version}; see {plotly_url()}")
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
