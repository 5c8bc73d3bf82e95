"""Issue 14, in process: each finding reproduced and now a 4xx (or a listing that skips what it
cannot describe), never a 500. The findings that need a real server (RSS under load, SIGTERM,
the 452-byte upload's memory) are in test_admission.py; the guard (Host, origin, admin key)
in test_guard.py; the cost model in test_cost.py."""

from __future__ import annotations

import io
import json
import struct
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

import xt_core
import xt_core.model
from app.checkpoints.registry import PARTIAL_PREFIX
from tests.app.checkpoints.test_checkpoints import CFG, checkpoint_bytes, detail_msg, error_loc, upload
from tests.helpers.aio import run_async
from tests.helpers.client import make_client
from tests.helpers.specs import SMALL_SPEC
from xt_core.checkpoint import FORMAT
from xt_core.checkpoint.llama2c import HEADER


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    root = tmp_path_factory.mktemp("hardening")
    with make_client(models_dir=root / "uploads", shipped_models_dir=root / "shipped") as c:
        yield c


def raw_safetensors(tmp: Path, *, config: dict | None = None, tokenizer="null", meta="{}", params=None) -> bytes:
    """A safetensors file with metadata strings as given (xt's save would refuse bad ones)."""
    from safetensors.numpy import save_file

    params = params if params is not None else xt_core.init_params(CFG, seed=1)
    metadata = {"format": FORMAT, "config": json.dumps(config or CFG.to_dict()), "tokenizer": tokenizer, "meta": meta}
    path = tmp / "raw.safetensors"
    save_file({k: np.ascontiguousarray(v) for k, v in params.items()}, str(path), metadata=metadata)
    return path.read_bytes()


# ---------------------------------------------------------------------- 1: the 452-byte upload


def test_finding_1_a_lying_header_is_refused_before_anything_its_config_claims(client, tmp_path, monkeypatch):
    """A llama2.c header claiming 100,000 layers in 452 bytes, and a safetensors whose config says
    n_layer = 100000: 422 from the server's limits, before param_shapes (O(n_layer)) or any read."""
    one_layer = xt_core.init_params(CFG, seed=1)  # the file holds one layer's tensors
    calls = []
    monkeypatch.setattr(xt_core.model, "param_shapes", lambda *a: calls.append(a) or {})
    header = HEADER.pack(4096, 11008, 100_000, 32, 32, 32000, 2048)
    tiny = header + b"\0" * (452 - len(header))
    response = upload(client, "stories.bin", tiny)
    assert response.status_code == 422 and error_loc(response) == ["body", "file"]
    assert "n_layer = 100000" in detail_msg(response) and "limit of 8" in detail_msg(response)
    deep = raw_safetensors(tmp_path, config={**CFG.to_dict(), "n_layer": 100_000}, params=one_layer)
    response = upload(client, "deep.safetensors", deep)
    assert response.status_code == 422 and "n_layer = 100000" in detail_msg(response)
    assert len(response.content) < 2_000  # not 26.7 MB naming every missing tensor
    assert calls == []


# ---------------------------------------------------------------------- 2: metadata that broke the listing

BAD_METADATA = [
    ({"tokenizer": "null", "meta": json.dumps({"examples": 5})}, "meta.examples"),
    ({"tokenizer": "[1]", "meta": "{}"}, "tokenizer"),
    ({"tokenizer": '"byte"', "meta": "{}"}, "tokenizer"),
    ({"tokenizer": json.dumps({"name": "char", "chars": "cba"}), "meta": "{}"}, "sorted"),
    ({"tokenizer": json.dumps({"name": "char", "chars": "aab"}), "meta": "{}"}, "sorted"),
    ({"tokenizer": "null", "meta": "[1, 2]"}, "meta"),
]


@pytest.mark.parametrize(("metadata", "words"), BAD_METADATA)
def test_finding_2_bad_metadata_is_422_and_never_stored(client, tmp_path, metadata, words):
    response = upload(client, "odd.safetensors", raw_safetensors(tmp_path, **metadata))
    assert response.status_code == 422, response.text
    assert words in detail_msg(response)
    assert client.get("/api/models").status_code == 200
    assert client.get("/").status_code == 200


