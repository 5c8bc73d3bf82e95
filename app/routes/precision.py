"""GET /api/traces/{id}/precision: a bfloat16 or float16 step's numbers' health (app.traces.precision)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from app.deps import ServicesDep, TraceDep
from app.encoding import json_safe
from app.errors import BAD_FIELD, NOT_FOUND, SpecError
from app.schemas.precision import PrecisionHealth
from app.traces.pool import VIEWS
from app.traces.precision import precision_json
from app.words.said import Said

router = APIRouter(prefix="/api", tags=["traces"])


@router.get(
    "/traces/{trace_id}/precision",
    response_model=PrecisionHealth,
    responses={**NOT_FOUND, **BAD_FIELD},
    summary="A low-precision step's numbers' health against its float64 twin",
)
async def precision_health(request: Request, services: ServicesDep, ctx: TraceDep) -> dict:
    """Every recorded tensor's and gradient's relative error, flushed, subnormal and overflowed
    shares and exponent histogram, each parameter's gradient's, the share of each parameter's
    update a low-precision weight would lose, the op table and the first tensor that loses
    information; 422 for a float32 or float64 trace (nothing rounded to compare)."""
    if ctx.trace.precision is None:
        raise SpecError(("path", "trace_id"), Said("error-precision-not-low", trace=ctx.spec.id, dtype=ctx.spec.dtype))
    return json_safe(await services.answers.run(precision_json, ctx.trace, pool=VIEWS, request=request))
