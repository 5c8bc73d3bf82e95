"""A quiz exported sealed: its files hold no fault name, broken step or verdict in clear.

The export's answers are the ones the app sends a learner who has neither probed nor answered
(app.buglab.quiz seals them). What a probe or an answer would open is asked of the app too, as a
fresh learner each time, and kept encrypted in one more answer, "trace/quiz/sealed", which
static/js/lib/static_quiz.js opens in the browser:

    probes[i]    for each step i: the probe's answer and what it unseals (the step's views with
                 their check), under the key of "probe:i"
    answers[i]   for each backward step i: the verdict of answering i (right or wrong, the fault
                 revealed) and the key of `unsealed`, under the key of "answer:i"; all one length
    unsealed     every answer as a learner who answered sees it (only the fields that differ)

A blob's key is PBKDF2-SHA-256(label, salt "xt-export:<trace id>", ITERATIONS); the cipher is
HMAC-SHA-256 in counter mode (PBKDF2 with one iteration as the key stream, WebCrypto has it on
file:// too) with a 16-byte HMAC tag, encrypt-then-MAC. Deterministic: each blob has its own key.
This keeps the verdict out of the files' text, not out of reach: there are only as many labels as
steps, and a script that tries them all opens every blob in a second (docs/export.md says so).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

from app.export.answers import Collected
from app.export.keys import answer_key

ITERATIONS = 20_000
TAG_BYTES = 16
STATE_FIELDS = ("answered", "probes", "voter")  # the server's per-learner state, counted in the browser instead


def derive(label: str, salt: str) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", label.encode(), salt.encode(), ITERATIONS, 32)


def encrypt(key: bytes, plain: bytes) -> str:
    stream = hashlib.pbkdf2_hmac("sha256", key, b"xt-stream", 1, len(plain))
    cipher = bytes(a ^ b for a, b in zip(plain, stream, strict=True))
    return base64.b64encode(cipher + hmac.new(key, cipher, hashlib.sha256).digest()[:TAG_BYTES]).decode()


def _padded(payloads: dict[int, dict]) -> dict[int, bytes]:
    """Each payload as JSON, padded with spaces to the longest: a blob's length tells nothing."""
    encoded = {i: json.dumps(p, sort_keys=True, separators=(",", ":")).encode() for i, p in payloads.items()}
    width = max((len(e) for e in encoded.values()), default=0)
    return {i: e.ljust(width) for i, e in encoded.items()}


def _patch(sealed: dict, unsealed: dict) -> dict:
    """What `unsealed` changes in `sealed`: the fields that differ (all of it if sealed was refused)."""
    if sealed.get("xt_export_refused"):
        return unsealed
    return {key: value for key, value in unsealed.items() if sealed.get(key) != value}


def _patches(client, collected: Collected, keys) -> dict[str, dict]:
    patches = {}
    for key in keys:
        response = client.get(collected.urls[key])
        body = response.json()
        if response.status_code == 200 and response.content != collected.answers[key]:
            patches[key] = _patch(json.loads(collected.answers[key]), body)
    return patches


def seal(client, collected: Collected) -> None:
    """Adds "trace/quiz/sealed" to `collected` (the module's docstring)."""
    base = f"/api/traces/{collected.trace_id}"
    steps = collected.summary["steps"]
    salt = f"xt-export:{collected.trace_id}"
    viewed = [key for key in collected.urls if key.startswith("trace/")]
    probes = {}
    for step in steps:
        i = step["index"]
        client.cookies.clear()  # a new learner
        answer = _post(client, f"{base}/quiz/probe", i)
        mine = [k for k in viewed if k.startswith((f"trace/steps/{i}?", f"trace/steps/{i}/"))]
        probes[i] = {"answer": answer, "patches": _patches(client, collected, mine)}
    client.cookies.clear()
    first = next(s["index"] for s in steps if s["phase"] == "backward")
    _post(client, f"{base}/quiz/answer", first)
    unsealed = json.dumps(_patches(client, collected, viewed), sort_keys=True, separators=(",", ":")).encode()
    unseal_key = hashlib.sha256(unsealed).digest()  # known only to whoever holds the unsealed answers
    verdicts = {}
    for step in steps:
        if step["phase"] == "backward":
            client.cookies.clear()
            verdicts[step["index"]] = {"answer": _post(client, f"{base}/quiz/answer", step["index"]), "unseal": ""}
    for verdict in verdicts.values():
        verdict["unseal"] = base64.b64encode(unseal_key).decode()
    box = {
        "salt": salt,
        "iterations": ITERATIONS,
        "max_probes": client.app.state.settings.quiz_probes,
        "probes": {str(i): encrypt(derive(f"probe:{i}", salt), p) for i, p in _padded(probes).items()},
        "answers": {str(i): encrypt(derive(f"answer:{i}", salt), v) for i, v in _padded(verdicts).items()},
        "unsealed": encrypt(unseal_key, unsealed),
    }
    collected.answers[answer_key(f"{base}/quiz/sealed")] = json.dumps(box, sort_keys=True).encode()
    client.cookies.clear()


def _post(client, url: str, step: int) -> dict:
    response = client.post(url, json={"step": step})
    if response.status_code != 200:
        raise ValueError(f"{url} answered {response.status_code}: {response.text[:300]}")
    return {key: value for key, value in response.json().items() if key not in STATE_FIELDS}