def test_finding_2_a_bad_file_already_stored_is_skipped_after_a_restart(tmp_path, caplog):
    """A file an older server stored (or one put there by hand): the listing and the home page
    skip it and log why, across restarts, instead of answering 500."""
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    for i, (metadata, _) in enumerate(BAD_METADATA):
        (uploads / f"sha256-{i:064x}.safetensors").write_bytes(raw_safetensors(tmp_path, **metadata))
    for _restart in range(2):
        with make_client(models_dir=uploads, shipped_models_dir=tmp_path / "none") as c:
            assert c.get("/").status_code == 200
            listing = c.get("/api/models")
            assert listing.status_code == 200 and listing.json()["models"] == []
            bad = c.post("/api/traces", json={"model": f"sha256-{0:064x}", "text": "abc"})
            assert bad.status_code == 422 and "meta.examples" in detail_msg(bad)
    assert "skipping model" in caplog.text


# ---------------------------------------------------------------------- 6: 500 instead of 422

BAD_BODIES = [
    (b'{"tokens":[0,9223372036854775808]}', ["body", "tokens"]),
    (b'{"text":"ab\\ud800cd"}', ["body", "text"]),
    (b'{"optimizer":{"name":["sgd"]}}', ["body", "optimizer", "name"]),
    (b'{"optimizer":{"name":"sgd","lr":1' + b"0" * 400 + b"}}", ["body", "optimizer", "lr"]),
    (b'{"optimizer":{"name":"adamw","beta1":"0.9"}}', ["body", "optimizer", "beta1"]),
    (b'{"config":{"n_layer":1e400}}', ["body", "config", "n_layer"]),
    (b'{"tokenizer":"\\ud800"}', ["body", "tokenizer"]),
    (b'{"model":"\\udfff"}', ["body", "model"]),
]


@pytest.mark.parametrize(("body", "loc"), BAD_BODIES)
def test_finding_6_bad_values_are_422_naming_the_field(client, body, loc):
    response = client.post("/api/traces", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"] == loc


def test_finding_6_an_npz_claiming_2_to_the_40_entries_is_422(client):
    header = {"descr": "<f4", "fortran_order": False, "shape": (1 << 40,)}
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, header)
    buffer.write(b"\0" * 64)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("tok_embeddings.npy", buffer.getvalue())
        for key, value in (("format", FORMAT), ("config", json.dumps(CFG.to_dict()))):
            member = io.BytesIO()
            np.save(member, np.array(value))
            z.writestr(f"__{key}__.npy", member.getvalue())
    response = upload(client, "huge.npz", archive.getvalue())
    assert response.status_code == 422, response.text


def test_finding_6_a_walk_link_with_a_huge_token_id_is_the_form_again(client):
    response = client.get("/walk", params={"tokens": "0,99999999999999999999", "step": "0"})
    assert response.status_code == 422 and "token ids must lie in" in response.text


