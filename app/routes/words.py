"""The catalogues for the pages: GET /words/<lang>.ftl is the language's Fluent resource, the same
text the server reads (app.words.catalogue_text), for static/js/lib/words.js. Revalidated on each
load (an ETag of its content), like /static."""

from __future__ import annotations

import hashlib
from functools import lru_cache

from fastapi import APIRouter, HTTPException, Request, Response

from app import words

router = APIRouter(include_in_schema=False)


@lru_cache(maxsize=len(words.LANGUAGES))
def _catalogue(lang: str) -> tuple[bytes, str]:
    body = words.catalogue_text(lang).encode("utf-8")
    return body, '"' + hashlib.sha256(body).hexdigest()[:16] + '"'


@router.get("/words/{lang}.ftl")
def catalogue(lang: str, request: Request) -> Response:
    if lang not in words.LANGUAGES:
        raise HTTPException(404, f"no catalogue for language {lang!r}; this server has {', '.join(words.LANGUAGES)}")
    body, etag = _catalogue(lang)
    headers = {"Cache-Control": "no-cache", "ETag": etag}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="text/plain; charset=utf-8", headers=headers)
