"""The refusals of a busy server (app.traces.admission, app.services, app.traces.downloads): 503
when too much work is queued, 429 when one learner has too much waiting or downloading; each with
Retry-After, worded in the catalogues."""

from __future__ import annotations

import math

from fastapi import HTTPException

from app.words.said import Said

RETRY_AFTER_S = 2  # an overloaded server's hint when the queue is of cheap jobs
MAX_RETRY_AFTER_S = 120


class Overloaded(HTTPException):
    """503 + Retry-After: too much work queued. The client may retry; nothing failed."""

    def __init__(self, detail: str | int, retry_after: float = RETRY_AFTER_S):
        if isinstance(detail, int):  # a count of jobs already running (app.traces.checks.ChecksBusy)
            detail = Said("error-busy-jobs-running", jobs=detail)
        seconds = min(MAX_RETRY_AFTER_S, max(1, math.ceil(retry_after)))
        super().__init__(
            503, detail=Said("error-busy-retry", reason=detail, seconds=seconds), headers={"Retry-After": str(seconds)}
        )


class TooManyQueued(HTTPException):
    """429 + Retry-After: this client already has its share, settings.max_queued_per_client builds
    waiting or max_download_bytes_per_client of downloads under way (app.traces.downloads)."""

    def __init__(self, detail: str, retry_after: float):
        seconds = min(MAX_RETRY_AFTER_S, max(1, math.ceil(retry_after)))
        super().__init__(
            429, detail=Said("error-busy-retry", reason=detail, seconds=seconds), headers={"Retry-After": str(seconds)}
        )
