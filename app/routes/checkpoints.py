"""Checkpoints: the model listing and uploads. Routes stay thin: app.checkpoints does the work,
in the worker pool when it is CPU or disk."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import JSONResponse, Response

from app import security
from app.checkpoints import model_words
from app.checkpoints.formats import upload_formats_text
from app.checkpoints.registry import MAX_NAME_CHARS, CheckpointError, UploadQuotaError, describe, registry
from app.checkpoints.upload import UploadError, parse_multipart, read_body, the_file
from app.deps import ServicesDep, SettingsDep, WriterDep
from app.encoding import json_safe
from app.errors import BAD_FIELD, UPLOAD_REFUSED, SpecError
from app.schemas.checkpoints import ModelListing, TokenizePreview, Uploaded
from app.spec import preview
from app.spec.precision import storage_dtype
from app.spec.presets import presets
from app.traces.pool import BUILDS, LIGHT
from app.words.choice import chosen_language
from app.words.said import said_of

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


@router.get(
    "/models",
    response_model=ModelListing,
    response_model_exclude_unset=True,  # the keys an entry has (a demo's measurements, a real model's extras)
    summary="Checkpoints (demo models, real models, uploads), the random-init presets, and the real models "
    "not fetched here (`fetchable`: how to get them)",
)
async def list_models(request: Request, services: ServicesDep, settings: SettingsDep) -> dict:
    models = registry(settings)
    lang = chosen_language(request)  # the models' and presets' words (model_words)
    # milliseconds once each model is read; the first read of a real model's header is not
    ready = all(models.ready(info) for info in models.available())
    listing = await services.run(preview.listing, settings, pool=LIGHT if ready else BUILDS)
    listing = [model_words.model_in(entry, lang) for entry in listing]
    fetchable = [model_words.fetchable_in(entry, lang) for entry in models.absent()]
    return json_safe({"models": listing, "presets": presets(lang), "fetchable": fetchable})


@router.get(
    "/tokenize",
    response_model=TokenizePreview,
    responses=BAD_FIELD,
    summary="A text as a checkpoint's own tokenizer splits it (pieces, count), and the most positions and "
    "training steps the server would take for it",
)
async def tokenize(
    request: Request,
    services: ServicesDep,
    settings: SettingsDep,
    model: str = Query(max_length=MAX_NAME_CHARS, description="a checkpoint's name, as GET /api/models lists it"),
    text: str = Query("", description="a text no longer than the model's positions (the spec's own limit)"),
    dtype: Literal["float32", "float64", "bfloat16", "float16"] = Query(
        "float32", description="the precision training would run in (bfloat16, float16: float32 arrays, its limits)"
    ),
) -> dict:
    info = registry(settings).info(model)
    # the first read of a real model's tokenizer (~1 s) is not a millisecond job
    pool = LIGHT if info is None or registry(settings).ready(info) else BUILDS
    held = storage_dtype(dtype)  # a low-precision step's arrays are float32 (app.spec.precision)
    answer = await services.run(preview.tokenize_preview, model, text, held, settings, pool=pool)
    if answer["tokenizer_label"] is not None:  # a real model's own tokenizer, named in the page's language
        answer["tokenizer_label"] = model_words.tokenizer_label(answer["model"], chosen_language(request))
    return json_safe(answer)


@router.post(
    "/models",
    status_code=201,
    response_model=Uploaded,
    responses={**UPLOAD_REFUSED, **BAD_FIELD, **security.WRITE_REFUSED},
    summary=f"Upload a checkpoint ({upload_formats_text()}); answers its name",
    openapi_extra={"requestBody": _UPLOAD_BODY},
)
async def upload_model(request: Request, services: ServicesDep, settings: SettingsDep, _: WriterDep) -> Response:
    limit = settings.max_upload_bytes
    try:
        body = await read_body(request.stream(), request.headers.get("content-length"), limit)
        upload = the_file(parse_multipart(body, request.headers.get("content-type")), limit)
    except UploadError as exc:
        return _refused(exc)
    models = registry(settings)
    try:
        name = await services.run(
            models.store_upload, upload.data, upload.suffix, upload.filename, settings, request=request
        )
    except CheckpointError as exc:
        raise SpecError(("body", "file"), said_of(exc)) from None
    except UploadQuotaError as exc:
        raise HTTPException(507, said_of(exc)) from None
    info = models.info(name)
    return JSONResponse(
        status_code=201, content=json_safe({"name": name, "model": describe(info, models.summary(info))})
    )


def _refused(exc: UploadError) -> Response:
    if exc.status == 422:
        raise SpecError(("body", "file"), exc.message)
    raise HTTPException(exc.status, exc.message)
