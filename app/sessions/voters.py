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

A class's poll counts seats instead (issue 35, finding 6): a seat is one student's place in one
class, a token bound to the session's code (`xt_seat`, an HttpOnly cookie scoped to the session's
API path, or `X-Seat`), issued by the join and by the event stream of a student who has none,
without a per-address bound, so one classmate using up the address's identities locks nobody out.
What bounds a client is the live stream: a seat votes only while a stream of it follows the
class (Sessions.answer), and streams are capped per address (app.connections.StreamCap). One
client's votes are at most the streams it holds (16 from one address by default: never 40 in a
class of 30), and the presenter sees the votes of every address (the poll's `by_address`). A seat
is no learner identity: it buys no quiz probes.
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
SEAT_COOKIE = "xt_seat"
SEAT_HEADER = "X-Seat"
SEAT_MAX_AGE_S = 12 * 3600  # longer than a class's session stays open (settings.session_idle_seconds)
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

    def new_seat(self, code: str) -> str:
        """A seat in the class `code` (any number of them: the live stream is what bounds a client)."""
        nonce = secrets.token_urlsafe(12)
        return f"{nonce}.{self._tag(f'seat {code} {nonce}')}"

    def seat_of(self, request: Request, code: str) -> str | None:
        """The request's seat in the class `code` (X-Seat, else the cookie), None without a valid one."""
        for token in (request.headers.get(SEAT_HEADER), request.cookies.get(SEAT_COOKIE)):
            match = TOKEN.match(token or "")
            if match is not None and hmac.compare_digest(self._tag(f"seat {code} {match[1]}"), match[2]):
                return token
        return None


def seated(seat: str) -> str:
    """The follower (and voter) a seat counts as in its class."""
    return f"seat {seat}"


def remember_seat(response: Response, code: str, seat: str) -> Response:
    """Sets the seat's cookie on `response`, sent only to the class's own API (its streams, its answers)."""
    response.set_cookie(
        SEAT_COOKIE, seat, max_age=SEAT_MAX_AGE_S, httponly=True, samesite="strict", path=f"/api/sessions/{code}/"
    )
    return response


def remember(response: Response, voter: str) -> Response:
    """Sets the identity's cookie on `response` (the JSON carries it too)."""
    response.set_cookie(VOTER_COOKIE, voter, max_age=VOTER_MAX_AGE_S, httponly=True, samesite="strict", path="/")
    return response
