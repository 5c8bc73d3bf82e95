"""Checkpoints and training from the page: the model listing, uploads, the progress of a
training run, and one parameter's ΔW on the update step. Routes stay thin: app.models,
app.upload and app.update_view do the work, in the worker pool when it is CPU or disk."""

from __future__ import annotations

import time

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import JSONResponse, Response

from app import update_view, views
from app.errors import BAD_FIELD, NOT_FOUND, UPLOAD_REFUSED, SpecError
from app.models import CheckpointError, UploadQuotaError, describe, registry
from app.routes.api import run, timed, trace_context
from app.serialize import json_response, json_safe
from app.upload import UploadError, parse_multipart, read_body, the_file

router = APIRouter(prefix="/api", tags=["models"])

_UPLOAD_BODY = {
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "properties": {"file": {"type": "string", "format": "binary"}},
                "required": ["file"],
            }
        }
    },
    "required": True,
}


@router.get("/models", summary="Checkpoints (demo models first, then uploads) and the random-init presets")
async def list_models(request: Request) -> dict:
    models = await run(request, registry(request.app.state.settings).listing, light=True)
    return json_safe({"models": models, "presets": views.presets()})


@router.post(
    "/models",
    status_code=201,
    responses={**UPLOAD_REFUSED, **BAD_FIELD},
    summary="Upload a checkpoint (xt .safetensors / .npz, or llama2.c .bin); answers its name",
    openapi_extra={"requestBody": _UPLOAD_BODY},
)
async def upload_model(request: Request) -> Response:
    settings = request.app.state.settings
    limit = settings.max_upload_bytes
    try:
        body = await read_body(request.stream(), request.headers.get("content-length"), limit)
        upload = the_file(parse_multipart(body, request.headers.get("content-type")), limit)
    except UploadError as exc:
        return _refused(exc)
    models = registry(settings)
    try:
        name = await run(request, models.store_upload, upload.data, upload.suffix, upload.filename, settings)
    except CheckpointError as exc:
        raise SpecError(("body", "file"), str(exc)) from None
    except UploadQuotaError as exc:
        return JSONResponse(status_code=507, content={"detail": str(exc)})
    info = models.info(name)
    return JSONResponse(
        status_code=201, content=json_safe({"name": name, "model": describe(info, models.summary(info))})
    )


def _refused(exc: UploadError) -> Response:
    if exc.status == 422:
        raise SpecError(("body", "file"), exc.message)
    return JSONResponse(status_code=exc.status, content={"detail": exc.message})


@router.get("/traces/{trace_id}/progress", summary="How far the training before a trace's step has got")
async def training_progress(request: Request, trace_id: str) -> dict:
    """{state: pending|training|done|failed, done, total, loss, seconds}; `pending` also for
    an id the server has not started (the page polls while its POST is under way)."""
    progress = request.app.state.store.progress.get(trace_id)
    return json_safe(progress or {"state": "pending", "done": 0, "total": None, "loss": None, "seconds": 0.0})


@router.get(
    "/traces/{trace_id}/update",
    responses={**NOT_FOUND, **BAD_FIELD},
    summary="The update step for one parameter: ΔW beside its gradient",
)
async def update_parameter(
    request: Request, trace_id: str, param: str = Query(description="a parameter name, e.g. layers.0.attention.wq")
) -> Response:
    started = time.perf_counter()
    ctx = await trace_context(request, trace_id)
    if ctx.trace.update is None:
        raise HTTPException(404, detail=f"trace {trace_id} has no update step: its spec names no optimizer")
    if param not in ctx.trace.update.per_param:
        names = ", ".join(ctx.trace.update.per_param)
        raise SpecError(("query", "param"), f"no parameter named {param!r}; this model has: {names}")
    figures = await run(request, lambda: json_safe(update_view.param_figures(ctx, param)))
    return timed(json_response(request, {"param": param, "figures": figures}), started)
