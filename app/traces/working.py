"""The working bytes of the jobs run on a built trace, beyond what the trace keeps (Trace.nbytes),
and where they are held in the one budget (app.traces.admission: Admission.hold), so that a class's
mix stays within cache_bytes + 512 MB + the weights (issue 35, finding 7).

    view      a step's view, a head, a Jacobian, an update's figures, a summary: the segment it
              replays (xt_core.recompute), the figures, their tables and JSON
    diff      a faulty step against the correct trace's: a view's work on each trace, the
              step's own segment replayed (a layer's, or the head's)
    compare   two traces' same step: a view's on each, and B − A (app.steps.compare.working_bytes)
    tensor    a recorded tensor or its gradient (.npy, JSON, a slice): its segment replayed; a
              parameter's gradient, every reader's replay and their sum; a .npy's array until
              its last piece is sent
    check     a step's gradient check, in float64: the float32 trace's twin while it is built, or
              the float64 segments a check replays (as large); the update step's check, the
              parameters moved in float64 besides

Measured with tracemalloc (the peak over what was traced before the request, one request at a
time, SmolLM2-135M; the mix's texts): `.venv/bin/python benchmarks/working_bytes.py`. SmolLM2 at
84 positions, float32: views ≤ 140 MiB (the output softmax's and the logits' backward; most
under 32), a diff ≤ 55 MiB once the correct trace is built (a step outside the layers: ≤ 108), a
compare of the logits 242 MiB, the embedding's gradient as .npy 169-216 MiB (its array, 108 MiB,
held on while it streams: Held.keep), a step's check 97-376 MiB (481 for the first: the twin),
the update step's check (AdamW) 547-563 MiB; at 42 positions in float64, views ≤ 216 MiB. The class
preset's largest view: 23 MiB (its norms'); a tiny spec's: 0.6 MiB.

Where a job's bytes are held: on the event loop before the job is queued (`Room.held`; a check:
app.services twin_room, hold_checking), never in a worker thread (one waiting for bytes would keep
every job behind it waiting: a tiny spec's summary behind a SmolLM2 view, or a build behind a check).
A job of the views pool (one thread) past small_build_bytes holds them one at a time: a second one
held while it waits for the thread would count its bytes twice and keep a build waiting for nothing.
A small one (a tiny spec's view) holds its bytes at once, past large ones waiting, in the small lane's
room (app.traces.admission). While a job waits for its bytes, or its turn, its request lets go of
the traces the job reads (Room.hold_for): they stay cached and evictable."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol

import numpy as np
from fastapi import Request

from app.spec import ResolvedSpec
from app.spec.cost import largest_param_bytes
from app.traces.admission import Held
from xt_core import Trace
from xt_core.checks.twin import KEPT_FORWARD_BYTES
from xt_core.config import Config
from xt_core.model import param_shapes
from xt_core.names import BUILD_COPIES, estimate_build_bytes, recorded_elements

MiB = 1 << 20
# What a view's figures, tables and their JSON take whatever the model (the class preset's norm
# views: 23 MiB; SmolLM2's feed-forward views: 28 MiB).
VIEW_FLOOR = 32 * MiB

LetGo = Callable[[], None]


def head_bytes(cfg: Config, n_seq: int, T: int, itemsize: int) -> int:
    """The largest segment a job replays: the head's, its (V, C) weight's gradient (the largest
    parameter) and two (B, T, V) arrays (the logits and their probabilities)."""
    return largest_param_bytes(cfg, itemsize) + 2 * n_seq * T * cfg.vocab_size * itemsize


def _head(trace: Trace) -> int:
    n_seq, T = trace.tokens.shape
    return head_bytes(trace.cfg, n_seq, T, trace.dtype.itemsize)


def view_bytes(trace: Trace) -> int:
    """A view of one of the trace's steps (SmolLM2, 84 positions, float32: 172 MiB; measured ≤ 140)."""
    return _head(trace) + VIEW_FLOOR


def step_bytes(trace: Trace, index: int) -> int:
    """The segment a view of step `index` replays: a layer's values and gradients (BUILD_COPIES of
    its recorded entries) and its weights' gradients, or, for a step outside the layers (the
    embedding, the final norm, the head, the loss), the head's (head_bytes)."""
    layer = trace.records[index].layer
    if layer is None:
        return _head(trace)
    cfg, (n_seq, T), itemsize = trace.cfg, trace.tokens.shape, trace.dtype.itemsize
    entries = recorded_elements(cfg, n_seq, T, where=lambda row: row.per_layer) // cfg.n_layer
    prefix = f"layers.{layer}."  # xt_core.recorded.LAYER_PREFIX
    weights = sum(int(np.prod(shape)) for name, shape in param_shapes(cfg).items() if name.startswith(prefix))
    return (BUILD_COPIES * entries + weights) * itemsize


def diff_bytes(faulty: Trace, index: int) -> int:
    """A diff of step `index`: a view's work on the faulty trace and on its correct twin (the same
    sizes), each the step's segment (SmolLM2 at 84 positions, a layer's step: 116 MiB; measured ≤ 108)."""
    return 2 * (step_bytes(faulty, index) + VIEW_FLOOR)


