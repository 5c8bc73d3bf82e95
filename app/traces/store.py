"""Trace cache: traces by spec id in an LRU bounded by bytes. An evicted trace is rebuilt
from its spec (a trace is a pure function of it); the spec map is bounded by count."""

from __future__ import annotations

import gc
import sys
import threading
import weakref
from collections import OrderedDict

import numpy as np

import xt_core
from app.settings import Settings
from app.spec import ResolvedSpec
from app.spec.cost import steps_and_borrowed
from app.traces import training
from xt_core import memory
from xt_core.lab import faults
from xt_core.names import estimate_trace_bytes
from xt_core.recompute import RECOMPUTED


def build_trace(spec: ResolvedSpec, progress: training.TrainingProgress | None = None) -> xt_core.Trace:
    if spec.run is not None:  # a recorded run's step: its weights from the run's checkpoint, replayed
        return training.rebuild(spec, progress)
    params = training.initial_params(spec)  # the checkpoint's weights, or a seeded random init
    # the bug lab's faults, as the step takes them: step name -> the faulty backward rule
    planted = {"backward_override": faults.overrides(spec.cfg, spec.faults, spec.fault_layer)}
    if spec.precision is not None:  # a bfloat16 or float16 step (app.spec.precision)
        planted["precision"] = spec.precision
    if spec.optimizer is not None:  # a training step: spec.train_steps updates, then the recorded one
        return training.build(spec, params, progress, **planted)
    return xt_core.forward_backward(spec.cfg, params, spec.inputs, spec.targets, **planted)


def held_bytes(spec: ResolvedSpec) -> int:
    """What a spec's trace holds once built (Trace.nbytes(), an upper bound), its weights counted as
    app.spec.cost.spec_cost counts them: the rest of its build's bytes are gone when it is cached."""
    (n_seq, T), (steps, borrowed), itemsize = spec.inputs.shape, steps_and_borrowed(spec), np.dtype(spec.dtype).itemsize
    return estimate_trace_bytes(spec.cfg, n_seq, T, itemsize, shared_params=borrowed and itemsize == 4 and not steps)


