"""Liveness."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response

HEALTHY = b'{"status":"ok"}'

router = APIRouter(tags=["meta"])


@router.get("/healthz", response_class=JSONResponse)
async def healthz() -> Response:
    # On the event loop, no lock, no pool, no encoding: it answers as soon as the loop turns,
    # so a slow /healthz means a blocked loop (what the load test watches), never a busy pool.
    return Response(HEALTHY, media_type="application/json")