def compare_bytes(a: Trace, difference: int) -> int:
    """A compare of two aligned traces (the same sizes): a view's work on each, and B − A."""
    return 2 * view_bytes(a) + difference


def tensor_bytes(trace: Trace, name: str, grad: bool) -> int:
    """A recorded tensor or its gradient: a parameter's gradient sums its readers' (SmolLM2's tied
    embedding: the embedding's and the head's)."""
    readers = 2 if grad and name in trace.param_names else 1
    return readers * _head(trace) + VIEW_FLOOR


def twin_build_bytes(cfg: Config, n_seq: int, T: int) -> int:
    """The most a float32 trace's float64 twin holds while it is built (xt_core.checks.twin), beyond
    the boundaries Trace.nbytes counts up front: its latest segments' forward up to
    KEPT_FORWARD_BYTES, three segments' worth more for its backward, and a float64 copy of the
    largest parameter. SmolLM2: 32 positions 442 MiB (tracemalloc peak 356 MB, docs/performance.md),
    84 positions 535 MiB (481), 256 positions 700 MiB (peak 670 MB)."""
    forward = estimate_build_bytes(cfg, n_seq, T, 8, shared_params=True)
    segment = forward // max(1, cfg.n_layer)
    return min(forward, KEPT_FORWARD_BYTES + 3 * segment) + largest_param_bytes(cfg, 8)


def check_bytes(trace: Trace, index: int | None = None) -> int:
    """A gradient check of step `index` (None: of every step, a check job), float32 or float64: the
    twin's build covers the float64 segments every later check replays (≤ 376 MiB for SmolLM2 at 84
    positions); the update step's check moves the parameters in float64 besides (547-563 MiB)."""
    n_seq, T = trace.tokens.shape
    held = twin_build_bytes(trace.cfg, n_seq, T)
    update = trace.update is not None and (index is None or trace.records[index].phase == "update")
    return held + (largest_param_bytes(trace.cfg, 8) if update else 0)


class Reads(Protocol):
    """What a job reads: a trace (let go while the job waits for its bytes) and the spec it is built from."""

    spec: ResolvedSpec
    trace: Trace | None


class Room:
    """Working bytes held in the one budget for a job, through the admission (`hold`: Admission.hold,
    which returns what lets them go); past `small_bytes`, a views job holds them one at a time.

    While a job waits for its bytes (or its turn), its request lets go of the traces the job reads
    (`Reads.trace` set to None): they stay cached, and work that runs past the budget because nothing
    else can (a hold alone) may evict them instead of running beside them (issue 35, finding 7: a
    mix's peak had 1.1 GB of traces pinned by requests waiting their turn beside an AdamW check run
    alone). Its own bytes never evict them (Admission.hold `spare`). Once held, the job takes them
    again from the cache (`cached`); one evicted meanwhile is rebuilt (`rebuild`, through the
    admission) with the bytes let go first (a build never waits behind bytes its own request holds),
    and then the bytes are waited for once more, the traces kept this time."""

    def __init__(
        self,
        hold: Callable[..., Awaitable[Held]],
        small_bytes: int,
        cached: Callable[[ResolvedSpec], Trace | None],
        rebuild: Callable[[ResolvedSpec, Request | None], Awaitable[Trace]],
    ):
        self.hold, self.cached, self.rebuild = hold, cached, rebuild
        self.small_bytes = small_bytes
        self._turn: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None  # the lock of the loop serving

    @contextlib.asynccontextmanager
    async def held(self, nbytes: int, *reads: Reads, request: Request | None = None) -> AsyncIterator[Held]:
        """`nbytes` held for the block, a views job's (waiting for them, and for its turn if large, with
        `reads`' traces let go); the block may keep part of them past its end (Held.keep: a download's
        array while it streams)."""
        for job in reads:
            job.trace = None  # before its turn too: a large job may wait out another's whole run
        async with contextlib.nullcontext() if nbytes <= self.small_bytes else self._large_turn():
            let_go = await self.hold_for(nbytes, *reads, request=request)
            try:
                yield let_go
            finally:
                let_go()

    async def hold_for(
        self, nbytes: int, *reads: Reads, request: Request | None = None, after_builds: bool = False
    ) -> Held:
        """`nbytes` held (Admission.hold), the traces `reads` read let go while it waits and taken again
        once held (rebuilt if evicted meanwhile); returns what lets the bytes go."""
        spare = frozenset(job.spec.id for job in reads)
        for job in reads:
            job.trace = None
        held = await self.hold(nbytes, after_builds=after_builds, spare=spare)
        if self._retaken(reads):
            return held
        held()  # a build waits for bytes: none held by its own request
        for job in reads:
            job.trace = await self.rebuild(job.spec, request)
        return await self.hold(nbytes, after_builds=after_builds)  # its traces kept: no second round

    def _retaken(self, reads: tuple[Reads, ...]) -> bool:
        traces = [self.cached(job.spec) for job in reads]
        if any(trace is None for trace in traces):
            return False
        for job, trace in zip(reads, traces, strict=True):
            job.trace = trace
        return True

    def _large_turn(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()  # an app's lifespan may end and start again on another loop
        if self._turn is None or self._turn[0] is not loop:
            self._turn = (loop, asyncio.Lock())
        return self._turn[1]
