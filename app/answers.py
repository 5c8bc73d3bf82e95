# Over 350 lines: every answer built from a trace goes one way, and a quiz's seals (its verdict, its own weights) on that way.
"""Every answer built from a trace, made one way: a step's view, its gradient check, one enlarged
head, a softmax row's Jacobian, a fault's diff, one parameter's update, the trace's summary and a
recorded tensor.

    key      AnswerKey: which answer, of which trace, for which request values, sealed or not
    cache    the encoded answer by key (JSON and gzipped JSON, bounded by settings.step_cache_bytes);
             a hit answers without the trace, so an evicted trace is rebuilt only for new work
    trace    Services.trace / Services.context: through admission, the only way a trace is built
    checks   the values the trace bounds (a step index, a head, a position) before any work
    check    the step's gradient check computed (cached in Services.gradchecks) or deferred
    seal     a quiz trace's answer without its verdict (app.buglab.quiz), applied to the answer
             itself before it is encoded
    encode   once, in the worker pool

Routes validate their parameters' types and call one method; all blocking work runs in the
worker pool (Services.run)."""

from __future__ import annotations

import gzip
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, replace
from functools import partial

from fastapi import HTTPException, Request
from fastapi.responses import Response

from app.buglab import quiz
from app.buglab import views as buglab_views
from app.buglab.quiz import QuizLedger
from app.encoding import GZIP_MIN_BYTES, compact_json, encoded_response, json_safe
from app.errors import SpecError, check_range
from app.sessions.voters import Voters
from app.spec import ResolvedSpec, without_faults
from app.spec.core_words import core_said
from app.steps import heads, jacobian, summary, update, view
from app.steps.context import TraceContext
from app.steps.gradcheck import gradcheck_json
from app.steps.registry import kind_of
from app.traces import downloads, tensors
from app.traces.admission import Held
from app.traces.cache import LRU
from app.traces.downloads import Downloads
from app.traces.pool import BUILDS, LIGHT, VIEWS
from app.traces.room import Room
from app.traces.store import TraceStore
from app.traces.working import check_bytes, diff_bytes, tensor_bytes, view_bytes
from app.words.said import Said
from xt_core.checks.directional import StepCheck
from xt_core.checks.gradcheck import check_record
from xt_core.trace import Record

Encoded = tuple[bytes, bytes | None]  # an answer's JSON, and the same gzipped (None when too short to gain)
Prepare = Callable[[TraceContext], Awaitable[Callable[[], object]]]

# A tensor's JSON up to this many entries is encoded in the light thread (~0.1 s with gzip); a bigger
# one (up to settings.max_json_tensor_entries, 4×: ~0.5 s) in the worker pool. A .npy answer streams.
LIGHT_TENSOR_ENTRIES = 1 << 16
MAX_ANSWERS = 100_000  # entries of the answer cache (its bytes are the real bound)


@dataclass(frozen=True)
class AnswerKey:
    what: str  # "summary", "step", "check", "head", "jacobian", "diff", "update"
    trace_id: str
    args: tuple = ()  # the request's values the answer depends on
    sealed: bool = False  # a quiz's answer before its verdict is shown
    lang: str = "en"  # the language of the answer's words (app/words)
    weights_hidden: bool = False  # a quiz's answer before its own weights may be shown (app.buglab.quiz)


def encode(answer: object) -> Encoded:
    """The answer as compact JSON (bytes are JSON already), and gzipped where that gains."""
    body = answer if isinstance(answer, bytes) else compact_json(json_safe(answer))
    return body, gzip.compress(body, compresslevel=5) if len(body) >= GZIP_MIN_BYTES else None


def record_at(ctx: TraceContext, index: int) -> Record:
    """Step `index` of the trace; 404 beyond its steps."""
    n = len(ctx.trace.records)
    if not 0 <= index < n:
        raise HTTPException(404, detail=Said("error-step-out-of-range", index=str(index), last=n - 1))
    return ctx.trace.records[index]