class TraceStore:
    """Traces in an LRU bounded by bytes (settings.cache_bytes) and by steps (settings.cache_steps:
    the Python objects every full garbage collection walks), and the specs of the ids handed out
    in an LRU bounded by count (settings.max_specs): an id forgotten there is a 404 asking the
    client to POST its spec again.

    One byte budget, cache_bytes, holds every trace this store built that is still alive: cached,
    or evicted but still in use (a request drawing a view, a background check job, the faulty
    trace of a diff while its correct twin builds), plus the builds in flight (`reserve` makes room
    for a build's estimated bytes before it starts, evicting cached traces; the finished trace
    takes its reservation's place). A trace counts Trace.nbytes() (its boundaries: xt_core.recompute)
    and the update step's arrays until it is garbage-collected, so evicting a trace in use frees
    nothing in the budget. The process's cache of recomputed segments counts in the same budget:
    it holds up to its floor (settings.recompute_bytes), which it gives up to a build before the
    cached traces do, and beyond it grows into the budget's free room (`free_room`: what no trace
    alive, reservation or kept buffer takes), which it gives back first, before anything else is
    counted, and never takes by evicting a trace (issue 37: reading a SmolLM2 step in order keeps
    its 773 MB of forwards at 256 positions). The large buffers xt_core.memory keeps free for the
    next step count too, and go before the floor (issue 35, finding 7: two float64 (V, C) buffers
    of SmolLM2 are 453 MB).
    """

    def __init__(self, settings: Settings):
        self.settings = settings
        self.progress = training.TrainingProgress()  # trainings in flight, polled by the walk page
        self._traces: OrderedDict[str, tuple[xt_core.Trace, int]] = OrderedDict()
        self._specs: OrderedDict[str, ResolvedSpec] = OrderedDict()
        self._bytes = 0  # of the cached traces
        self._live = 0  # of every trace built here and not yet collected: cached or in use
        self._steps = 0  # sum of len(trace.records) over the cached traces
        self._reserved = 0  # estimated bytes of the builds admitted and not yet cached
        # reentrant: dropping an evicted trace's last reference runs its finalizer (_collected)
        # in the thread that evicted it, with the lock held
        self._lock = threading.RLock()
        self._building: dict[str, threading.Lock] = {}
        # per build thread: its reservation's bytes beyond what its trace will hold (_build)
        self._lent = threading.local()
        # A server that froze its heap at startup (app.warmup.settle_heap) freezes each trace it
        # caches too (put): a class's thirty SmolLM2 traces are 175,000 objects (1,092 steps of
        # ~5.5), ~50 ms of every full collection on an idle core and several times that under
        # load, all of it with the GIL held. A trace holds no reference cycle (tests/app/test_load.py),
        # so an evicted one is freed by its reference count, frozen or not.
        self.freeze_cached = False
        # the recomputed segments of every trace (one per process), within the same budget: the
        # store's free room, through a weak reference (a store no longer used offers none)
        room = _room_of(weakref.ref(self))
        RECOMPUTED.resize(min(settings.recompute_bytes, settings.cache_bytes // 4), room)
        memory.pool_within(room)  # the large buffers kept, too, only in free room

    @property
    def nbytes(self) -> int:
        """Bytes of the cached traces."""
        return self._bytes

    @property
    def live_bytes(self) -> int:
        """Bytes of every trace built here and still alive (cached or in use)."""
        return self._live

    def __len__(self) -> int:
        return len(self._traces)

    def remember(self, spec: ResolvedSpec) -> None:
        with self._lock:
            self._remember(spec)

    def _remember(self, spec: ResolvedSpec) -> None:  # with self._lock held
        self._specs[spec.id] = spec
        self._specs.move_to_end(spec.id)
        while len(self._specs) > max(1, self.settings.max_specs):
            self._specs.popitem(last=False)

    def spec(self, trace_id: str) -> ResolvedSpec | None:
        with self._lock:
            return self._specs.get(trace_id)

    def cached(self, spec: ResolvedSpec) -> xt_core.Trace | None:
        """The trace if it is in the cache, else None; never builds, so the event loop may call
        it (the lock is only ever held for dictionary updates) and skip a trip through the pool."""
        with self._lock:
            self._remember(spec)
            hit = self._traces.get(spec.id)
            if hit is None:
                return None
            self._traces.move_to_end(spec.id)
            return hit[0]

    def inventory(self) -> list[tuple[str, int, bool]]:
        """The cached traces, oldest first: id, bytes counted, whether anything beyond the cache holds it
        (benchmarks/memory_mix.py --sample reads it at the peaks)."""
        with self._lock:
            return [(trace_id, entry[1], self._in_use(trace_id)) for trace_id, entry in self._traces.items()]

    def building(self, trace_id: str) -> bool:
        """Whether a build of this id is under way (a second request waits for it)."""
        with self._lock:
            return trace_id in self._building

    @property
    def reserved(self) -> int:
        return self._reserved

    def free_room(self) -> int:
        """The budget's bytes no trace alive, reservation or kept buffer takes: the recomputed
        segments' room beyond their floor; in a build's own thread, with its reservation's bytes
        beyond its trace's (_build). Read without the lock (RECOMPUTED asks with its own held, and
        reserve holds this one while trimming RECOMPUTED); a count that moves meanwhile is put
        right by the next reserve or put (_fit_recomputed)."""
        lent = getattr(self._lent, "nbytes", 0)
        return self.settings.cache_bytes - (self._live + self._reserved + memory.kept_bytes()) + lent

    def reserve(
        self, nbytes: int, kept: int = 0, force: bool = False, spare: frozenset[str] = frozenset()
    ) -> Reservation | None:
        """Room for a build of `nbytes` (estimated) within cache_bytes, made now by evicting cached
        traces nobody else holds; None, evicting nothing, when the traces in use and the builds
        already admitted leave too little, or less than `kept` bytes beside it (the small lane's).
        `force`: reserved anyway, once everything that can go has (admission's work that runs alone).
        `spare`: the ids of traces the work will take again as it starts (a request that let them go
        while it waited: app.traces.room), counted as in use and not evicted."""
        with self._lock:
            left = self.settings.cache_bytes - (self._live - self._freeable(spare) + self._reserved + nbytes)
            if kept > left and not force:
                return None
            # counted before the recomputed segments give their room back: none grows into it after
            self._reserved += nbytes
            self._fit_recomputed()
            # what is left is shared by the kept large buffers (shed first), the recomputed segments'
            # floor, then the cached traces nobody holds
            memory.trim_kept(left - RECOMPUTED.nbytes)
            RECOMPUTED.trim(left - memory.kept_bytes())
            self._evict(keep=0, only_free=True, spare=spare)
            return Reservation(nbytes)

    def release(self, reservation: Reservation | None) -> None:
        """Gives back what a build reserved and did not use (it failed, hit the cache, or never ran)."""
        if reservation is None:
            return
        with self._lock:
            self._reserved -= reservation.take()
            self._shed_past_budget()

    def _shed_past_budget(self) -> None:  # with self._lock held
        """What is past the budget once a reservation ends let go, the kept large buffers first, then
        the recomputed segments (their floor too): a job that ran alone, past the budget, frees its
        arrays into the pool and its replays into the cache as it ends, and no reservation comes
        to make room (issue 35, finding 7: 324 MB of buffers and 216 of segments at a mix's peak)."""
        kept = memory.kept_bytes()
        over = self._counted() - self.settings.cache_bytes
        if over > 0 and kept:
            memory.trim_kept(max(0, kept - over))
            over -= min(kept, over)
        if over > 0:
            RECOMPUTED.trim(max(0, RECOMPUTED.nbytes - over))

    def split(self, reservation: Reservation, nbytes: int) -> Reservation:
        """At most `nbytes` of a reservation as one of its own (held on; the rest stays in the first)."""
        with self._lock:
            part = min(nbytes, reservation.nbytes)
            reservation.nbytes -= part
            return Reservation(part)

    def get(self, spec: ResolvedSpec, reservation: Reservation | None = None, joined: bool = False) -> xt_core.Trace:
        """The trace for a spec, from the cache or built now (blocking: call off the event loop).
        Concurrent requests for one spec build it once. `joined`: admitted at no cost to wait for
        a build under way; should that trace be gone (evicted) by the time this runs, NotBuilt:
        building it again must be admitted."""
        hit = self.cached(spec)
        if hit is not None:
            return hit
        with self._lock:
            build_lock = self._building.setdefault(spec.id, threading.Lock())
        try:
            with build_lock:
                hit = self.cached(spec)  # built by the request this one waited for
                if hit is not None:
                    return hit
                if joined:
                    raise NotBuilt(spec.id)
                return self._build(spec, reservation)
        finally:
            with self._lock:  # also when the build failed: no lock left behind per spec
                if self._building.get(spec.id) is build_lock:
                    del self._building[spec.id]

    def _build(self, spec: ResolvedSpec, reservation: Reservation | None) -> xt_core.Trace:
        """Builds and caches. The build's forwards are memory its reservation counts (its peak), and
        what it does not hand over to the recomputed segments it frees before put: the handover
        (xt_core.model) may use that room, all of the reservation but the trace's own bytes. Until
        put they count twice (the reservation's and the segments'): over-counted, never under."""
        self._lent.nbytes = 0 if reservation is None else max(0, reservation.nbytes - held_bytes(spec))
        try:
            trace = build_trace(spec, self.progress)
        finally:
            self._lent.nbytes = 0
        return self.put(spec, trace, reservation)

    def put(self, spec: ResolvedSpec, trace: xt_core.Trace, reservation: Reservation | None = None) -> xt_core.Trace:
        """Caches `trace` as the trace of `spec`: one this store built, or one built elsewhere
        (a notebook's, app.notebook: its export holds it for the export's few seconds)."""
        size = trace.nbytes() + training.update_nbytes(trace)
        with self._lock:
            self._remember(spec)
            if reservation is not None:  # the trace takes its reservation's place
                self._reserved -= reservation.take()
            self._forget(spec.id)  # built again beside a copy still cached (several workers)
            self._traces[spec.id] = (trace, size)
            self._bytes += size
            self._live += size
            weakref.finalize(trace, self._collected, size)
            self._steps += len(trace.records)
            self._fit_recomputed()  # a trace larger than its estimate: the segments' growth goes first
            memory.trim_kept(self.settings.cache_bytes - (self._live + RECOMPUTED.nbytes + self._reserved))
            self._evict(keep=1)
        if self.freeze_cached:
            gc.collect(1)  # the young cyclic garbage goes first: frozen, it would never be collected
            gc.freeze()
        return trace

    def _fit_recomputed(self) -> None:  # with self._lock held
        """The recomputed segments back within their floor or the free room, whichever is larger:
        what they grew beyond it given back, oldest first, before anything else is counted."""
        RECOMPUTED.trim(max(RECOMPUTED.max_bytes, self.free_room()))

    def _freeable(self, spare: frozenset[str] = frozenset()) -> int:  # with self._lock held
        """Bytes evicting would free: the cached traces nothing else holds (but those spared)."""
        return sum(
            entry[1] for trace_id, entry in self._traces.items() if trace_id not in spare and not self._in_use(trace_id)
        )  # no name binds a trace

    def _in_use(self, trace_id: str) -> bool:  # with self._lock held
        """Whether anything beyond the cache holds the cached trace (a request, a check job, a
        stream). CPython's count: a trace held by nothing else has two references here, its
        cache entry's and getrefcount's argument."""
        return sys.getrefcount(self._traces[trace_id][0]) > 2

    def _forget(self, trace_id: str) -> None:  # with self._lock held
        old = self._traces.pop(trace_id, None)
        if old is not None:
            self._bytes -= old[1]
            self._steps -= len(old[0].records)

    def _collected(self, size: int) -> None:
        with self._lock:
            self._live -= size

    def _evict(
        self, keep: int, room: int = 0, only_free: bool = False, spare: frozenset[str] = frozenset()
    ) -> None:  # with self._lock held
        """Evicts the oldest cached traces while over the bounds, keeping the `keep` newest (and,
        only_free, every trace in use: evicting it would free nothing; and those spared)."""
        for trace_id in list(self._traces):
            if not self._over_bounds(room) or len(self._traces) <= keep:
                return
            if trace_id in spare or (only_free and self._in_use(trace_id)):
                continue
            self._forget(trace_id)  # the last reference, unless the trace is in use: then it still counts

    def _over_bounds(self, room: int) -> bool:  # with self._lock held
        over_bytes = self._counted() + room > self.settings.cache_bytes
        return over_bytes or self._steps > self.settings.cache_steps

    def _counted(self) -> int:
        """Every byte the budget counts: traces alive, reservations and holds, recomputed segments,
        kept large buffers."""
        return self._live + self._reserved + RECOMPUTED.nbytes + memory.kept_bytes()


def _room_of(store: weakref.ref[TraceStore]):
    """The store's free room while it is alive, then none."""

    def room() -> int:
        alive = store()
        return 0 if alive is None else alive.free_room()

    return room


class NotBuilt(Exception):
    """The build a request waited for is gone from the cache: its own build must be admitted."""


class Reservation:
    """Bytes a build holds in the store's bound until its trace is cached (or it gives them back)."""

    def __init__(self, nbytes: int):
        self.nbytes = nbytes

    def take(self) -> int:  # with the store's lock held: at most once
        nbytes, self.nbytes = self.nbytes, 0
        return nbytes
