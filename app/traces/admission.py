"""Admission by cost: a trace build is admitted only while the estimated seconds of the builds
queued or running, and their estimated bytes, stay within the settings' budgets; beyond
them the request is refused at once with 503 + Retry-After, before anything is allocated.

    seconds  settings.max_queued_seconds: the work the one worker thread already has queued
    bytes    settings.cache_bytes, one budget for every trace alive (cached, or in use by a
             request or a check job) and every build in flight: TraceStore.reserve makes room
             (evicting cached traces) before a build starts; a spec whose trace alone would
             pass it is refused when it is resolved (app.spec.resolve.check_trace_bytes)

Estimates come from app.spec.cost (calibrated on this class of machine). A build the store
is already running for the same spec costs nothing more: the request waits for it. Only the
event loop calls admit and release (like Services.pending): no lock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fastapi import HTTPException

from app.settings import Settings
from app.spec import ResolvedSpec
from app.spec.cost import Cost, spec_cost
from app.traces.store import Reservation, TraceStore

RETRY_AFTER_S = 2  # an overloaded server's hint when the queue is of cheap jobs
MAX_RETRY_AFTER_S = 120


class Overloaded(HTTPException):
    """503 + Retry-After: too much work queued. The client may retry; nothing failed."""

    def __init__(self, detail: str | int, retry_after: float = RETRY_AFTER_S):
        if isinstance(detail, int):  # a count of jobs already running (app.traces.checks.ChecksBusy)
            detail = f"the server is busy ({detail} jobs running)"
        seconds = min(MAX_RETRY_AFTER_S, max(1, math.ceil(retry_after)))
        super().__init__(503, detail=f"{detail}; retry in about {seconds} s", headers={"Retry-After": str(seconds)})


@dataclass
class Ticket:
    """An admitted build: its estimate and the bytes it holds in the store until done."""

    cost: Cost
    reservation: Reservation | None
    joined: bool = False  # admitted at no cost to wait for the same spec's build under way
    released: bool = False


class Admission:
    def __init__(self, settings: Settings, store: TraceStore):
        self.settings = settings
        self.store = store
        self.queued_seconds = 0.0  # estimated seconds of the admitted builds not yet finished
        self.builds = 0

    def admit(self, spec: ResolvedSpec) -> Ticket:
        """A ticket for building `spec`, or Overloaded (503) when the budgets are spent."""
        if self.store.building(spec.id):
            return Ticket(Cost(0, 0.0), None, joined=True)  # it waits for the build already under way
        cost = spec_cost(spec)
        budget = self.settings.max_queued_seconds
        if self.builds and self.queued_seconds + cost.seconds > budget:
            raise Overloaded(
                f"the server is busy: about {self.queued_seconds:.0f} s of traces are queued and this one adds "
                f"about {cost.seconds:.1f} s, past the limit of {budget:.0f} s (max_queued_seconds)",
                self.queued_seconds,
            )
        reservation = self.store.reserve(cost.nbytes)
        if reservation is None:
            raise Overloaded(
                f"the server is busy: this trace needs about {cost.nbytes / (1 << 20):,.0f} MB and the traces "
                f"hold {self.store.held()}",
                self.queued_seconds,
            )
        self.queued_seconds += cost.seconds
        self.builds += 1
        return Ticket(cost, reservation)

    def release(self, ticket: Ticket) -> None:
        """The build finished, failed or was cancelled: its budget is free again (idempotent)."""
        if ticket.released:
            return
        ticket.released = True
        self.store.release(ticket.reservation)
        if ticket.reservation is not None:
            self.queued_seconds = max(0.0, self.queued_seconds - ticket.cost.seconds)
            self.builds -= 1