class Answers:
    """The answers of the trace routes (see the module's docstring), cached by AnswerKey. The app's
    services (app.services.Services) build it and hand it what it works with."""

    def __init__(
        self,
        cache_bytes: int,
        *,
        store: TraceStore,
        trace: Callable[[str, Request | None], Awaitable[TraceContext]],
        context: Callable[[ResolvedSpec, Request | None], Awaitable[TraceContext]],
        run: Callable[..., Awaitable],
        gradchecks: LRU[StepCheck],
        quiz_ledger: QuizLedger,
        voters: Voters,
        twin_room: Callable[..., AbstractAsyncContextManager],
        room: Room,
    ):
        self.store = store  # the specs of the ids handed out
        self.trace = trace  # a known id's trace, through admission, rebuilt if evicted; 404 if unknown
        self.context = context  # a spec's trace, through admission
        self.run = run  # fn(*args) in a worker pool (pool=, request=: app.traces.pool)
        self.gradchecks = gradchecks  # a step's gradient check, by (trace id, step)
        self.quiz_ledger = quiz_ledger  # a quiz's probes and answer, per trace and learner
        self.voters = voters  # the learner identities a quiz counts by
        self.twin_room = twin_room  # holds the float64 bytes a check replays in, before its job is queued
        self.room = (
            room  # a job's working bytes, held before it is queued, its traces let go meanwhile (app.traces.room)
        )
        self.cache: LRU[Encoded] = LRU(MAX_ANSWERS, cache_bytes, sizeof=lambda v: len(v[0]) + len(v[1] or b""))
        self.downloads = Downloads()  # the .npy downloads under way, by client (settings.max_download_bytes_per_client)

    # ------------------------------------------------------------------ the one path

    def _hit(self, request: Request, key: AnswerKey) -> Response | None:
        encoded = self.cache.get(key)
        return None if encoded is None else encoded_response(request, encoded[0], gzipped=encoded[1])

    async def _answer(
        self,
        request: Request,
        key: AnswerKey,
        prepare: Prepare,
        seal: Callable[[dict], dict] | None = None,
        ctx: TraceContext | None = None,
        nbytes: Callable[[TraceContext], int] = lambda ctx: view_bytes(ctx.trace),
        check: int | None = None,
        also: tuple[TraceContext, ...] = (),
    ) -> Response:
        """The cached answer of `key`, or: the trace (admitted), `prepare(ctx)` checks the request
        against it and returns the blocking builder, which runs in the views pool (app.traces.pool)
        holding its working bytes, `nbytes(ctx)`, in the one budget (app.traces.room);
        a sealed key's answer goes through `seal` before it is encoded. `check`: the step whose
        gradient check it computes, with the builds instead, its float64 bytes held before its job is
        queued (Services.twin_room; a sealed check computes nothing). While it waits for them, the
        traces it reads (ctx's, and `also`'s: a diff's correct trace) are let go (app.traces.room)."""
        if (hit := self._hit(request, key)) is not None:
            return hit
        ctx = ctx or await self.trace(key.trace_id, request)
        build = await prepare(ctx)
        compute = partial(_encoded, build, seal if key.sealed else None)
        if check is None:
            held, pool = self.room.held(nbytes(ctx), ctx, *also, request=request), VIEWS
        else:
            held, pool = nullcontext() if key.sealed else self.twin_room(ctx, check, request), BUILDS
        async with held:
            encoded = await self.run(self.cache.get_or_compute, key, compute, pool=pool, request=request)
        return encoded_response(request, encoded[0], gzipped=encoded[1])

    def sealed(self, request: Request, trace_id: str, index: int | None = None) -> bool:
        """Whether a quiz hides this trace's verdict (at step `index`, or anywhere) from the
        request's learner (app.sessions.voters; none yet: every verdict hidden). The key's
        `sealed` flag keeps the two answers apart in the cache: an unsealed answer is served
        only to a learner for whom this is False."""
        spec = self.store.spec(trace_id)
        if spec is None:  # forgotten: sealed, so no cached unsealed answer of a quiz answers it
            return True
        if spec.quiz is None:
            return False
        return self.quiz_ledger.sealed(trace_id, self.voters.of(request), index)

    def weights_hidden(self, request: Request, spec: ResolvedSpec | None) -> bool:
        """Whether the trace runs on a quiz's own weights hidden from the request's learner (until
        they answered or their class's presenter revealed; a quiz's correct twin: always)."""
        hidden = spec is not None and quiz.hides_weights(spec)
        return hidden and (spec.quiz is None or self.sealed(request, spec.id))

    def refuse_hidden_weights(self, request: Request, ctx: TraceContext, name: str, grad: bool) -> None:
        if not grad and name in ctx.trace.param_names and self.weights_hidden(request, ctx.spec):
            raise quiz.weights_refused(ctx.spec.id, name)  # a 403: its gradient passes

    def check_of(self, ctx: TraceContext, index: int) -> StepCheck:
        """Step `index`'s gradient check, computed once per trace (blocking: in the pool)."""
        return self.gradchecks.get_or_compute((ctx.spec.id, index), lambda: check_record(ctx.trace, index))

    # ------------------------------------------------------------------ POST /api/traces

    async def summary(self, request: Request, spec: ResolvedSpec, lang: str = "en") -> Response:
        """The trace's summary (app.steps.summary), its trace built if it must be (Services.build:
        admitted, and a spec that trains only for a writer). A summary cached keeps the id known
        even while its trace is not."""
        key = AnswerKey("summary", spec.id, lang=lang)
        hit = self._hit(request, key)
        if hit is not None:
            self.store.remember(spec)
            return hit
        ctx = await self.context(spec, request)
        return await self._answer(request, key, _build(summary.trace_summary, ctx, lang), ctx=ctx)

    # ------------------------------------------------------------------ GET .../steps/{index}

    async def step(self, request: Request, trace_id: str, index: int, seq: int, pos: int, lang: str = "en") -> Response:
        """A step's view (app.steps.view) with its check, or pending where the trace defers it."""
        hidden = self.weights_hidden(request, self.store.spec(trace_id))
        key = AnswerKey("step", trace_id, (index, seq, pos), self.sealed(request, trace_id, index), lang, hidden)
        if (hit := self._hit(request, key)) is not None:
            return hit
        ctx = await self.trace(trace_id, request)
        record = record_at(ctx, index)
        check_range("seq", seq, ctx.n_seq, Said("error-why-trace-sequences", count=ctx.n_seq))
        check_range("pos", pos, ctx.T, Said("error-why-trace-positions", count=ctx.T))
        if not kind_of(record).reads_pos:  # one view for every pos
            pos, key = 0, replace(key, args=(index, seq, 0))
        checked = not (key.sealed or view.check_deferred(ctx))  # a small model's check, in its view
        held = view_bytes(ctx.trace, index) + (check_bytes(ctx.trace, index) if checked else 0)
        prepare = _build(self._step_body, ctx, index, seq, pos, key)
        return await self._answer(request, key, prepare, ctx=ctx, nbytes=lambda _: held)

    def _step_body(self, ctx: TraceContext, index: int, seq: int, pos: int, key: AnswerKey) -> bytes:
        check = None if key.sealed or view.check_deferred(ctx) else self.check_of(ctx, index)
        hidden = quiz.hidden_figures(ctx) if key.weights_hidden else frozenset()
        seal = partial(quiz.seal_step if key.sealed else quiz.without_figures, hidden=hidden)
        return view.step_view_json(ctx, index, seq, pos, check, seal=seal, lang=key.lang, sealed=key.sealed)

    async def check(self, request: Request, trace_id: str, index: int, lang: str = "en") -> Response:
        """{index, gradcheck, warning}: the badge of a step view answered before its check, and
        its failed-check warning (null when it passed); sealed: {"sealed": true}, no warning."""
        key = AnswerKey("check", trace_id, (index,), self.sealed(request, trace_id, index), lang)

        async def prepare(ctx: TraceContext):
            record_at(ctx, index)  # 404 for a step the trace has not
            if key.sealed:
                return lambda: {"index": index, "gradcheck": quiz.SEALED_CHECK, "warning": None}
            return partial(self._check_body, ctx, index, lang)

        # a deferred check (a real model's) is seconds of float64 work: with the builds, not the views
        return await self._answer(request, key, prepare, check=index)

    def _check_body(self, ctx: TraceContext, index: int, lang: str) -> dict:
        record = ctx.trace.records[index]  # the trace's as the job runs: it may have been rebuilt meanwhile
        check = self.check_of(ctx, index)
        warning = view.failed_check_warning(ctx, record, check, lang)
        return {"index": index, "gradcheck": gradcheck_json(check, ctx.spec.canonical["dtype"]), "warning": warning}

    async def head(
        self, request: Request, trace_id: str, index: int, figure: str | None, head: int, seq: int, lang: str = "en"
    ) -> Response:
        """One head of a step's grid of attention heads at full resolution (app.steps.heads)."""

        async def prepare(ctx: TraceContext):
            record = record_at(ctx, index)
            grids = heads.head_grids(ctx, index)
            if not grids:
                raise SpecError(("query", "figure"), Said("error-no-head-grid", index=str(index), name=record.name))
            if figure is not None and figure not in grids:
                shown = Said("error-not-a-head-grid", grids=str(grids), value=repr(figure))
                raise SpecError(("query", "figure"), shown)
            check_range("head", head, ctx.trace.cfg.n_head, Said("error-why-model-heads", count=ctx.trace.cfg.n_head))
            check_range("seq", seq, ctx.n_seq, Said("error-why-trace-sequences", count=ctx.n_seq))
            return partial(heads.head_view, ctx, index, figure or grids[0], head, seq, lang)

        key = AnswerKey("head", trace_id, (index, figure, head, seq), lang=lang)
        return await self._answer(request, key, prepare, nbytes=lambda ctx: view_bytes(ctx.trace, index))

    # ------------------------------------------------------------------ GET .../jacobian, .../diff, .../update

    async def jacobian(
        self,
        request: Request,
        trace_id: str,
        layer: str,
        head: int,
        pos: int | None,
        seq: int,
        top_k: int | None,
        lang: str = "en",
    ) -> Response:
        """One softmax row's Jacobian and the chain-rule check (app.steps.jacobian); sealed: no ✓/✗.
        `top_k` None: the output softmax shows DEFAULT_TOP_K tokens, or every token of a smaller vocabulary."""

        async def prepare(ctx: TraceContext):
            layer_index, shown = _jacobian_layer(ctx, layer, head, top_k)
            check_range("seq", seq, ctx.n_seq, Said("error-why-trace-sequences", count=ctx.n_seq))
            row = ctx.T - 1 if pos is None else pos
            check_range("pos", row, ctx.T, Said("error-why-trace-positions", count=ctx.T))
            return partial(jacobian.jacobian_view, ctx, layer_index, head, seq, row, shown, lang)

        key = AnswerKey("jacobian", trace_id, (layer, head, pos, seq, top_k), self.sealed(request, trace_id), lang)
        return await self._answer(request, key, prepare, seal=quiz.seal_jacobian)

    async def diff(self, request: Request, trace_id: str, index: int, seq: int, lang: str = "en") -> Response:
        """A backward step of a faulty trace against the correct trace's (app.buglab.views), both
        traces admitted. A quiz's comparison is what a probe buys (its figures, the verdict and
        the arriving/contribution flags all point at the broken op): 403 until the learner
        probed the step or answered."""
        if self.sealed(request, trace_id, index):
            probe = {"path": f"/api/traces/{trace_id}/quiz/probe", "body": f'{{"step": {index}}}'}
            raise HTTPException(403, detail=Said("error-diff-costs-probe", index=str(index), **probe))

        key = AnswerKey("diff", trace_id, (index, seq), lang=lang)
        if (hit := self._hit(request, key)) is not None:
            return hit
        ctx = await self.trace(trace_id, request)
        if not ctx.spec.faults:
            raise HTTPException(404, detail=Said("error-diff-no-fault", trace=ctx.spec.id))
        record = record_at(ctx, index)
        if record.phase != "backward":
            raise SpecError(("path", "index"), Said("error-diff-not-backward", index=str(index), phase=record.phase))
        check_range("seq", seq, ctx.n_seq, Said("error-why-trace-sequences", count=ctx.n_seq))
        correct = await self.context(without_faults(ctx.spec), request)
        prepare = _build(buglab_views.diff_view, ctx, correct, index, seq, lang)
        held = diff_bytes(ctx.trace, index)
        return await self._answer(request, key, prepare, ctx=ctx, nbytes=lambda _: held, also=(correct,))

    async def update(self, request: Request, trace_id: str, param: str, lang: str = "en") -> Response:
        """{param, figures}: one parameter's ΔW beside its gradient on the update step."""
        if self.weights_hidden(request, self.store.spec(trace_id)):  # with weight decay, ΔW beside g gives W
            raise quiz.weights_refused(trace_id)

        async def prepare(ctx: TraceContext):
            if ctx.trace.update is None:
                raise HTTPException(404, detail=Said("error-no-update-step", trace=ctx.spec.id))
            if param not in ctx.trace.update.per_param:
                names = ", ".join(ctx.trace.update.per_param)
                raise SpecError(("query", "param"), Said("error-no-parameter", name=repr(param), names=names))
            return lambda: {"param": param, "figures": update.param_figures(ctx, param, lang)}

        return await self._answer(request, AnswerKey("update", trace_id, (param,), lang=lang), prepare)

    # ------------------------------------------------------------------ GET .../tensors/{name}

    async def tensor(
        self, request: Request, trace_id: str, name: str, grad: bool, as_json: bool, *, client: str
    ) -> Response:
        """A recorded tensor or its gradient: a .npy file streamed from the array's own memory,
        or JSON (refused past settings.max_json_tensor_entries before a list is made of it).
        Not cached: the trace holds the array already. A .npy download first takes its place among
        its `client`'s (settings.max_download_bytes_per_client or _per_address; 429 past them, before
        any work: app.traces.downloads), given back with its bytes when its response ends."""
        ctx = await self.trace(trace_id, request)
        self.refuse_hidden_weights(request, ctx, name, grad)
        if as_json:
            return await self._tensor(request, ctx, name, grad, None)
        try:
            place = self.downloads.take(client, downloads.array_bytes(ctx.trace, name), ctx.settings)
        except KeyError as exc:
            raise _unknown_tensor(exc, trace_id) from None
        try:
            return await self._tensor(request, ctx, name, grad, place)
        except BaseException:
            place()
            raise

    async def _tensor(
        self, request: Request, ctx: TraceContext, name: str, grad: bool, place: Callable[[], None] | None
    ) -> Response:
        """`tensor`: a .npy download with its `place` (its client's), JSON without."""
        try:  # in the pool: a tensor inside a layer is recomputed with it (xt_core.recompute)
            async with self.room.held(tensor_bytes(ctx.trace, name, grad), ctx, request=request) as held:
                array = await self.run(tensors.tensor_array, ctx.trace, name, grad, pool=VIEWS, request=request)
                # a .npy's array, recomputed or summed, may leave the recompute cache while it streams
                # (one the trace keeps, a weight or a boundary, is counted with it already)
                streaming = None if place is None else held.keep(0 if ctx.trace.keeps(array) else array.nbytes)
        except KeyError as exc:
            raise _unknown_tensor(exc, ctx.spec.id) from None
        if streaming is not None:
            return await self._npy(ctx, name, grad, array, streaming, place)
        too_big = tensors.check_json_size(name, array, ctx.settings.max_json_tensor_entries)
        if too_big is not None:  # SmolLM2's embedding would be 560 MB of JSON
            raise SpecError(("query", "format"), too_big)
        pool = LIGHT if array.size <= LIGHT_TENSOR_ENTRIES else VIEWS
        answer = partial(tensors.tensor_json, name, array, grad)
        body, zipped = await self.run(_encoded, answer, None, pool=pool, request=request)
        return encoded_response(request, body, gzipped=zipped)

    async def _npy(
        self, ctx: TraceContext, name: str, grad: bool, array, held: Held, place: Callable[[], None]
    ) -> tensors.HeldWhileSent:
        """The array as a .npy file, streamed from its own memory, its bytes held (and its client's
        place taken) until the response ends: sent, the client gone, or a piece it did not take in
        settings.download_send_timeout_seconds."""
        try:  # only a non-contiguous array is copied (in the pool); every recorded one is contiguous
            pool = LIGHT if array.flags.c_contiguous or array.size <= LIGHT_TENSOR_ENTRIES else VIEWS
            length, pieces = await self.run(tensors.npy_stream, array, ctx.trace, pool=pool)
        except BaseException:
            held()
            raise

        def let_go() -> None:
            try:
                held()
            finally:
                place()

        filename = f"{name}{'.grad' if grad else ''}.npy"
        return tensors.HeldWhileSent(
            pieces,
            let_go,
            send_timeout_s=ctx.settings.download_send_timeout_seconds,
            media_type="application/octet-stream",
            headers={"Content-Disposition": f'attachment; filename="{filename}"', "Content-Length": str(length)},
        )


