"""A quiz exported sealed: its files hold no fault name, broken step or verdict in clear.

The export's answers are the ones the app sends a learner who has neither probed nor answered
(app.buglab.quiz seals them). What a probe or an answer would open is asked of the app too, as a
fresh learner each time, and kept encrypted in one more answer, "trace/quiz/sealed", which
static/js/lib/static_quiz.js opens in the browser:

    probes[i]    for each step i: the probe's answer and what it unseals (the step's views with
                 their check; a backward step's comparison with the correct backward), under the
                 key of "probe:i"
    answers[i]   for each backward step i: the verdict of answering i (right or wrong, the fault
                 revealed) and the key of `unsealed`, under the key of "answer:i"
    unsealed     every answer as a learner who answered sees it (only the fields that differ), gzipped

Each probe's and answer's payload is gzipped JSON padded to the longest of its kind (_padded): a
blob's length tells nothing.

A blob's key is PBKDF2-SHA-256(label, salt "xt-export:<trace id>", ITERATIONS); the cipher is
HMAC-SHA-256 in counter mode (PBKDF2 with one iteration as the key stream, WebCrypto has it on
file:// too) with a 16-byte HMAC tag, encrypt-then-MAC. Deterministic: each blob has its own key.
This keeps the verdict out of the files' text, not out of reach: there are only as many labels as
steps, and a script that tries them all opens every blob in a second (docs/export.md says so).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import hmac
import json

from app.export.answers import MAX_SEQS, Collected
from app.export.keys import answer_key

ITERATIONS = 1_000  # a few ms a blob: no key stretching would stop a script that tries every step
TAG_BYTES = 16
STATE_FIELDS = ("answered", "probes", "voter")  # the server's per-learner state, counted in the browser instead


def derive(label: str, salt: str) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", label.encode(), salt.encode(), ITERATIONS, 32)


def encrypt(key: bytes, plain: bytes) -> str:
    stream = hashlib.pbkdf2_hmac("sha256", key, b"xt-stream", 1, len(plain))
    cipher = (int.from_bytes(plain, "big") ^ int.from_bytes(stream, "big")).to_bytes(len(plain), "big")
    return base64.b64encode(cipher + hmac.new(key, cipher, hashlib.sha256).digest()[:TAG_BYTES]).decode()


def _padded(payloads: dict[int, dict]) -> dict[int, bytes]:
    """Each payload as its gzipped JSON's length (4 bytes, big-endian), the gzipped JSON and zeros
    up to the longest of the lot: a blob's length tells nothing of what it holds."""
    packed = {i: gzip.compress(json.dumps(p, sort_keys=True).encode(), 9, mtime=0) for i, p in payloads.items()}
    width = max((len(b) for b in packed.values()), default=0)
    return {i: len(b).to_bytes(4, "big") + b.ljust(width, b"\0") for i, b in packed.items()}


def _patch(sealed: dict, unsealed: dict) -> dict:
    """What `unsealed` changes in `sealed`: the fields that differ (all of it if sealed was refused)."""
    if sealed.get("xt_export_refused"):
        return unsealed
    return {key: value for key, value in unsealed.items() if sealed.get(key) != value}


def _patches(client, collected: Collected, urls: dict[str, str]) -> dict[str, dict]:
    """What the app answers this learner at `urls` (by key) beyond what the export holds."""
    patches = {}
    for key, url in urls.items():
        response = client.get(url)
        if response.status_code == 200 and response.content != collected.answers.get(key):
            sealed = json.loads(collected.answers.get(key, b'{"xt_export_refused": 403}'))
            patches[key] = _patch(sealed, response.json())
    return patches


def _diffs(collected: Collected, index: int) -> dict[str, str]:
    """A backward step's comparisons with the correct backward (a probe buys them; the app
    refuses them to a learner who has not probed: the export holds none in clear)."""
    base = f"/api/traces/{collected.trace_id}"
    seqs = range(min(collected.summary["n_seq"], MAX_SEQS))
    urls = [f"{base}/steps/{index}/diff?seq={seq}&lang={collected.lang}" for seq in seqs]
    return {answer_key(url): url for url in urls}


def _sealable(key: str) -> bool:
    """Whether the app seals this answer for a quiz (app.answers: a step's view and check,
    a Jacobian's ✓/✗, the chart of every check); an enlarged head, a lesson, the summary it never does."""
    path = key.partition("?")[0]
    return path.startswith("trace/steps/") and not path.endswith("/head") or path in ("trace/jacobian", "trace/checks")


def seal(client, collected: Collected) -> None:
    """Adds "trace/quiz/sealed" to `collected` (the module's docstring)."""
    base = f"/api/traces/{collected.trace_id}"
    in_language = f"?lang={collected.lang}"  # the probes' and verdicts' words (app.deps.LangDep)
    steps = collected.summary["steps"]
    salt = f"xt-export:{collected.trace_id}"
    viewed = {key: url for key, url in collected.urls.items() if _sealable(key)}
    backward = [s["index"] for s in steps if s["phase"] == "backward"]
    probes = {}
    for step in steps:
        i = step["index"]
        client.cookies.clear()  # a new learner
        answer = _post(client, f"{base}/quiz/probe{in_language}", i)
        mine = {k: u for k, u in viewed.items() if k.startswith((f"trace/steps/{i}?", f"trace/steps/{i}/check"))}
        if i in backward:
            mine |= _diffs(collected, i)
        probes[i] = {"answer": answer, "patches": _patches(client, collected, mine)}
    client.cookies.clear()
    _post(client, f"{base}/quiz/answer{in_language}", backward[0])
    every = viewed | {k: u for i in backward for k, u in _diffs(collected, i).items()}
    unsealed = json.dumps(_patches(client, collected, every), sort_keys=True, separators=(",", ":")).encode()
    unseal_key = hashlib.sha256(unsealed).digest()  # known only to whoever holds the unsealed answers
    verdicts = {}
    for i in backward:
        client.cookies.clear()
        verdicts[i] = {
            "answer": _post(client, f"{base}/quiz/answer{in_language}", i),
            "unseal": base64.b64encode(unseal_key).decode(),
        }
    box = {
        "salt": salt,
        "iterations": ITERATIONS,
        "max_probes": client.app.state.settings.quiz_probes,
        "probes": {str(i): encrypt(derive(f"probe:{i}", salt), p) for i, p in _padded(probes).items()},
        "answers": {str(i): encrypt(derive(f"answer:{i}", salt), v) for i, v in _padded(verdicts).items()},
        "unsealed": encrypt(unseal_key, gzip.compress(unsealed, compresslevel=9, mtime=0)),
    }
    collected.answers[answer_key(f"{base}/quiz/sealed")] = json.dumps(box, sort_keys=True).encode()
    client.cookies.clear()


def _post(client, url: str, step: int) -> dict:
    response = client.post(url, json={"step": step})
    if response.status_code != 200:
        raise ValueError(f"{url} answered {response.status_code}: {response.text[:300]}")
    return {key: value for key, value in response.json().items() if key not in STATE_FIELDS}