def test_a_422_lists_a_few_errors_without_echoing_the_input(client):
    body = json.dumps({"tokens": ["x"] * 2000, "text": "secret words"}).encode()
    response = client.post("/api/traces", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert len(detail) <= 11 and "more errors" in detail[-1]["msg"]
    assert all(set(d) == {"loc", "msg", "type"} for d in detail)
    assert len(response.content) < 4_000


# ---------------------------------------------------------------------- 7: bodies bounded before parsing


def test_finding_7_a_body_past_the_limit_is_413_before_it_is_read_whole():
    """Driven at the ASGI level (TestClient reads a request body whole before the app runs): 64 MB
    offered in 64 kB messages, the guard stops reading after the first two and never calls the app."""

    from app.security import Guard
    from app.settings import Settings

    pulled, sent, reached = [], [], []

    async def receive():
        pulled.append(1)
        return {"type": "http.request", "body": b" " * (64 << 10), "more_body": len(pulled) < 1000}

    async def send(message):
        sent.append(message)

    async def app(scope, receive, send):
        reached.append(scope)

    scope = {"type": "http", "method": "POST", "path": "/api/traces", "query_string": b"", "scheme": "http"}
    scope["headers"] = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")]
    run_async(Guard(app, Settings(max_body_bytes=100_000))(scope, receive, send))
    assert sent[0]["status"] == 413 and b"max_body_bytes" in sent[1]["body"]
    assert len(pulled) == 2 and reached == []
    with make_client(max_body_bytes=64 << 10) as c:
        declared = c.post(
            "/api/traces", content=b"{}", headers={"Content-Type": "application/json", "Content-Length": str(300 << 20)}
        )
        assert declared.status_code == 413  # from Content-Length alone
        big = c.post("/api/traces", content=b" " * (65 << 10), headers={"Content-Type": "application/json"})
        assert big.status_code == 413


def test_finding_7_a_large_json_body_is_parsed_off_the_event_loop(monkeypatch):
    import app.deps

    threads = []
    real_loads = json.loads

    def spy(body, *args, **kwargs):
        threads.append(threading.current_thread().name)
        return real_loads(body, *args, **kwargs)

    monkeypatch.setattr(app.deps.json, "loads", spy)
    with make_client() as c:
        body = json.dumps(SMALL_SPEC).encode()
        body = body[:-1] + b" " * (app.deps.OFF_LOOP_JSON_BYTES + 10) + b"}"  # JSON whitespace past the threshold
        assert c.post("/api/traces", content=body, headers={"Content-Type": "application/json"}).status_code == 200
    assert threads and all(name != "MainThread" and not name.startswith("asyncio") for name in threads)
    assert any("AnyIO" in name or "worker" in name.lower() for name in threads), threads


# ---------------------------------------------------------------------- 8: uploads within the spec limits


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("seq_len", 1_000_000_000, "seq_len = 1000000000"),
        ("rope_theta", 1e9, "rope_theta"),
        ("rope_theta", 1e300, "rope_theta"),
        ("rope_theta", 1e-300, "rope_theta"),
        ("norm_eps", 1e300, "norm_eps"),
        ("norm_eps", 1e-15, "norm_eps"),
        ("head_dim", 1_000_000, "head_dim = 1000000"),  # refused before a (C, H*hd) shape is compared
    ],
)
def test_finding_8_uploads_must_fit_the_limits_a_spec_has(client, tmp_path, field, value, words):
    config = {**CFG.to_dict(), field: value}
    params = xt_core.init_params(
        CFG, seed=1
    )  # seq_len, theta and eps change no tensor's shape; head_dim is refused first
    response = upload(client, "odd.safetensors", raw_safetensors(tmp_path, config=config, params=params))
    assert response.status_code == 422, response.text
    assert words in detail_msg(response)


def test_finding_8_a_llama2c_header_with_a_huge_seq_len_is_refused_from_its_header(client):
    header = HEADER.pack(16, 24, 1, 2, 2, 26, 1_000_000_000)
    response = upload(client, "long.bin", header + struct.pack("<4f", 0, 0, 0, 0))
    assert response.status_code == 422 and "seq_len = 1000000000" in detail_msg(response)


# ---------------------------------------------------------------------- 9: how uploads are stored


def test_finding_9_a_corrupt_stored_file_is_replaced_by_a_valid_upload(tmp_path):
    data = checkpoint_bytes(".safetensors", tmp_path, seed=31)
    with make_client(models_dir=tmp_path / "up", shipped_models_dir=tmp_path / "none") as c:
        first = upload(c, "good.safetensors", data)
        assert first.status_code == 201
        stored = tmp_path / "up" / f"{first.json()['name']}.safetensors"
        stored.write_bytes(stored.read_bytes()[:-100])  # the disk or a crash cut it short
        again = upload(c, "good.safetensors", data)
        assert again.status_code == 201 and again.json()["name"] == first.json()["name"]
        trace = c.post("/api/traces", json={"model": first.json()["name"], "text": "abcab"})
        assert trace.status_code == 200, trace.text  # the stored file is whole again


