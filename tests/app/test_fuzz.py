"""Property-based fuzzing of the JSON API with schemathesis: every operation of the app's own
OpenAPI schema, in process (ASGI, no network), a bounded and reproducible number of examples;
and schemathesis' own CLI with every check (`--checks all`) and every phase, the stateful one
included (it follows the OpenAPI links from POST /api/traces), against a real server on
127.0.0.1 with an admin key. Both runs send the admin key (like a server bound beyond loopback),
so `ignored_auth` checks that the declared key (uploads, opening a session) is enforced.

Asserts no 5xx anywhere (a client's mistake is a 4xx naming the field) and that answers
conform to the schema: documented status codes, content types, bodies, the Allow header.

Random trace ids only ever reach the 404, so most cases swap in the id of a real trace (a
plain one with an update step, one with faults, a quiz): the fuzzed steps, positions, heads,
tensor names and bodies then reach the views; session codes likewise (a plain session and a bug
lab one, with the presenter's key). Sizes stay small through the server's own
limits (Settings below), not by skipping routes: every operation is fuzzed.

`make test` runs 10 examples an operation (plus schemathesis's coverage cases: boundary values
and schema violations, ~20-250 an operation); the long version, 300 examples, runs in
`make loadtest` (XT_LOADTEST=1), or any number with XT_FUZZ_EXAMPLES=N. With 10 the same
operations reach a 200 on the real traces as with 40 (the size `make test` ran before).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode

from tests.helpers.client import make_client, post_trace
from tests.helpers.env import sized
from tests.helpers.server import running_server
from tests.helpers.specs import SMALL_CONFIG

# Small limits: a fuzzed POST /api/traces builds at most a 2-layer, 120k-parameter model
# with 3 training steps, so every example stays cheap on 2 cores.
SMALL_LIMITS = dict(
    max_n_layer=2, max_n_embd=64, max_ffn_hidden=192, max_seq_len=64, max_params=120_000, max_train_steps=3
)
SMALL_LIMITS["max_record_steps"] = 3  # a fuzzed POST /api/runs that passes records 3 steps at most
ADMIN_KEY = "fuzz-admin-key"
WRITER = {"X-Admin-Key": ADMIN_KEY}
# Every request comes from one address: past the guessing limits (app/guesses.py) the fuzzer's
# random session codes and presenter keys would be 429s with Retry-After, which schemathesis waits
# out (minutes of the CLI run), and even a real code would be refused. The limits are lifted in both
# runs; tests/app/test_guessing.py holds them.
GUESSES_UNLIMITED = dict(join_failures_per_minute=10**9, key_failures_per_minute=10**9)
client = make_client(**SMALL_LIMITS, **GUESSES_UNLIMITED, admin_key=ADMIN_KEY)
client.headers.update(WRITER)
CONFIG_FILE = Path(__file__).with_name("schemathesis.toml")  # expected statuses (by check, by route), and why
schema = schemathesis.openapi.from_asgi(
    "/openapi.json", client.app, config=schemathesis.config.SchemathesisConfig.from_path(CONFIG_FILE)
)

_SPECS = [
    {"config": SMALL_CONFIG, "text": "the cat sat", "optimizer": {"name": "sgd", "lr": 0.1}},
    {
        "config": {**SMALL_CONFIG, "vocab_size": 12},
        "tokens": [[1, 2, 3, 4], [4, 3, 2, 1]],
        "faults": ["batch_mean_missing"],
    },
    {"config": SMALL_CONFIG, "text": "abcabcabc", "quiz": 7},
]


@functools.cache
def traces() -> list[dict]:
    """Built on first use, not when the module is collected."""
    return [post_trace(client, spec) for spec in _SPECS]


@functools.cache
def sessions() -> list[dict]:
    """A session on the plain trace (its poll is a 409) and one on the faulty trace (a bug lab:
    the poll opens), each with its trace, code and presenter key."""
    opened = []
    for spec, trace in list(zip(_SPECS, traces(), strict=True))[:2]:
        response = client.post("/api/sessions", json={"spec": spec})
        assert response.status_code == 201, response.text
        opened.append({**response.json(), "trace": trace})
    return opened


# Recorded tensors and parameters of the small traces (a fuzzed name is folded onto one).
TENSORS = [
    "tokens",
    "targets",
    "logits",
    "output_probs",
    "loss",
    "tok_embeddings",
    "norm",
    "layers.0.attention.wq",
    "layers.0.attention.probs",
    "layers.0.attention.scores",
    "layers.0.feed_forward.swiglu",
]


def _pick(names: list[str], value: str) -> str:
    return names[zlib.crc32(value.encode()) % len(names)]


def _within(value, size: int):
    """A fuzzed integer folded into [0, size); anything else unchanged."""
    return abs(value) % size if isinstance(value, int) and not isinstance(value, bool) else value


def _tame(case, trace: dict) -> None:
    """Folds the fuzzed step, sequence, position, head and layer into the trace's ranges, and
    a fuzzed spec onto a small config, so the example reaches the views instead of a 404/422."""
    if "index" in case.path_parameters:
        case.path_parameters["index"] = _within(case.path_parameters["index"], len(trace["steps"]))
    query, cfg = case.query or {}, trace["config"]
    for key, size in (("seq", trace["n_seq"]), ("pos", trace["T"]), ("head", cfg["n_head"])):
        if key in query:
            query[key] = _within(query[key], size)
    if isinstance(query.get("top_k"), int):
        query["top_k"] = 1 + _within(query["top_k"], 8)
    if isinstance(case.path_parameters.get("name"), str):
        case.path_parameters["name"] = _pick(TENSORS, case.path_parameters["name"])
    if isinstance(query.get("param"), str):
        query["param"] = _pick(TENSORS, query["param"])
    if isinstance(query.get("layer"), str):  # a layer index or "output"
        layer = query["layer"]
        query["layer"] = str(abs(int(layer)) % cfg["n_layer"]) if layer.lstrip("-").isdigit() else "output"
    if isinstance(case.body, dict) and "step" in case.body:
        case.body["step"] = _within(case.body["step"], len(trace["steps"]))


def _tame_spec(body) -> None:
    if not isinstance(body, dict):
        return
    body["model"], body["config"] = None, SMALL_CONFIG
    if isinstance(body.get("text"), str):
        body["text"] = body["text"][:24]
    tokens = body.get("tokens")
    if isinstance(tokens, list):
        rows = tokens if tokens and isinstance(tokens[0], list) else [tokens]
        rows = [([_within(t, 50) for t in row[:12]] + [1, 2])[: max(2, len(row[:12]))] for row in rows[:2]]
        body["tokens"] = rows if tokens and isinstance(tokens[0], list) else rows[0]
    body["train_steps"] = _within(body.get("train_steps", 0), 3)
    for key in ("fault_layer",):
        body[key] = _within(body.get(key), 1)


# Every check schemathesis has (the CLI's `--checks all`).
ALL_CHECKS = [
    getattr(schemathesis.checks, name)
    for name in (
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
        "negative_data_rejection",
        "positive_data_acceptance",
        "missing_required_header",
        "unsupported_method",
        "allow_header_conformance",
        "use_after_free",
        "ensure_resource_availability",
        "ignored_auth",
        "object_level_authorization",
    )
]

# XT_FUZZ_EXAMPLES=300 for a deeper (slower) run.
EXAMPLES = int(os.environ.get("XT_FUZZ_EXAMPLES", sized(10, 300)))


@schema.parametrize()
@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_never_fails(case):
    # Deterministic: three cases in four are folded onto a real trace (or a small spec), the
    # fourth goes out as generated (random ids: the 404s; huge sizes: the 422s).
    # Negative cases (schema-violating on purpose) go out untouched: they must be a 4xx.
    pick = zlib.crc32(repr((case.path_parameters, case.query, case.body)).encode()) % 4
    positive = case.meta is None or case.meta.generation.mode == GenerationMode.POSITIVE
    if positive and pick < len(_SPECS):
        trace = traces()[pick]
        if case.path_parameters and "trace_id" in case.path_parameters:
            case.path_parameters["trace_id"] = trace["id"]
            _tame(case, trace)
        elif case.operation.label == "POST /api/traces":
            _tame_spec(case.body)
        elif case.path_parameters and "code" in case.path_parameters and pick < 2 and not case.path.endswith("/events"):
            _in_session(case, sessions()[pick])  # (a real session's event stream never ends)
    # Every check, positive_data_acceptance with the statuses that schemathesis.toml explains
    # (the schema states types, not the server's limits: a schema-valid request may be a 422).
    # The admin key goes with every request (sent explicitly: ignored_auth drops it and expects a 403).
    case.call_and_validate(checks=ALL_CHECKS, headers=WRITER)


def _in_session(case, session: dict) -> None:
    """A real code, the presenter's key, and a fuzzed step folded into the session's trace."""
    case.path_parameters["code"] = session["code"]
    case.headers = {**(case.headers or {}), "X-Presenter-Key": session["presenter_key"]}
    if isinstance(case.body, dict) and "step" in case.body:
        case.body["step"] = _within(case.body["step"], len(session["trace"]["steps"]))


# ---------------------------------------------------------------------- what the fuzzer found


def test_json_booleans_are_not_numbers():
    """Pydantic's lax mode read `"norm_eps": true` as 1.0 (a 200); now a 422 naming the field."""
    for body, loc in (
        ({"config": {"norm_eps": True}}, ["body", "config", "norm_eps"]),
        ({"config": {"n_layer": True}}, ["body", "config", "n_layer"]),
        ({"config": {"tie_embeddings": 1}}, ["body", "config", "tie_embeddings"]),
        ({"seed": False}, ["body", "seed"]),
    ):
        response = client.post("/api/traces", json=body)
        assert response.status_code == 422, body
        assert response.json()["detail"][0]["loc"] == loc
    assert (
        client.post("/api/traces", json={"config": {**SMALL_CONFIG, "norm_eps": 1}, "text": "abcab"}).status_code == 200
    )


