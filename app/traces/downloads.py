"""The .npy downloads each client has under way (app.answers: GET /api/traces/{id}/tensors/{name}).
A download holds its array's bytes in the one budget until its response ends
(app.traces.tensors.HeldWhileSent), so a client that opened many and read them slowly, or never,
would hold that many arrays (SmolLM2's embedding gradient is 113 MB) while everyone else's work
waited for room (issue 35). One client (its learner identity, else its address: Services.client_key)
has at most settings.max_downloads_per_client under way (an address without one,
max_downloads_per_address); one more is a 429 + Retry-After before
any work or hold. A download's place is given back where its bytes are let go, however its response
ends. Only the event loop takes and gives back places: no lock."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable

from app.settings import Settings
from app.traces.busy import RETRY_AFTER_S, TooManyQueued
from app.words.said import Said

log = logging.getLogger("xt.downloads")


class Downloads:
    def __init__(self) -> None:
        self.under_way: Counter[str] = Counter()  # client -> its downloads whose response has not ended

    def take(self, client: str, settings: Settings) -> Callable[[], None]:
        """A place for one more download of `client`, or TooManyQueued (429) when it has its most under
        way already (max_downloads_per_client; an address without a learner identity, maybe a class
        behind one router, max_downloads_per_address); what is returned gives the place back (at most once)."""
        setting = "max_downloads_per_address" if client.startswith("address:") else "max_downloads_per_client"
        mine, most = self.under_way[client], getattr(settings, setting)
        if mine >= most:
            said = Said("error-busy-client-downloads", downloads=mine, setting=setting, most=str(most))
            raise TooManyQueued(said, RETRY_AFTER_S)
        self.under_way[client] += 1
        given_back = False

        def give_back() -> None:
            nonlocal given_back
            if not given_back:
                given_back = True
                self.under_way[client] -= 1
                if not self.under_way[client]:
                    del self.under_way[client]

        return give_back


def log_not_taken(seconds: float) -> None:
    """Why a download's response ended short (uvicorn logs only that it did not complete)."""
    log.info("a download ended: its client took no piece in %s s (download_send_timeout_seconds)", seconds)
