"""The recomputed segments' room in the one budget (issue 37): beyond their floor
(settings.recompute_bytes) they grow into what no trace alive, reservation or kept buffer takes,
never by evicting a cached trace, and give it back first when a build or a hold reserves; the bytes
counted stay within cache_bytes (or, as before, the floor beside what else is counted)."""

from __future__ import annotations

import numpy as np
import pytest

from app.settings import Settings
from app.spec import TraceSpec, resolve
from app.spec.cost import spec_cost
from app.traces.store import TraceStore, held_bytes
from tests.helpers.specs import SMALL_SPEC
from xt_core import memory
from xt_core.recompute import RECOMPUTED, Segments, new_owner

MB = 1 << 20
SEGMENT = 10 * MB  # one recomputed segment's bytes here


@pytest.fixture(autouse=True)
def fresh_recompute_cache(monkeypatch):
    """An empty cache of recomputed segments and no kept buffers; the process's bound restored after."""
    monkeypatch.setattr(memory, "_large_buffers", [])
    monkeypatch.setattr(memory, "_pool_room", [None])
    saved = RECOMPUTED.max_bytes, RECOMPUTED._room
    RECOMPUTED.clear()
    yield
    RECOMPUTED.clear()
    RECOMPUTED.resize(*saved)


def recompute(n: int, owner: int | None = None, first: int = 0) -> int:
    """n segments of SEGMENT bytes recomputed for one trace, in order from `first`; returns its owner key."""
    owner = new_owner() if owner is None else owner
    for segment in range(first, first + n):
        RECOMPUTED.get((owner, "segment", segment), lambda: (np.empty(0), SEGMENT))
    return owner


def counted(store: TraceStore) -> int:
    """Every byte the budget counts: traces alive, reservations, kept buffers, recomputed segments."""
    return store.live_bytes + store.reserved + memory.kept_bytes() + RECOMPUTED.nbytes


def resolved(body: dict, settings: Settings):
    return resolve(TraceSpec.model_validate(body), settings)


def test_the_segments_grow_past_their_floor_into_the_free_room_and_not_past_it():
    store = TraceStore(Settings(cache_bytes=100 * MB, recompute_bytes=SEGMENT))
    recompute(8)
    assert RECOMPUTED.nbytes == 8 * SEGMENT  # nothing else alive: past the 10 MB floor
    recompute(5)
    assert RECOMPUTED.nbytes == 100 * MB == counted(store)  # the whole budget's free room, no more


def test_a_reservation_takes_the_grown_room_back_and_nothing_grows_into_it_while_held():
    store = TraceStore(Settings(cache_bytes=100 * MB, recompute_bytes=SEGMENT))
    owner = recompute(10)
    reservation = store.reserve(60 * MB)
    assert reservation is not None and store.reserved == 60 * MB
    assert RECOMPUTED.nbytes == 40 * MB and counted(store) == 100 * MB
    recompute(3, owner, first=10)  # a reader goes on while the build runs: within what is left
    assert RECOMPUTED.nbytes == 40 * MB
    store.release(reservation)
    recompute(3, owner, first=13)
    assert RECOMPUTED.nbytes == 70 * MB  # the room given back grows again


