"""The engineer's bench (docs/api.md): one page of a recorded tensor's numbers cut on the server,
and the same step of two aligned traces side by side. Both read traces through Services (the
only build path, with admission) and compute in the worker pool."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import Response

from app.answers import encode, record_at
from app.buglab import quiz
from app.deps import FigureSeq, LangDep, OffLoopJSONRoute, ServicesDep, StepIndex
from app.encoding import encoded_response
from app.errors import BAD_FIELD, NOT_FOUND, QUIZ_COMPARED, QUIZ_WEIGHTS, SpecError, check_range
from app.schemas.bench import StepCompare, TensorSlice
from app.spec.core_words import core_said
from app.steps import compare, slices
from app.traces import tensors
from app.traces.pool import VIEWS
from app.traces.working import compare_bytes, tensor_bytes
from app.words.said import Said

router = APIRouter(prefix="/api", tags=["api"], responses={**NOT_FOUND, **BAD_FIELD}, route_class=OffLoopJSONRoute)
MAX_QUERY_CHARS = 200  # rows, cols, at, find: a few digits (a token's text at most this long)


@router.get(
    "/traces/{trace_id}/tensors/{name}/slice",
    response_model=TensorSlice,
    responses=QUIZ_WEIGHTS,
    summary="One page of a recorded tensor (or its gradient): rows × columns of its last two axes",
)
async def get_slice(
    request: Request,
    services: ServicesDep,
    trace_id: str,
    name: str,
    grad: bool = Query(False, description="the gradient dL/d(name) instead of the value"),
    at: str | None = Query(
        None, max_length=MAX_QUERY_CHARS, description='every leading axis\'s index, "0,3" (default 0s)'
    ),
    rows: str | None = Query(None, max_length=MAX_QUERY_CHARS, description='"start:stop" of the second-to-last axis'),
    cols: str | None = Query(None, max_length=MAX_QUERY_CHARS, description='"start:stop" of the last axis'),
    find: str | None = Query(None, max_length=MAX_QUERY_CHARS, description="start the rows (or columns) at this token"),
    find_in: Literal["rows", "cols"] | None = Query(None, description="where to find it (default: rows, then columns)"),
) -> Response:
    ctx = await services.trace(trace_id, request)
    services.answers.refuse_hidden_weights(request, ctx, name, grad)

    def cut() -> tuple[bytes, bytes | None]:  # a tensor inside a layer is recomputed with it (xt_core.recompute)
        array = tensors.tensor_array(ctx.trace, name, grad)
        return encode(slices.tensor_slice(ctx, name, grad, array, at, rows, cols, find, find_in))

    try:
        async with services.room.held(tensor_bytes(ctx.trace, name, grad), ctx, request=request):
            body, zipped = await services.run(cut, pool=VIEWS, request=request)
    except KeyError as exc:
        raise HTTPException(
            404, detail=Said("error-tensor-unknown-short", reason=core_said(str(exc.args[0])), trace=trace_id)
        ) from None
    return encoded_response(request, body, gzipped=zipped)


@router.get(
    "/traces/{trace_id}/steps/{index}/compare/{b}",
    response_model=StepCompare,
    responses=QUIZ_COMPARED,
    summary="The same step of two aligned traces: A, B and B − A with relative-difference stats",
)
async def get_compare(
    request: Request,
    services: ServicesDep,
    lang: LangDep,
    trace_id: str,
    b: Annotated[str, Path(description="the other trace's id (POST its spec first)")],
    index: StepIndex,
    seq: FigureSeq = 0,
    param: str | None = Query(
        None, max_length=MAX_QUERY_CHARS, description="the update step: the parameter (default: the one it shows)"
    ),
) -> Response:
    first = await services.trace(trace_id, request)
    second = await services.trace(b, request)  # Services: admitted, the only way a trace is built
    if any(ctx.spec.quiz is not None or quiz.hides_weights(ctx.spec) for ctx in (first, second)):
        raise HTTPException(403, detail=Said("error-compare-quiz"))
    compare.check_aligned(first, second)
    record_at(first, index)
    check_range("seq", seq, first.n_seq, Said("error-why-trace-sequences", count=first.n_seq))
    if param is not None and first.trace.records[index].phase != "update":
        raise SpecError(("query", "param"), Said("error-compare-param"))
    build = partial(compare.compare_view, first, second, index, seq, param, lang)
    # both traces' replays and B − A count in the one budget: the compare waits for them
    nbytes = compare_bytes(first.trace, compare.working_bytes(first, index, param))
    async with services.room.held(nbytes, first, second, request=request):
        body, zipped = await services.run(lambda: encode(build()), pool=VIEWS, request=request)
    return encoded_response(request, body, gzipped=zipped)
