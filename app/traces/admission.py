"""Admission as a fair queue: a trace build waits its turn instead of being refused. Its
estimate (app.spec.cost, calibrated on this class of machine) decides what it waits for:

    turn     builds are started one client at a time, round robin (a client's own builds in
             the order it asked): a class of students each gets its first build before anyone's
             second; at most settings.worker_threads builds are started and unfinished at once
    bytes    the build at the head of the queue starts once TraceStore.reserve makes room for its
             estimated bytes (evicting cached traces) within settings.cache_bytes; until then no
             build behind it starts, so a big build is never starved by a stream of large ones
    lane     a small build (estimated within settings.small_build_seconds and small_build_bytes:
             a tiny spec, the class preset) also has a lane of its own, one more worker slot that
             only small builds take (the SMALL pool), so it never waits out a SmolLM2 build under
             way or queued (a build cannot be interrupted: a NumPy call runs to its end). It
             overtakes the queue's head, which leaves small_build_bytes free for it (`_kept`)
    leaving  a request whose client disconnects while it waits leaves the queue (app.services)
    working  the memory work on a built trace holds beyond it (a view, a diff, a compare, a
             download, a check: app.traces.working) is held in the same budget (`hold`) before the
             work starts, ahead of the builds waiting (its end frees traces in use); a hold that
             fits never waits behind one that does not; with nothing else running the first left
             starts whatever its size (counted, past the budget). A small hold (within
             small_build_bytes: a tiny spec's view) may take the small lane's bytes, as a small
             build does. While a hold waits, its request lets go of the traces its work reads
             (app.traces.room): what runs alone evicts them rather than runs beside them;
             the hold's own bytes never evict them (`spare`). A check job makes way between its
             steps while something waits for bytes (`wants_room`; app.traces.check_room)

Refused at once: past settings.max_queued_per_client builds waiting for one learner identity, or
settings.max_queued_per_address for an address without one (429), and,
the queue being full, past settings.max_queued_builds builds waiting or their estimated
seconds with the builds under way past settings.max_queued_seconds (503 + Retry-After). A
request for a spec whose build is under way or waiting waits for that build at no cost.
GET /api/traces/{id}/queue answers where a build waits (Admission.where). Only the event loop
calls admit, wait, release and where (like Services.pending): no lock. A waiting build is started
by whatever frees its room: a release, or (a collected trace frees bytes unannounced) the
admission's own recheck every RECHECK_S while builds wait; a waiter only awaits its ticket's
event, never a timeout of its own (one racing with the turn it waits for).
"""

from __future__ import annotations

import asyncio
import itertools
from collections import OrderedDict, deque
from dataclasses import dataclass, field

from app.settings import Settings
from app.spec import ResolvedSpec
from app.spec.cost import Cost, spec_cost
from app.traces.busy import Overloaded, TooManyQueued
from app.traces.pool import BUILDS, LIGHT, SMALL
from app.traces.store import NotBuilt, Reservation, TraceStore
from app.words.said import Fixed, Said

RECHECK_S = 0.25  # builds waiting for bytes are retried this often (a collected trace frees them unannounced)
SMALL_SLOTS = 1  # builds the small lane runs at once, beside settings.worker_threads


@dataclass(eq=False)  # a place in the queue is itself, whatever its fields
class Ticket:
    """A build's place: its estimate, the bytes it holds in the store once started, its client,
    and the worker pool its build runs in (app.traces.pool)."""

    cost: Cost
    reservation: Reservation | None
    joined: bool = False  # admitted at no cost to wait for the same spec's build (under way or queued)
    released: bool = False
    spec_id: str = ""
    client: str = ""
    small: bool = False  # within the small lane's estimate: it may take that lane's slot
    pool: str = BUILDS
    started: asyncio.Event = field(default_factory=asyncio.Event)  # its turn came (its bytes reserved)
    finished: asyncio.Event = field(default_factory=asyncio.Event)  # released: built, failed or gone
    behind: Ticket | None = None  # the build of the same spec it waits for (queued or under way)
    seq: int = 0  # when it was admitted: a hold `after_builds` waits for the builds admitted before it
    after_builds: bool = False
    working: bool = True  # a hold's bytes in use by running work (Admission.holding), not only kept
    spare: frozenset[str] = frozenset()  # a hold's traces, let go while it waits: not evicted for its own bytes


