"""What the connections kept in reserve serve (issue 35, finding 3): with every address at its
share, a few addresses together held every connection the server may open, and a new student's
/healthz, their join and the presenter's move all answered 503. `xt serve` keeps the last
Caps.reserve connections (app.connections) for three requests only, told apart by their head
before the app sees them:

* GET/HEAD /healthz, and a join (GET /join, /join/{code});
* any request carrying the admin key (X-Admin-Key) or the admin cookie's token: the presenter.

A connection that opens into the reserve is held only until its request's head is complete:
one that carries anything else is answered 503 and closed at once, one whose head has not come
when the reserve is full is closed to make room for a newcomer (a real client sends its head
within a millisecond of connecting), and a served one is closed after its answer (the next
request reconnects). So idle sockets, slow bodies and streams never hold a reserved slot.
"""

from __future__ import annotations

import hmac
from enum import Enum

MAX_HEAD_BYTES = 16 << 10  # a reserved request's head (request line and headers) at most
JOIN_PATHS = ("/join", "/join/")
ADMIN_KEY = b"x-admin-key"
ADMIN_COOKIE = b"xt_admin"


class Reserved(Enum):
    ANYONE = "anyone"  # /healthz or a join: its head alone is served, anything after it is dropped
    PRESENTER = "presenter"  # the admin's request, body and all


def _header_lines(head: bytes) -> tuple[bytes, dict[bytes, list[bytes]]]:
    request_line, *lines = head.split(b"\r\n")
    headers: dict[bytes, list[bytes]] = {}
    for line in lines:
        name, _, value = line.partition(b":")
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    return request_line, headers


def _cookie(headers: dict[bytes, list[bytes]], name: bytes) -> bytes | None:
    for header in headers.get(b"cookie", []):
        for part in header.split(b";"):
            key, _, value = part.strip().partition(b"=")
            if key == name:
                return value
    return None


def _same(given: bytes | None, secret: str) -> bool:
    return bool(secret) and given is not None and hmac.compare_digest(given, secret.encode())


def reserved_kind(head: bytes, admin_key: str, admin_token: str) -> Reserved | None:
    """What a request's head (up to its blank line) may use the reserve for, None: nothing."""
    request_line, headers = _header_lines(head)
    parts = request_line.split(b" ")
    if len(parts) != 3:
        return None
    method, target = parts[0], parts[1].split(b"?", 1)[0].decode("latin-1")
    if any(_same(value, admin_key) for value in headers.get(ADMIN_KEY, [])):
        return Reserved.PRESENTER
    if _same(_cookie(headers, ADMIN_COOKIE), admin_token):
        return Reserved.PRESENTER
    if method in (b"GET", b"HEAD") and (target == "/healthz" or target in JOIN_PATHS or target.startswith("/join/")):
        return Reserved.ANYONE
    return None
