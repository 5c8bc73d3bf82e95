"""Learner identities: who probed a quiz, who answered it, who voted in a class's poll.

The server issues an identity (a random nonce and its HMAC tag under a key derived from the
quiz secret, so every worker sharing the secret accepts it and a client cannot make one up).
It travels as an HttpOnly cookie (`xt_voter`, path /: the trace routes read it to seal a quiz
per learner) and in the JSON answer, which a page without cookies sends back as `X-Voter`.

Issuance is what bounds a client: at most settings.voters_per_address identities per client
address and settings.voter_window_seconds (counted in this process; the poll's per-address
cap in the session store holds across workers). Dropping the cookie only asks for another
identity, and past the bound there is none: 300 cookie-less answers from one address are at
most that many votes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time

from fastapi import HTTPException, Request, Response

from app.settings import Settings
from app.spec.faults import quiz_key
from app.words.said import Said

VOTER_COOKIE = "xt_voter"
VOTER_HEADER = "X-Voter"
VOTER_MAX_AGE_S = 30 * 86400
TOKEN = re.compile(r"^([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{16})$")
MAX_TRACKED_ADDRESSES = 100_000  # issuance counters kept; swept of past windows beyond this


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


class Voters:
    """Issues identities (bounded per address) and recognises the ones it issued."""

    def __init__(self, settings: Settings):
        self.key = hmac.new(quiz_key(settings), b"xt voter identity", hashlib.sha256).digest()
        self.per_address = settings.voters_per_address
        self.window_s = settings.voter_window_seconds
        self._issued: dict[str, tuple[int, int]] = {}  # address -> (window, identities issued in it)

    def _tag(self, nonce: str) -> str:
        digest = hmac.new(self.key, nonce.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest[:12]).decode()

    def valid(self, token: str | None) -> bool:
        match = TOKEN.match(token or "")
        return match is not None and hmac.compare_digest(self._tag(match[1]), match[2])

    def of(self, request: Request) -> str | None:
        """The request's identity (the X-Voter header, else the cookie), None without a valid one."""
        for token in (request.headers.get(VOTER_HEADER), request.cookies.get(VOTER_COOKIE)):
            if self.valid(token):
                return token
        return None

    def issue(self, address: str) -> str:
        """A new identity for a client at `address`; 429 past voters_per_address in this window."""
        window = int(time.time() // self.window_s)
        seen, count = self._issued.get(address, (window, 0))
        count = count if seen == window else 0
        if count >= self.per_address:
            raise HTTPException(
                429,
                detail=Said("error-voters-limited", most=self.per_address, window=self.window_s),
                headers={"Retry-After": str(self.window_s)},
            )
        if len(self._issued) >= MAX_TRACKED_ADDRESSES:
            self._issued = {a: wc for a, wc in self._issued.items() if wc[0] == window}
        self._issued[address] = (window, count + 1)
        nonce = secrets.token_urlsafe(12)
        return f"{nonce}.{self._tag(nonce)}"

    def identify(self, request: Request) -> str:
        """The request's identity, or a new one issued to its address (429 past the bound)."""
        return self.of(request) or self.issue(client_address(request))

    def follower(self, request: Request) -> str:
        """Who an event stream counts as: its identity, or its address (one follower however
        many streams a client without an identity opens)."""
        return self.of(request) or f"address {client_address(request)}"


def remember(response: Response, voter: str) -> Response:
    """Sets the identity's cookie on `response` (the JSON carries it too)."""
    response.set_cookie(VOTER_COOKIE, voter, max_age=VOTER_MAX_AGE_S, httponly=True, samesite="strict", path="/")
    return response