@dataclass(eq=False)
class Held:
    """Working bytes held (Admission.hold). Called, they go (at most once). `keep(n)` lets all but n
    go now and returns what holds those (a download's array, held while it streams: app.answers)."""

    admission: Admission
    ticket: Ticket

    def __call__(self) -> None:
        self.admission._let_go(self.ticket)

    def keep(self, nbytes: int) -> Held:
        return self.admission._keep(self.ticket, nbytes)


class Admission:
    def __init__(self, settings: Settings, store: TraceStore):
        self.settings = settings
        self.store = store
        self.queued_seconds = 0.0  # estimated seconds of the started builds not yet finished
        self.builds = 0  # started builds not yet finished, in the builds pool
        self.small_builds = 0  # ... in the small lane's
        self.running: dict[str, Ticket] = {}  # spec id -> its started build
        self.queues: OrderedDict[str, deque[Ticket]] = OrderedDict()  # client -> its waiting builds; turn order
        self._recheck_due: asyncio.AbstractEventLoop | None = None  # the loop a recheck is due on
        self.working: deque[Ticket] = deque()  # working memory waiting to be held (hold), in order
        self.holding = 0  # working memory held, not yet let go
        self.wants_room = False  # what waits its turn (a build, a hold) waits for bytes; read by check jobs
        self._seq = itertools.count()

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self.queues.values())

    def admit(self, spec: ResolvedSpec, client: str = "", cost: Cost | None = None) -> Ticket:
        """A place in the queue for building `spec` (await wait(ticket) for its turn), or refused when
        the queue is full (Overloaded, 503) or the client has its share queued (TooManyQueued, 429).
        `cost` given: a job of its own (a recorded run's slice, app.recording.recordings), never small."""
        running = self.running.get(spec.id)
        if running is not None or self.store.building(spec.id):
            return self._joined(running)  # it waits for the build already under way
        if (queued := next((t for q in self.queues.values() for t in q if t.spec_id == spec.id), None)) is not None:
            return self._joined(queued)
        small, cost = cost is None, cost or spec_cost(spec)
        self._check_room(cost, client)
        small &= cost.seconds <= self.settings.small_build_seconds and cost.nbytes <= self.settings.small_build_bytes
        ticket = Ticket(cost, None, spec_id=spec.id, client=client, small=small, seq=next(self._seq))
        self.queues.setdefault(client, deque()).append(ticket)
        self._start_next()
        return ticket

    def _joined(self, behind: Ticket | None) -> Ticket:
        """A ticket at no cost: once the build it joined has finished, its trace is a cache hit (light pool),
        or NotBuilt. A build admission did not start (behind None) is waited for on its lock (builds pool)."""
        ticket = Ticket(Cost(0, 0.0), None, joined=True, behind=behind, pool=BUILDS if behind is None else LIGHT)
        if behind is None:
            ticket.started.set()
        return ticket

    def _check_room(self, cost: Cost, client: str) -> None:
        mine = len(self.queues.get(client, ()))
        # an address without a learner identity may be a class behind one router: a larger share
        shared = client.startswith("address:")
        limit = self.settings.max_queued_per_address if shared else self.settings.max_queued_per_client
        if mine >= limit:
            name = "max_queued_per_address" if shared else "max_queued_per_client"
            waits = Said("error-busy-client-queued", builds=mine, setting=name, most=str(limit))
            raise TooManyQueued(waits, self._seconds_ahead(len(self.queues)))
        waiting = self.waiting
        ahead = self.queued_seconds + sum(t.cost.seconds for q in self.queues.values() for t in q)
        if waiting >= self.settings.max_queued_builds:
            raise Overloaded(Said("error-busy-queue-full", builds=waiting), ahead)
        budget = self.settings.max_queued_seconds
        if (self.builds or waiting) and ahead + cost.seconds > budget:
            seconds = {"queued": Fixed(ahead, 0), "adds": Fixed(cost.seconds, 1), "most": Fixed(budget, 0)}
            raise Overloaded(Said("error-busy-queued-seconds", **seconds), ahead)

    async def wait(self, ticket: Ticket) -> None:
        """Returns once the ticket's build may start (its bytes reserved), or the build it joined
        has finished; NotBuilt when that build left the queue unbuilt (admit the request again)."""
        if ticket.behind is not None:
            await ticket.behind.finished.wait()
            if ticket.behind.reservation is None:  # it never started: its client left
                raise NotBuilt(ticket.behind.spec_id)
        else:
            self._recheck_soon()  # due on this loop while it waits (admitted maybe where none ran)
            await ticket.started.wait()  # set by _start_next: on admission, a release or a recheck
        ticket.started.set()

    def _start_next(self) -> None:
        """Starts builds in turn while fewer than worker_threads run and the head's bytes fit, then
        small builds in the small lane's slot; while builds still wait, a recheck is due. Working
        memory waiting its turn goes first, and no build starts before it (nor takes its bytes); a
        hold after_builds waits for the builds admitted before it, unless nothing else runs."""
        self.wants_room = not self._take_holds()
        slots = max(1, self.settings.worker_threads)
        while self.queues and self.builds < slots and not any(map(self._turn, self.working)):
            head = next(iter(self.queues.values()))[0]
            if not self._start(head, BUILDS):
                self.wants_room = True
                break  # nobody overtakes the head (but in the small lane): it starts once room is made
        while self.small_builds < SMALL_SLOTS:
            small = next((t for t in self.order() if t.small), None)
            if small is None or not self._start(small, SMALL):
                break
        if self.working and not (self.builds or self.small_builds or self.holding):
            self._take_holds(alone=True)  # the builds it waits for wait for bytes that nothing running frees
        self._recheck_soon()

    def _turn(self, ticket: Ticket) -> bool:
        return not ticket.after_builds or not any(t.seq < ticket.seq for q in self.queues.values() for t in q)

    def _take_holds(self, alone: bool = False) -> bool:
        """Holds the waiting holds whose turn it is and that fit, in order; then, `alone` (nothing else
        runs), the first left whatever its size. False if one whose turn it is still waits. A hold
        never waits behind one that does not fit: the traces in use that keep that one from fitting
        may be held by the very request whose hold waits behind it (a view of the float64 trace)."""
        waits = False
        for ticket in list(self.working):
            if self._turn(ticket) and self._hold(ticket):
                self.working.remove(ticket)
            elif self._turn(ticket):
                waits = True
        if alone and self.working and not self.holding:
            self._hold(self.working[0], alone=True)
            self.working.popleft()
        return not waits

    def _small(self, ticket: Ticket) -> bool:
        return ticket.cost.nbytes <= self.settings.small_build_bytes

    def _start(self, ticket: Ticket, pool: str) -> bool:
        """Starts a waiting build in `pool` if its bytes fit; False, reserving nothing, if not."""
        reservation = self.store.reserve(ticket.cost.nbytes, self._kept(ticket.cost.nbytes) if pool == BUILDS else 0)
        if reservation is None:
            return False
        queue = self.queues.pop(ticket.client)
        queue.remove(ticket)
        if queue:
            self.queues[ticket.client] = queue  # its next build waits behind every other client's first
        ticket.reservation, ticket.pool = reservation, pool
        self.queued_seconds += ticket.cost.seconds
        if pool == SMALL:
            self.small_builds += 1
        else:
            self.builds += 1
        self.running[ticket.spec_id] = ticket
        ticket.started.set()
        return True

    def _recheck_soon(self) -> None:
        """A recheck in RECHECK_S while builds wait and none is due (only with a running loop: without
        one, nothing awaits a ticket)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if (self.queues or self.working) and self._recheck_due is not loop:  # a loop that has ended runs no timer: anew
            self._recheck_due = loop
            loop.call_later(RECHECK_S, self.recheck)

    def recheck(self) -> None:
        """Starts what now fits: traces collected since freed their bytes without a release."""
        self._recheck_due = None
        self._start_next()

    async def hold(self, nbytes: int, after_builds: bool = False, spare: frozenset[str] = frozenset()) -> Held:
        """Holds `nbytes` of working memory in the one budget, once they fit (or nothing else runs);
        returns what lets them go (Held). Cancelled while waiting: nothing is held.
        `after_builds`: its turn comes after the builds waiting now (a check job's next step).
        `spare`: the ids of the traces the work reads, which its request let go while it waits
        (app.traces.room): its own bytes never evict them, anything else's may."""
        ticket = Ticket(Cost(nbytes, 0.0), None, seq=next(self._seq), after_builds=after_builds, spare=spare)
        self.working.append(ticket)
        self._start_next()
        try:
            await self.wait(ticket)
        except BaseException:
            self._let_go(ticket)
            raise
        return Held(self, ticket)

    def _keep(self, ticket: Ticket, nbytes: int) -> Held:
        """Lets all of a held ticket's bytes but `nbytes` go now; the rest held by a ticket of its own,
        counted but no running work (`holding`): a download its client reads slowly, or never, does
        not keep a hold past the budget from running alone."""
        part = Ticket(Cost(0, 0.0), None, seq=next(self._seq), released=ticket.reservation is None, working=False)
        if ticket.reservation is not None and not ticket.released:
            part.reservation = self.store.split(ticket.reservation, nbytes)
            part.cost = Cost(part.reservation.nbytes, 0.0)
        self._let_go(ticket)
        return Held(self, part)

    def _hold(self, ticket: Ticket, alone: bool = False) -> bool:
        """Holds a working ticket's bytes if they fit (a small one may take the small lane's room);
        `alone`, nothing else running, anyway: counted, once every evictable byte has gone."""
        kept = 0 if self._small(ticket) else self._kept(ticket.cost.nbytes)
        reservation = self.store.reserve(ticket.cost.nbytes, kept, force=alone, spare=ticket.spare)
        if reservation is None:
            return False
        ticket.reservation = reservation
        self.holding += 1
        ticket.started.set()
        return True

    def _kept(self, nbytes: int) -> int:
        """Bytes a build or a hold leaves free for the small lane while it is idle: a tiny spec never
        waits for a float64 SmolLM2 build's bytes (issue 35, finding 8; a build as large as the budget keeps none)."""
        kept = self.settings.small_build_bytes if self.small_builds < SMALL_SLOTS else 0
        return kept if nbytes + kept <= self.settings.cache_bytes else 0

    def _let_go(self, ticket: Ticket) -> None:
        if ticket.released:
            return
        ticket.released = True
        if ticket in self.working:
            self.working.remove(ticket)
        elif ticket.reservation is not None:
            self.store.release(ticket.reservation)
            self.holding -= ticket.working
        self._start_next()

    def release(self, ticket: Ticket) -> None:
        """The build finished, failed or was cancelled, or left the queue: its budget and its place
        are free again (idempotent)."""
        if ticket.released:
            return
        ticket.released = True
        queue = self.queues.get(ticket.client)
        if queue is not None and ticket in queue:  # still waiting: it leaves the queue
            queue.remove(ticket)
            if not queue:
                del self.queues[ticket.client]
        elif ticket.reservation is not None:
            self.store.release(ticket.reservation)
            self.queued_seconds = max(0.0, self.queued_seconds - ticket.cost.seconds)
            if ticket.pool == SMALL:
                self.small_builds -= 1
            else:
                self.builds -= 1
            if self.running.get(ticket.spec_id) is ticket:
                del self.running[ticket.spec_id]
        ticket.finished.set()
        self._start_next()

    def order(self) -> list[Ticket]:
        """The waiting builds in the order they will start (round robin over the clients)."""
        queues = [list(q) for q in self.queues.values()]
        return [q[k] for k in range(max(map(len, queues), default=0)) for q in queues if k < len(q)]

    def _seconds_ahead(self, position: int) -> float:
        return self.queued_seconds + sum(t.cost.seconds for t in self.order()[:position])

    def where(self, trace_id: str) -> dict:
        """Where the build of `trace_id` stands: {state: queued|building|idle, position (1: next to
        start), ahead (builds to start before it), ahead_seconds (their estimate with the builds
        under way), seconds (its own estimate), waiting (every build waiting)}."""
        order = self.order()
        answer = {"state": "idle", "position": None, "ahead": 0, "ahead_seconds": 0.0, "seconds": None}
        index = next((i for i, t in enumerate(order) if t.spec_id == trace_id), None)
        if index is not None:
            answer = {
                "state": "queued",
                "position": index + 1,
                "ahead": index,
                "ahead_seconds": round(self._seconds_ahead(index), 1),
                "seconds": round(order[index].cost.seconds, 1),
            }
        elif trace_id in self.running or self.store.building(trace_id):
            answer["state"] = "building"
        return {**answer, "waiting": len(order)}