def test_tensor_download_content_type_is_documented():
    content = schema.raw_schema["paths"]["/api/traces/{trace_id}/tensors/{name}"]["get"]["responses"]["200"]["content"]
    assert set(content) == {"application/octet-stream", "application/json"}


# ---------------------------------------------------------------------- schemathesis' CLI, every check

# Examples an operation in the fuzzing and stateful phases (the coverage phase's cases come on
# top); 100 under `make loadtest`, any number with XT_FUZZ_CLI_EXAMPLES=N.
CLI_EXAMPLES = int(os.environ.get("XT_FUZZ_CLI_EXAMPLES", 5))


@pytest.mark.long  # a server of its own and schemathesis' CLI: 18 CPU-s; the in-process fuzzing above runs in make test
def test_schemathesis_cli_all_checks_and_stateful_phase():
    env = {f"XT_{name.upper()}": str(value) for name, value in (SMALL_LIMITS | GUESSES_UNLIMITED).items()}
    env.update(XT_ADMIN_KEY=ADMIN_KEY, XT_MODELS_DIR=tempfile.mkdtemp(prefix="xt-fuzz-models-"))
    env["XT_MAX_UPLOAD_BYTES"] = str(200_000)
    st = [sys.executable, "-c", "from schemathesis.cli import schemathesis; schemathesis()"]
    with running_server(env) as server:
        command = [*st, "--config-file", str(CONFIG_FILE), "run", f"{server.base}/openapi.json", "--checks", "all"]
        command += ["--phases", "examples,coverage,fuzzing,stateful", "--max-examples", str(CLI_EXAMPLES)]
        command += ["--seed", "1", "--workers", "1", "--request-timeout", "60", "-H", f"X-Admin-Key: {ADMIN_KEY}"]
        run = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=900,
            env=dict(os.environ, NO_COLOR="1"),
            cwd=tempfile.mkdtemp(prefix="xt-schemathesis-"),  # its .schemathesis/ cache stays out of the repo
        )
        log = server.log_tail()
    summary = run.stdout[run.stdout.find("Coverage (") :]
    print("\n" + summary)
    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-2000:] + log
    assert re.search(r"Stateful.*\n\s*\n\s*Scenarios:\s+\d+", run.stdout), run.stdout[-4000:]
    assert "Traceback" not in log and " 500 " not in log, log