def test_a_cached_trace_is_never_evicted_for_recomputed_segments():
    """In units of one trace's bytes t: a budget of 10 t, one trace cached (in use by nobody), the
    segments grown into the other 9 t. A second trace, then a reservation of 4 t, take their bytes
    from the segments, not from the cached traces (trimmed only to what evicting would make room
    for, the segments would keep 6 t and both traces would go)."""
    t = TraceStore(Settings()).get(resolved(SMALL_SPEC, Settings())).nbytes()
    settings = Settings(cache_bytes=10 * t, recompute_bytes=0)
    store = TraceStore(settings)
    store.get(resolved(SMALL_SPEC, settings))
    RECOMPUTED.clear()  # the build's own forwards
    for segment in range(40):
        RECOMPUTED.get((new_owner(), "segment", segment), lambda: (np.empty(0), t // 2))
    assert len(store) == 1 and RECOMPUTED.nbytes == 18 * (t // 2)  # all the room the trace leaves
    store.get(resolved({**SMALL_SPEC, "seed": 2}, settings))
    assert len(store) == 2 and counted(store) <= settings.cache_bytes
    assert store.reserve(4 * t) is not None
    assert len(store) == 2 and counted(store) <= settings.cache_bytes


def test_a_build_hands_its_forwards_and_backward_over_into_the_free_room():
    """Room for the whole step: each segment held as its whole replay (xt_core.handover), its forward
    alone given up for it, but the embedding's (the build's backward never runs its lookup's)."""
    settings = Settings(recompute_bytes=0)  # no floor: what it holds is the free room's
    store = TraceStore(settings)
    trace = store.get(resolved(SMALL_SPEC, settings))
    segments = len(Segments.of(trace.nodes, trace.param_names).spans)
    assert sorted(key[1:] for key in RECOMPUTED._entries) == [("forward", 0)] + [
        ("segment", s) for s in range(1, segments)
    ]


def test_the_bytes_counted_stay_within_the_budget_or_the_floor_beside_the_rest():
    """Segments recomputed, reservations made and given back, traces built, in a seeded order: after
    each, every byte counted within cache_bytes, or (as before the room) within the floor beside the
    traces and reservations (one segment may be larger than the floor: none is here)."""
    settings = Settings(cache_bytes=100 * MB, recompute_bytes=2 * SEGMENT)
    store = TraceStore(settings)
    rng = np.random.default_rng(0)
    owner, reservations, traces = new_owner(), [], []
    for step in range(60):
        action = rng.integers(4)
        if action == 0:
            recompute(int(rng.integers(1, 6)), owner, first=10 * step)
        elif action == 1:
            reservations.append(store.reserve(int(rng.integers(1, 50)) * MB))
        elif action == 2 and reservations:
            store.release(reservations.pop(0))
        elif action == 3:
            traces.append(store.get(resolved({**SMALL_SPEC, "seed": step}, settings)))
        floor_beside = store.live_bytes + store.reserved + memory.kept_bytes() + RECOMPUTED.max_bytes
        assert counted(store) <= max(settings.cache_bytes, floor_beside), step


def test_a_build_hands_its_forwards_over_in_the_room_its_reservation_gives_back():
    """A budget its build's reservation fills: no free room while it runs, but its forwards are
    bytes that reservation counts, and all of it but its trace's is given back when it is cached."""
    spec = resolved(SMALL_SPEC, Settings())
    settings = Settings(cache_bytes=spec_cost(spec).nbytes, recompute_bytes=0)
    store = TraceStore(settings)
    reservation = store.reserve(spec_cost(spec).nbytes)
    assert store.free_room() == 0
    store.get(spec, reservation)
    assert len(store) == 1 and store.reserved == 0
    assert RECOMPUTED.nbytes > 0 and counted(store) <= settings.cache_bytes
    assert RECOMPUTED.nbytes + held_bytes(spec) <= spec_cost(spec).nbytes


def test_kept_buffers_past_the_budget_go_when_a_reservation_ends(monkeypatch):
    """A job past the budget (one that ran alone) frees its arrays into the pool as it ends: what the
    budget has no room for is let go then, not at the next reservation (issue 35, finding 7)."""
    store = TraceStore(Settings(cache_bytes=100 * MB, recompute_bytes=SEGMENT))
    kept, trims = [0], []
    monkeypatch.setattr(memory, "kept_bytes", lambda: kept[0])
    monkeypatch.setattr(memory, "trim_kept", lambda most: trims.append(most) or 0)
    job, other = store.reserve(50 * MB), store.reserve(40 * MB)
    kept[0] = 80 * MB  # the job's arrays, freed into the pool
    store.release(other)
    assert trims[-1] == 50 * MB  # 50 reserved + 50 kept: the budget
    trims.clear()
    kept[0] = 50 * MB
    store.release(job)
    assert trims == []  # within the budget: kept for the next step


def test_recomputed_segments_past_the_budget_go_when_a_reservation_ends_their_floor_too():
    store = TraceStore(Settings(cache_bytes=100 * MB, recompute_bytes=4 * SEGMENT))
    job = store.reserve(90 * MB)
    other = store.reserve(30 * MB, force=True)  # ran alone, past the budget
    recompute(3)  # within the floor, beside the rest: 150 MB counted
    store.release(other)
    assert RECOMPUTED.nbytes == SEGMENT and counted(store) == 100 * MB
    store.release(job)
    recompute(3)
    assert RECOMPUTED.nbytes == 4 * SEGMENT  # within the budget again: the floor holds them all
