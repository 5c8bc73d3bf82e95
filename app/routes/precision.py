"""GET /api/traces/{id}/precision: a bfloat16 or float16 step's numbers' health (app.traces.precision)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request

from app.buglab import quiz
from app.deps import ServicesDep, TraceDep
from app.encoding import json_safe
from app.errors import BAD_FIELD, NOT_FOUND, QUIZ_HEALTH, SpecError
from app.schemas.precision import PrecisionHealth
from app.traces.pool import VIEWS
from app.traces.precision import precision_json
from app.traces.working import check_bytes, view_bytes
from app.words.said import Said

router = APIRouter(prefix="/api", tags=["traces"])


@router.get(
    "/traces/{trace_id}/precision",
    response_model=PrecisionHealth,
    responses={**NOT_FOUND, **BAD_FIELD, **QUIZ_HEALTH},
    summary="A low-precision step's numbers' health against its float64 twin",
)
async def precision_health(request: Request, services: ServicesDep, ctx: TraceDep) -> dict:
    """Every recorded tensor's and gradient's relative error, flushed, subnormal and overflowed
    shares and exponent histogram, each parameter's gradient's, the share of each parameter's
    update a low-precision weight would lose, the op table and the first tensor that loses
    information; 422 for a float32 or float64 trace (nothing rounded to compare); 403 for a quiz's
    (a planted fault's huge gradients overflow the format where it sits)."""
    if ctx.spec.quiz is not None or quiz.hides_weights(ctx.spec):
        raise HTTPException(403, detail=Said("error-precision-quiz"))
    if ctx.trace.precision is None:
        raise SpecError(("path", "trace_id"), Said("error-precision-not-low", trace=ctx.spec.id, dtype=ctx.spec.dtype))
    # every segment replayed beside its float64 twin's, as a job of every step's checks, and a view's work
    nbytes = check_bytes(ctx.trace) + view_bytes(ctx.trace)
    async with services.room.held(nbytes, ctx, request=request):
        return json_safe(await services.answers.run(precision_json, ctx.trace, pool=VIEWS, request=request))