def test_finding_9_uploads_stage_in_the_models_dir_and_stale_partials_go_at_startup(tmp_path, monkeypatch):
    import tempfile

    uploads = tmp_path / "up"
    uploads.mkdir()
    stale = uploads / f"{PARTIAL_PREFIX}999999999-0123456789abcdef"  # no such process
    stale.mkdir()
    (stale / "upload.npz").write_bytes(b"half an upload")
    monkeypatch.setattr(tempfile, "TemporaryDirectory", None)  # nothing goes to /tmp any more
    with make_client(models_dir=uploads, shipped_models_dir=tmp_path / "none") as c:
        assert not stale.exists()
        assert upload(c, "m.npz", checkpoint_bytes(".npz", tmp_path, seed=32)).status_code == 201
        refused = upload(c, "bad.npz", b"PK nope")
        assert refused.status_code == 422 and detail_msg(refused).startswith("upload.npz: ")
        stories = upload(c, "stories.bin", checkpoint_bytes(".bin", tmp_path, seed=33)).json()["model"]
        assert stories["description"] == "llama2.c stories.bin"
    assert [p.name for p in uploads.iterdir() if p.name.startswith(PARTIAL_PREFIX)] == []


# ---------------------------------------------------------------------- 10: the small ones


def test_finding_10_booleans_truncated_json_media_type_and_cache_control(client):
    booleans = client.post("/api/traces", json={"tokens": [True, False]})
    assert booleans.status_code == 422 and booleans.json()["detail"][0]["loc"][:2] == ["body", "tokens"]
    truncated = client.post("/api/traces", content=b'{"text": "abc"', headers={"Content-Type": "application/json"})
    assert truncated.status_code == 400 and "not valid JSON" in truncated.json()["detail"]
    plain = client.post("/api/traces", content=b'{"text": "abc"}', headers={"Content-Type": "text/plain"})
    assert plain.status_code == 415 and "application/json" in plain.json()["detail"]
    for response in (client.get("/api/models"), client.post("/api/traces", json=SMALL_SPEC), booleans, plain):
        assert response.headers["cache-control"] == "no-store"


# ---------------------------------------------------------------------- messages that name the limit

# A number past int64 written with an exponent, a huge token id, an optimizer given as its name:
# each message names the field and its limit or expected form (pydantic's own said "exceeded
# maximum size", "an integer of 47 bits", "Input should be a valid dictionary").
NAMED_LIMITS = [
    (b'{"train_steps":1e308}', ["body", "train_steps"], ["between 0 and 500", "max_train_steps", "got 1e+308"]),
    (b'{"config":{"seq_len":1e20}}', ["body", "config", "seq_len"], ["between 1 and 256", "got 1e+20"]),
    (b'{"seed":1e30}', ["body", "seed"], ["between 0 and 4294967295", "got 1e+30"]),
    (b'{"tokens":[1,2,100000000000000]}', ["body", "tokens"], ["vocab_size = 96", "from 1 to 1e+14"]),
    (b'{"optimizer":"adamw"}', ["body", "optimizer"], ['such as {"name": "adamw", "lr": 0.003}', "got a string"]),
    (b'{"train_steps":1' + b"0" * 400 + b"}", ["body", "train_steps"], ["between 0 and 500", "1329 bits"]),
]


@pytest.mark.parametrize(("body", "loc", "parts"), NAMED_LIMITS)
def test_out_of_range_numbers_and_wrong_shapes_name_the_limit_or_form(client, body, loc, parts):
    response = client.post("/api/traces", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == loc
    for part in parts:
        assert part in error["msg"], (part, error["msg"])
    assert len(response.content) < 400  # never the input's digits echoed back


def test_an_overlong_model_name_is_refused_without_being_echoed():
    from tests.helpers.client import make_client

    with make_client() as client:
        refused = client.post("/api/traces", json={"model": "x" * 5000, "text": "hello"})
        assert refused.status_code == 422 and refused.json()["detail"][0]["loc"] == ["body", "model"]
        assert "100" in refused.text and len(refused.content) < 500
