"""The .npy downloads each client has under way (app.answers: GET /api/traces/{id}/tensors/{name}).
A download holds its array's bytes in the one budget until its response ends
(app.traces.tensors.HeldWhileSent), so a client that opened many and read them slowly, or never,
would hold that many arrays (SmolLM2's embedding gradient is 113 MB) while everyone else's work
waited for room (issue 35). One client (its learner identity, else its address: Services.client_key)
has at most settings.max_download_bytes_per_client of arrays under way (an address without one,
max_download_bytes_per_address), counted from the recorded shapes before any work: past them, a 429
+ Retry-After (its first download never: an array larger than the cap is still sent, one at a time).
A download's place is given back where its bytes are let go, however its response ends. Only the
event loop takes and gives back places: no lock."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable

import numpy as np

from app.settings import Settings
from app.traces.busy import RETRY_AFTER_S, TooManyQueued
from app.words.said import Grouped, Said
from xt_core import Trace

log = logging.getLogger("xt.downloads")


class Downloads:
    def __init__(self) -> None:
        self.under_way: Counter[str] = Counter()  # client -> bytes of its downloads whose response has not ended

    def take(self, client: str, nbytes: int, settings: Settings) -> Callable[[], None]:
        """A place for one more download of `client`, of an array of `nbytes`, or TooManyQueued (429)
        when its downloads under way and this one pass its share (max_download_bytes_per_client; an
        address without a learner identity, maybe a class behind one router, _per_address); what is
        returned gives the place back (at most once)."""
        shared = client.startswith("address:")
        setting = "max_download_bytes_per_address" if shared else "max_download_bytes_per_client"
        mine, most = self.under_way[client], getattr(settings, setting)
        if mine and mine + nbytes > most:
            said = Said(
                "error-busy-client-downloads",
                held=Grouped(mine),
                adds=Grouped(nbytes),
                setting=setting,
                most=Grouped(most),
            )
            raise TooManyQueued(said, RETRY_AFTER_S)
        self.under_way[client] += nbytes
        given_back = False

        def give_back() -> None:
            nonlocal given_back
            if not given_back:
                given_back = True
                self.under_way[client] -= nbytes
                if self.under_way[client] <= 0:
                    del self.under_way[client]

        return give_back


def array_bytes(trace: Trace, name: str) -> int:
    """The bytes of trace[name], or of its gradient (the same shape), from the recorded shapes:
    nothing is computed. KeyError (with the close names) for a name the trace has not."""
    shape = next((r.shape for r in trace.records[: len(trace.nodes)] if r.name == name), None)
    if shape is None:
        return int(trace[name].nbytes)  # a weight or the token ids: the trace holds them
    return int(np.prod(shape)) * trace.dtype.itemsize


def log_not_taken(seconds: float) -> None:
    """Why a download's response ended short (uvicorn logs only that it did not complete)."""
    log.info("a download ended: its client took no piece in %s s (download_send_timeout_seconds)", seconds)