def _unknown_tensor(exc: KeyError, trace_id: str) -> HTTPException:
    return HTTPException(404, detail=Said("error-tensor-unknown", reason=core_said(str(exc.args[0])), trace=trace_id))


def _build(fn, *args) -> Prepare:
    """A `prepare` for an answer whose request was checked already: it builds fn(*args)."""

    async def prepare(_ctx: TraceContext):
        return partial(fn, *args)

    return prepare


def _encoded(build: Callable[[], object], seal: Callable[[dict], dict] | None) -> Encoded:
    answer = build()
    return encode(seal(answer) if seal is not None else answer)


def _jacobian_layer(ctx: TraceContext, layer: str, head: int, top_k: int | None) -> tuple[int | None, int]:
    """The layer index (None for the output softmax) and the tokens the output softmax shows;
    the query's head or top_k checked (a top_k not given: DEFAULT_TOP_K, at most the vocabulary)."""
    cfg = ctx.trace.cfg
    if layer == "output":
        limit = min(cfg.vocab_size, ctx.settings.max_top_k)
        if top_k is None:
            return None, min(jacobian.DEFAULT_TOP_K, limit)
        if not 1 <= top_k <= limit:
            raise SpecError(("query", "top_k"), Said("error-top-k-between", most=limit, value=str(top_k)))
        return None, top_k
    try:
        layer_index = int(layer)
    except ValueError:
        raise SpecError(("query", "layer"), Said("error-layer-integer", value=repr(layer))) from None
    check_range("layer", layer_index, cfg.n_layer, Said("error-why-model-layers", count=cfg.n_layer))
    check_range("head", head, cfg.n_head, Said("error-why-model-heads", count=cfg.n_head))
    return layer_index, 0  # an attention row shows every key up to the query
