"""Adding a checkpoint file format is one reader and one row of xt_core.checkpoint.formats: this
file registers a made-up one ("tiny": the magic TINY, a JSON config, float32 tensors in xt's
order) through `register`, the seam xt's own rows use, and nothing else is edited. A tiny file
is then served (`xt serve --model`, by its suffix or by its first bytes alone), uploaded, walked,
and refused for the feature its row refuses; the app's texts name it where they name formats."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

import xt_core
from tests.app.checkpoints.test_checkpoints import detail_msg, upload
from tests.helpers.client import make_client
from xt_core.checkpoint import Checkpoint, CheckpointError
from xt_core.checkpoint.common import Header, config_from_fields
from xt_core.checkpoint.formats import FILE_FORMATS, FileFormat, readable, recognise, register, registered
from xt_core.model import param_shapes

MAGIC = b"TINY"
REFUSES = {"bias": "xt's Llama has no biases"}
CFG = xt_core.Config(vocab_size=40, n_layer=1, n_head=2, n_kv_head=1, n_embd=16, ffn_hidden=24, seq_len=16)
TOKENS = [[3, 1, 4, 1, 5, 9, 2, 6, 5, 3]]


def tiny_header(path: Path, limits) -> Header:
    """The whole reader of the made-up format: header checks and limits first, tensors later."""
    raw = path.read_bytes()
    if not raw.startswith(MAGIC) or len(raw) < 8:
        raise CheckpointError(f"{path.name}: no TINY header")
    (length,) = struct.unpack_from("<I", raw, 4)
    fields = json.loads(raw[8 : 8 + length])
    for feature, why in REFUSES.items():
        if fields.pop(feature, False):
            raise CheckpointError(f"{path.name}: {feature} = true is not supported: {why}")
    cfg = config_from_fields(fields, path.name, limits)
    meta = {"imported_from": f"tiny {path.name}"}

    def tensors() -> Checkpoint:
        values, params = np.frombuffer(raw, "<f4", offset=8 + length), {}
        for name, shape in param_shapes(cfg).items():
            size = int(np.prod(shape))
            params[name], values = values[:size].reshape(shape).astype(np.float32), values[size:]
        return Checkpoint(cfg, params, None, meta)

    return Header(cfg, None, meta, tensors)


TINY = FileFormat("tiny", "tiny test file", "tiny", tiny_header, suffixes=(".tiny",), magic=MAGIC, refuses=REFUSES)


def write_tiny(path: Path, params: dict, **extra) -> Path:
    config = json.dumps({**CFG.to_dict(), **extra}).encode()
    tensors = b"".join(np.asarray(params[name], "<f4").tobytes() for name in param_shapes(CFG))
    path.write_bytes(MAGIC + struct.pack("<I", len(config)) + config + tensors)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    params = xt_core.init_params(CFG, seed=5)
    return {
        "params": params,
        "named": write_tiny(root / "mine.tiny", params),
        "unnamed": write_tiny(root / "weights", params),  # no suffix: its first bytes say it
        "biased": write_tiny(root / "biased.tiny", params, bias=True),
    }


@pytest.fixture
def tiny():
    """The row, uploadable, for one test (a plugin would register it before the app starts)."""
    with registered(FileFormat(**{**TINY.__dict__, "uploadable": True})) as row:
        yield row


def expected_loss(params: dict) -> float:
    tokens = np.array(TOKENS[0])
    return xt_core.forward_backward(CFG, params, tokens[:-1], tokens[1:]).loss


def test_a_registered_format_is_served_by_suffix_or_first_bytes_and_walked(tiny, files, tmp_path):
    paths = (files["named"], files["unnamed"], files["biased"])
    with make_client(model_paths=paths, models_dir=tmp_path / "up") as client:
        listing = {m["name"]: m for m in client.get("/api/models").json()["models"]}
        assert {"mine.tiny", "weights"} <= set(listing) and "biased.tiny" not in listing
        assert listing["weights"]["kind"] == "served" and "(tiny test file)" in listing["weights"]["description"]
        for name in ("mine.tiny", "weights"):
            trace = client.post("/api/traces", json={"model": name, "tokens": TOKENS})
            assert trace.status_code == 200, trace.text
            assert trace.json()["loss"] == pytest.approx(expected_loss(files["params"]), rel=1e-5)
        step = client.get(f"/api/traces/{trace.json()['id']}/steps/3").json()
        assert step["gradcheck"]["passed"]
        refused = client.post("/api/traces", json={"model": "biased.tiny", "tokens": TOKENS})
        assert refused.status_code == 422  # its row's refusal, named, as every format's
        home = client.get("/").text
    assert "bias = true is not supported: xt&#39;s Llama has no biases" in home
    assert "bias = true" in detail_msg(refused)


def test_a_registered_uploadable_format_is_uploaded_and_named_where_uploads_are(tiny, files, tmp_path):
    with make_client(models_dir=tmp_path / "up") as client:
        answer = upload(client, "mine.tiny", files["named"].read_bytes())
        assert answer.status_code == 201, answer.text
        model = answer.json()["model"]
        assert model["kind"] == "upload" and model["description"] == "tiny mine.tiny"  # where it came from
        trace = client.post("/api/traces", json={"model": answer.json()["name"], "tokens": TOKENS})
        assert trace.json()["loss"] == pytest.approx(expected_loss(files["params"]), rel=1e-5)
        refused = upload(client, "biased.tiny", files["biased"].read_bytes())
        assert refused.status_code == 422 and "bias = true is not supported" in detail_msg(refused)
        wrong = upload(client, "model.ckpt", b"x")
        assert "xt .safetensors or .npz, or llama2.c .bin, or nanoGPT .pt, or tiny .tiny (a nanoGPT" in detail_msg(
            wrong
        )
        home = client.get("/").text
    assert (
        'accept=".safetensors,.npz,.bin,.pt,.tiny"' in home
        and 'or a <span translate="no">tiny</span> <code>.tiny</code>' in home
    )


def test_xt_rows_recognise_their_files(tmp_path):
    (tmp_path / "dir").mkdir()
    gguf = tmp_path / "no-suffix"
    gguf.write_bytes(b"GGUF\x03\x00\x00\x00")
    found = {path.name: recognise(path) for path in (tmp_path / "dir", gguf, tmp_path / "M.GGUF", tmp_path / "a.npz")}
    assert {name: row.name for name, row in found.items()} == {
        "dir": "hf",
        "no-suffix": "gguf",
        "M.GGUF": "gguf",
        "a.npz": "xt",
    }
    assert recognise(tmp_path / "notes.txt") is None and "tiny" not in FILE_FORMATS
    assert readable() == (
        "a Hugging Face Llama, Qwen or GPT-2 directory, .safetensors (xt), .npz (xt), .bin (llama2.c), "
        ".gguf (llama.cpp), .pt (nanoGPT)"
    )


def test_a_row_may_not_take_a_name_suffix_or_magic_another_has():
    with pytest.raises(ValueError, match="named 'gguf'"):
        register(FileFormat(**{**TINY.__dict__, "name": "gguf"}))
    with pytest.raises(ValueError, match=r"\.bin is llama2c's already"):
        register(FileFormat(**{**TINY.__dict__, "suffixes": (".bin",)}))
    with pytest.raises(ValueError, match="a directory is hf's already"):
        register(FileFormat(**{**TINY.__dict__, "suffixes": (), "directory": True}))
    with pytest.raises(ValueError, match="magic b'GGUF' is gguf's already"):
        register(FileFormat(**{**TINY.__dict__, "magic": b"GGUF"}))
    with pytest.raises(ValueError, match="lower case"):
        register(FileFormat(**{**TINY.__dict__, "suffixes": (".TINY",)}))
    assert "tiny" not in FILE_FORMATS
