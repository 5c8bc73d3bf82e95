"""What routes share, declared once: the settings, the services (app.services: pools, the
trace store behind admission, the answers built from traces), the trace of a URL's id, and who
may write. Routes take them as `Annotated[..., Depends]` parameters."""

from __future__ import annotations

import json
from typing import Annotated

import anyio
from fastapi import Depends, Path, Query, Request, Security
from fastapi.responses import Response
from fastapi.routing import APIRoute
from fastapi.security import APIKeyHeader

from app import security
from app.services import Services
from app.settings import Settings
from app.steps.context import TraceContext
from app.words.choice import chosen_language

__all__ = ["FigureSeq", "LangDep", "ServicesDep", "SettingsDep", "StepIndex", "TraceDep", "WriterDep"]

# A JSON body up to this size is parsed on the event loop (well under a millisecond); a larger
# one (up to settings.max_body_bytes) in a thread, so /healthz never waits for it.
OFF_LOOP_JSON_BYTES = 64 << 10


def get_services(request: Request) -> Services:
    return request.app.state.services


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


async def get_trace(
    trace_id: str, request: Request, services: Annotated[Services, Depends(get_services)]
) -> TraceContext:
    return await services.trace(trace_id, request)


# The admin key as OpenAPI knows it (a browser sends the cookie that opening /?key=<key> set).
ADMIN_KEY_HEADER = APIKeyHeader(
    name=security.ADMIN_KEY_HEADER,
    auto_error=False,
    description="the admin key `xt serve` prints when bound beyond loopback (needed there for uploads, training, presenting)",
)


def require_writer(request: Request, _key: Annotated[str | None, Security(ADMIN_KEY_HEADER)] = None) -> None:
    """403 unless the request may write: with settings.admin_key set (a server bound beyond
    loopback), it must carry that key. Cross-origin writes never get here (security.Guard)."""
    security.check_writer(request, get_settings(request))


def request_lang(request: Request) -> str:
    """The language of a JSON answer's words: the one rule pages follow (app/words/choice.py:
    ?lang=, then the xt_lang cookie, then Accept-Language, then English)."""
    return chosen_language(request)


ServicesDep = Annotated[Services, Depends(get_services)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
TraceDep = Annotated[TraceContext, Depends(get_trace)]  # the route's {trace_id}, 404 if unknown
WriterDep = Annotated[None, Depends(require_writer)]  # uploads, training, presenting: `_: WriterDep`
LangDep = Annotated[str, Depends(request_lang)]  # the words' language: `lang: LangDep`


class OffLoopJSONRequest(Request):
    async def json(self):
        if not hasattr(self, "_json"):
            body = await self.body()
            if len(body) > OFF_LOOP_JSON_BYTES:
                self._json = await anyio.to_thread.run_sync(json.loads, body)
            else:
                self._json = json.loads(body)
        return self._json


class OffLoopJSONRoute(APIRoute):
    """A route whose JSON body, when large, is parsed in a thread (the body's size is already
    bounded by security.Guard before a byte of it is parsed)."""

    def get_route_handler(self):
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            return await handler(OffLoopJSONRequest(request.scope, request.receive))

        return handle


# Path and query values several trace routes take, described once
StepIndex = Annotated[int, Path(description="position in the trace's step list")]  # {index}
FigureSeq = Annotated[int, Query(description="which sequence of the batch the figures show")]  # `seq: FigureSeq = 0`
