"""Join codes and presenter keys.

A join code is ten characters from an alphabet without look-alikes (no 0/O, 1/I/L), 31^10 ≈
8.2e14 codes: students scan the QR code or open the join link, and can still type it (a hyphen
or spaces anywhere are ignored). The length is what makes guessing hopeless: failed lookups are
bounded per client only (settings.join_failures_per_minute), never over all clients together,
so a flood of guesses refuses no real student (issue 35, finding 5; the arithmetic:
docs/lessons.md, "Guessing: the arithmetic"). Six characters (8.9e8) were guessable from a few
hundred addresses without a server-wide bound, and that bound locked the class out.

The presenter key is a random token that only the presenter's browser holds; the server keeps
its SHA-256 and compares digests in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 10


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(text: str) -> str | None:
    """What a student typed ("abc-23d", " ABC 23D ") as a code, or None when it cannot be one
    (the lookup then counts as a failed join without touching the store)."""
    code = "".join(ch for ch in text.upper() if ch not in " -")
    if len(code) != CODE_LENGTH or any(ch not in ALPHABET for ch in code):
        return None
    return code


def new_presenter_key() -> str:
    return secrets.token_urlsafe(24)


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def key_matches(given: str | None, digest: str) -> bool:
    if not given:
        return False
    return hmac.compare_digest(key_digest(given), digest)
