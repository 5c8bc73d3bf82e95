"""The bug lab's routes (contract in docs/api.md): the catalogue, every step's gradient
check, the faulty-vs-correct diff of a backward step, the quiz's answer and its start page.
Thin: validate, find the trace(s), hand the work to app.buglab_views in the worker pool."""

from __future__ import annotations

import asyncio
import threading
import time
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel, Field, ValidationError, field_validator

from app import buglab_views
from app.buglab import default_fault_layer, new_quiz_seed
from app.checks import ChecksBusy, ChecksRunner
from app.errors import BAD_BODY, BAD_FIELD, NOT_FOUND, not_a_boolean
from app.panels import TraceContext
from app.routes.api import Overloaded, check_range, run, services, timed, trace_context
from app.serialize import json_response, json_safe
from app.spec import CONFIG_FIELDS, SpecError, TraceSpec, resolve, without_faults

router = APIRouter(tags=["bug lab"], responses=BAD_FIELD)
_runner_lock = threading.Lock()


def checks_runner(request: Request) -> ChecksRunner:
    state = request.app.state
    with _runner_lock:
        if not hasattr(state, "checks_runner"):
            svc = services(request)
            # running checks hold their traces: together at most what the trace cache may hold
            max_running = state.settings.cache_bytes
            state.checks_runner = ChecksRunner(svc.executor, svc.gradchecks, max_running_bytes=max_running)
        return state.checks_runner


def faulty_context_or_404(ctx: TraceContext) -> None:
    if not ctx.spec.faults:
        raise HTTPException(404, detail=f"trace {ctx.spec.id} runs the correct backward: it has no fault to compare")


@router.get("/api/faults", summary="The bug-lab catalogue: each fault, the op it breaks, whether it applies")
async def list_faults(request: Request) -> Response:
    """Query: a checkpoint `model` or any config field (as on /walk: n_layer, n_head, n_kv_head,
    tie_embeddings, ...), and fault_layer; without them, the default config and its last layer."""
    config, layer, model = {}, None, None
    for key, value in request.query_params.items():
        if key in CONFIG_FIELDS:
            config[key] = value
        elif key == "fault_layer":
            layer = value
        elif key == "model":
            model = value or None
        else:
            raise SpecError(("query", key), f"unknown parameter {key!r}: give model or config fields, and fault_layer")
    try:
        spec = TraceSpec.model_validate({"model": model, "config": config or None, "tokens": [0, 0]})
        cfg = resolve(spec, request.app.state.settings).cfg
    except SpecError as exc:
        raise SpecError(("query", exc.loc[-1]), exc.msg) from None
    except ValidationError as exc:  # a value that is not a number
        field = next((str(p) for p in reversed(exc.errors()[0]["loc"]) if str(p) in CONFIG_FIELDS), "config")
        raise SpecError(("query", field), f"{field}: {exc.errors()[0]['msg']}") from None
    if layer in (None, ""):
        layer = default_fault_layer(cfg)
    elif not (layer.isdigit() and int(layer) < cfg.n_layer):
        raise SpecError(("query", "fault_layer"), f"fault_layer must be between 0 and {cfg.n_layer - 1}, got {layer!r}")
    return json_response(request, json_safe(buglab_views.catalogue(cfg, int(layer))))


@router.get(
    "/api/traces/{trace_id}/checks",
    responses=NOT_FOUND,
    summary="Every step's gradient check (computed in the background)",
)
async def get_checks(
    request: Request,
    trace_id: str,
    wait: bool = Query(False, description="answer only once every step is checked (else: progress so far)"),
) -> Response:
    started = time.perf_counter()
    runner = checks_runner(request)
    job = runner.get(trace_id)
    if job is None:  # the trace (rebuilt if evicted; 404 if unknown) only to start a job
        try:
            job = runner.start(trace_id, (await trace_context(request, trace_id)).trace)
        except ChecksBusy as exc:
            raise Overloaded(exc.running) from None
    if wait:
        await asyncio.wrap_future(job.finished)
    payload = job.final_view or await run(request, lambda: json_safe(buglab_views.checks_view(job)))
    if payload["complete"]:
        job.final_view = payload  # nothing changes any more: draw the chart once
    return timed(json_response(request, payload), started)


@router.get(
    "/api/traces/{trace_id}/steps/{index}/diff",
    responses=NOT_FOUND,
    summary="A backward step: faulty vs correct gradients",
)
async def get_diff(
    request: Request,
    trace_id: str,
    index: int = Path(description="a backward step of a trace run with faults"),
    seq: int = Query(0, description="which sequence of the batch the figures show"),
) -> Response:
    started = time.perf_counter()
    ctx = await trace_context(request, trace_id)
    faulty_context_or_404(ctx)
    records = ctx.trace.records
    if not 0 <= index < len(records):
        raise HTTPException(404, detail=f"step {index} is out of range: this trace has steps 0 to {len(records) - 1}")
    if records[index].phase != "backward":
        raise SpecError(
            ("path", "index"), f"step {index} is a {records[index].phase} step: faults change backward steps only"
        )
    check_range("seq", seq, ctx.n_seq, f"the trace has {ctx.n_seq} sequence(s)")
    store = request.app.state.store
    correct_spec = without_faults(ctx.spec)
    correct = TraceContext(correct_spec, await run(request, store.get, correct_spec), ctx.settings)
    payload = await run(request, lambda: json_safe(buglab_views.diff_view(ctx, correct, index, seq)))
    return timed(json_response(request, payload), started)


class QuizAnswer(BaseModel):
    step: int = Field(description="index of the backward step the learner names as broken")

    _number = field_validator("step", mode="before")(not_a_boolean)


@router.post(
    "/api/traces/{trace_id}/quiz/answer",
    responses={**NOT_FOUND, **BAD_BODY},
    summary="The quiz: name the broken step, get the fault revealed",
)
async def answer_quiz(request: Request, trace_id: str, answer: QuizAnswer) -> Response:
    ctx = await trace_context(request, trace_id)
    if ctx.spec.quiz is None:
        raise HTTPException(404, detail=f"trace {trace_id} is not a quiz; start one at /quiz")
    records = ctx.trace.records
    check_range_body(answer.step, len(records))
    if records[answer.step].phase != "backward":
        raise SpecError(
            ("body", "step"),
            f"step {answer.step} is a {records[answer.step].phase} step: the bug is in a backward step",
        )
    return json_response(request, json_safe(buglab_views.quiz_answer(ctx, answer.step)))


def check_range_body(step: int, n: int) -> None:
    if not 0 <= step < n:
        raise SpecError(("body", "step"), f"step must be between 0 and {n - 1} (the trace's steps), got {step}")


@router.get("/quiz", include_in_schema=False)
def start_quiz(request: Request) -> Response:
    """A new quiz: the spec of the query (the default model without one) with a fresh quiz
    seed; the fault it hides is resolved from the seed on the server only."""
    params = {k: v for k, v in request.query_params.items() if k not in ("quiz", "faults", "step")}
    params["quiz"] = str(new_quiz_seed())
    return RedirectResponse(f"/walk?{urlencode(params)}", status_code=303)
