"""Checkpoints in the app: the listing, a spec naming a model (it fixes config and tokenizer),
uploads (stored by sha256, listed, usable), and every way an upload is refused."""

from __future__ import annotations

import hashlib
import io
import math
import pickle
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest

import xt_core
from app.checkpoints.formats import UPLOAD_SUFFIXES
from app.spec import TraceSpec, resolve, spec_from_query
from tests.helpers.client import make_client
from xt_core.checkpoint import Checkpoint, export_llama2c, save
from xt_core.text.byte_char import CharTokenizer

ALPHABET = "abcdefghijklmnopqrstuvwxyz"
CFG = xt_core.Config(vocab_size=26, n_layer=1, n_head=2, n_kv_head=2, n_embd=16, ffn_hidden=24, seq_len=32)
TEXT = "abcabcabcabc"


def checkpoint_bytes(suffix: str, tmp: Path, seed: int = 3, meta: dict | None = None, cfg=CFG) -> bytes:
    params = xt_core.init_params(cfg, seed=seed)
    path = tmp / f"ckpt-{seed}{suffix}"
    if suffix == ".bin":
        export_llama2c(path, cfg, params)
    else:
        save(path, Checkpoint(cfg, params, CharTokenizer(ALPHABET), meta or {}))
    return path.read_bytes()


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    shipped, uploads = root / "shipped", root / "uploads"
    shipped.mkdir()
    meta = {"description": "copies repeated letters", "examples": [TEXT, "xyzxyz"], "final_loss": 0.1}
    (shipped / "induction.safetensors").write_bytes(checkpoint_bytes(".safetensors", root, 3, meta))
    (shipped / "text.safetensors").write_bytes(checkpoint_bytes(".safetensors", root, 4, {"examples": ["abc"]}))
    (shipped / "Not-A-Name.safetensors").write_bytes(b"ignored: not a shipped model name")
    return {"root": root, "shipped": shipped, "uploads": uploads}


@pytest.fixture(scope="module")
def client(dirs):
    with make_client(shipped_models_dir=dirs["shipped"], models_dir=dirs["uploads"], max_upload_bytes=1 << 20) as c:
        yield c


def upload(client, filename: str, data: bytes, content_type: str = "application/octet-stream"):
    return client.post("/api/models", files={"file": (filename, data, content_type)})


def detail_msg(response) -> str:
    detail = response.json()["detail"]
    return detail if isinstance(detail, str) else " ".join(d["msg"] for d in detail)


def error_loc(response) -> list:
    return response.json()["detail"][0]["loc"]


# ---------------------------------------------------------------------- listing


def test_models_lists_demo_models_first_with_their_facts(client):
    body = client.get("/api/models").json()
    names = [m["name"] for m in body["models"]]
    assert names[:2] == ["induction", "text"]  # demo order; the file with a bad name is not listed
    induction = body["models"][0]
    assert induction["shipped"] is True and induction["tokenizer"] == "char" and induction["alphabet"] == ALPHABET
    assert induction["config"] == CFG.to_dict() and induction["n_params"] == CFG.n_params()
    assert induction["description"] == "copies repeated letters" and induction["examples"] == [TEXT, "xyzxyz"]
    assert [p["name"] for p in body["presets"]] == ["tiny-1", "tiny-2", "class"]


# ---------------------------------------------------------------------- a spec naming a model


def test_a_model_spec_runs_the_checkpoint_weights(client, dirs):
    body = client.post("/api/traces", json={"model": "induction", "text": TEXT}).json()
    assert body["spec"]["model"] == "induction" and body["spec"]["config"] is None  # the checkpoint fixes it
    assert body["config"] == CFG.to_dict() and body["spec"]["tokenizer"] == "char"
    ids = np.array([ALPHABET.index(c) for c in TEXT])
    expected = xt_core.forward_backward(CFG, xt_core.init_params(CFG, seed=3), ids[:-1], ids[1:]).loss
    assert body["loss"] == pytest.approx(expected, rel=1e-6)
    settings = client.app.state.settings
    assert resolve(spec_from_query(body["query"]), settings).id == body["id"]  # the permalink
    assert resolve(TraceSpec.model_validate(body["spec"]), settings).id == body["id"]  # the canonical spec


@pytest.mark.parametrize(
    ("body", "loc", "words"),
    [
        ({"model": "induction", "text": TEXT, "config": {"n_layer": 2}}, ["body", "config", "n_layer"], "fixes"),
        ({"model": "induction", "text": "abcZab"}, ["body", "text"], "'Z' at position 3"),
        ({"model": "induction", "text": TEXT, "tokenizer": "byte"}, ["body", "tokenizer"], "char"),
        ({"model": "nope", "text": TEXT}, ["body", "model"], "induction, text"),
        ({"model": "../shipped/induction", "text": TEXT}, ["body", "model"], "unknown model"),
        ({"model": "/etc/passwd", "text": TEXT}, ["body", "model"], "unknown model"),
        ({"model": "Not-A-Name", "text": TEXT}, ["body", "model"], "unknown model"),
        ({"model": "sha256-" + "0" * 64, "text": TEXT}, ["body", "model"], "unknown model"),
        ({"model": "induction", "text": "a" * 40}, ["body", "text"], "seq_len = 32"),
    ],
)
def test_model_spec_mistakes_are_422_naming_the_field(client, body, loc, words):
    response = client.post("/api/traces", json=body)
    assert response.status_code == 422, response.text
    assert error_loc(response) == loc
    assert words in detail_msg(response)


def test_home_starts_on_the_induction_model_with_its_example(client):
    html = client.get("/").text
    assert re.search(r'<option [^>]*value="induction" selected>', html)
    assert f">{TEXT}</textarea>" in html


def test_home_without_checkpoints_starts_on_a_random_init(tmp_path):
    with make_client(shipped_models_dir=tmp_path / "none", models_dir=tmp_path / "up") as c:
        html = c.get("/").text
    assert '<option value="" selected>Random init' in html


def test_a_form_naming_a_checkpoint_drops_the_sizes_it_also_sent(client):
    query = {"form": "home", "model": "induction", "text": TEXT, "n_layer": "2", "n_head": "4", "tokenizer": "byte"}
    response = client.get("/walk", params=query, follow_redirects=False)
    assert response.status_code == 303
    location = response.headers["location"]
    assert "model=induction" in location and "n_layer" not in location and "tokenizer=char" in location
    page = client.get(location)
    assert page.status_code == 200 and "induction (checkpoint)" in page.text


# ---------------------------------------------------------------------- uploads


def test_upload_round_trip_store_list_and_trace(client, dirs, tmp_path):
    data = checkpoint_bytes(".safetensors", tmp_path, seed=11, meta={"description": "mine"})
    response = upload(client, "../evil/dir/mine.safetensors", data)
    assert response.status_code == 201, response.text
    name = response.json()["name"]
    assert name == "sha256-" + hashlib.sha256(data).hexdigest()
    assert (dirs["uploads"] / f"{name}.safetensors").is_file()
    assert not (dirs["root"] / "evil").exists()  # the filename is a label, never a path
    listed = {m["name"]: m for m in client.get("/api/models").json()["models"]}
    assert listed[name]["shipped"] is False and "mine.safetensors" in listed[name]["label"]
    assert listed[name]["description"] == "mine"
    trace = client.post("/api/traces", json={"model": name, "text": TEXT})
    assert trace.status_code == 200 and trace.json()["spec"]["model"] == name
    assert upload(client, "again.safetensors", data).json()["name"] == name  # content-addressed


def test_upload_npz_and_llama2c_bin(client, tmp_path):
    npz = upload(client, "model.npz", checkpoint_bytes(".npz", tmp_path, seed=12))
    assert npz.status_code == 201, npz.text
    assert npz.json()["model"]["tokenizer"] == "char"
    binary = upload(client, "stories.bin", checkpoint_bytes(".bin", tmp_path, seed=13))
    assert binary.status_code == 201, binary.text
    name = binary.json()["name"]
    assert binary.json()["model"]["tokenizer"] is None  # llama2.c files carry no tokenizer
    assert client.post("/api/traces", json={"model": name, "tokens": [1, 2, 3, 4]}).status_code == 200
    response = client.post("/api/traces", json={"model": name, "text": "abc"})
    assert response.status_code == 422 and "token ids" in detail_msg(response)


def test_oversize_upload_is_413(client, tmp_path):
    big = b"\0" * ((1 << 20) + 1)
    response = upload(client, "big.safetensors", big)
    assert response.status_code == 413
    assert "1.0 MB" in detail_msg(response)
    huge = b"\0" * (3 << 20)  # past the body limit: refused while it arrives
    assert upload(client, "huge.safetensors", huge).status_code == 413


def test_corrupt_checkpoint_is_422_with_the_checkpoint_error(client, tmp_path):
    data = checkpoint_bytes(".safetensors", tmp_path, seed=14)
    response = upload(client, "cut.safetensors", data[: len(data) // 2])
    assert response.status_code == 422
    assert error_loc(response) == ["body", "file"] and "not a readable safetensors file" in detail_msg(response)
    garbage = upload(client, "noise.npz", b"PK not really a zip")
    assert garbage.status_code == 422 and "not a readable .npz" in detail_msg(garbage)
    assert upload(client, "short.bin", b"\1\2\3").status_code == 422


class _Marker:
    """Unpickling this creates a file: proof that nothing was unpickled when it stays absent."""

    def __init__(self, path: Path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


def test_pickles_are_never_loaded(client, tmp_path):
    marker = tmp_path / "unpickled"
    buffer = io.BytesIO()
    np.savez(buffer, tok_embeddings=np.array([_Marker(marker)], dtype=object))
    response = upload(client, "evil.npz", buffer.getvalue())
    assert response.status_code == 422 and "pickle" in detail_msg(response).lower()
    assert not marker.exists()
    for name in ("model.pth", "model.pkl"):
        refused = upload(client, name, pickle.dumps(_Marker(marker)))
        assert refused.status_code == 415 and "PyTorch .pth files are pickles" in detail_msg(refused)
    # nanoGPT's .pt is taken, and read without running its pickle (xt_core/checkpoint/torch_file.py)
    bare = upload(client, "model.pt", pickle.dumps(_Marker(marker)))
    assert bare.status_code == 422 and "not a torch.save" in detail_msg(bare)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:  # laid out as torch.save writes: ckpt/data.pkl
        z.writestr("ckpt/data.pkl", pickle.dumps({"model": _Marker(marker), "model_args": {}}, protocol=2))
        z.writestr("ckpt/byteorder", b"little")
    evil = upload(client, "ckpt.pt", archive.getvalue())
    assert evil.status_code == 422 and "never runs code" in detail_msg(evil) and "'io.open'" in detail_msg(evil)
    assert not marker.exists()


def test_every_reader_of_the_upload_suffixes_names_the_same_ones(client):
    """The refusal, the OpenAPI text and the home page's file picker and help all say the one list."""
    assert UPLOAD_SUFFIXES == (".safetensors", ".npz", ".bin", ".pt")
    refused = detail_msg(upload(client, "model.ckpt", b"x"))
    assert "send one of xt .safetensors or .npz, or llama2.c .bin, or nanoGPT .pt (a nanoGPT" in refused
    upload_doc = client.get("/openapi.json").json()["paths"]["/api/models"]["post"]
    assert upload_doc["summary"] == (
        "Upload a checkpoint (xt .safetensors or .npz, or llama2.c .bin, or nanoGPT .pt); answers its name"
    )
    assert upload_doc["responses"]["415"]["description"].endswith("not a .safetensors / .npz / .bin / .pt file")
    home = client.get("/").text
    assert 'accept=".safetensors,.npz,.bin,.pt"' in home
    shown = re.sub(r'<span translate="no">([^<]*)</span>', r"\1", home)  # format names are never translated
    assert (
        "An xt <code>.safetensors</code> or <code>.npz</code>, or a llama2.c <code>.bin</code>, "
        "or a nanoGPT <code>.pt</code>; at most" in shown
    )


def test_an_npz_that_expands_past_the_limit_is_refused(client):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("tok_embeddings.npy", b"\0" * (9 << 20))  # 9 MB of zeros, a few kB compressed
    assert len(buffer.getvalue()) < 1 << 20
    response = upload(client, "bomb.npz", buffer.getvalue())
    assert response.status_code == 413 and "expands" in detail_msg(response)


def test_upload_form_mistakes(client, tmp_path):
    no_file = client.post("/api/models", data={"note": "hello"}, files={"other": (None, "x")})
    assert no_file.status_code == 422 and "exactly one file" in detail_msg(no_file)
    not_multipart = client.post("/api/models", content=b"{}", headers={"Content-Type": "application/json"})
    assert not_multipart.status_code == 415
    assert upload(client, "empty.safetensors", b"").status_code == 422


def test_an_upload_beyond_the_servers_model_limits_is_422(dirs, tmp_path):
    with make_client(shipped_models_dir=dirs["shipped"], models_dir=tmp_path / "up", max_n_layer=1) as c:
        two_layers = xt_core.Config(**{**CFG.to_dict(), "n_layer": 2})
        response = upload(c, "deep.safetensors", checkpoint_bytes(".safetensors", tmp_path, 15, cfg=two_layers))
    assert response.status_code == 422 and "n_layer = 2" in detail_msg(response)
    assert not any((tmp_path / "up").glob("*.safetensors"))


def test_uploads_past_the_store_quota_are_507_and_nothing_is_deleted(dirs, tmp_path):
    first = checkpoint_bytes(".safetensors", tmp_path, seed=21)
    with make_client(
        shipped_models_dir=dirs["shipped"], models_dir=tmp_path / "up", max_upload_store_bytes=len(first) + 1024
    ) as c:
        kept = upload(c, "first.safetensors", first)
        assert kept.status_code == 201, kept.text
        refused = upload(c, "second.safetensors", checkpoint_bytes(".safetensors", tmp_path, seed=22))
        assert refused.status_code == 507
        assert "max_upload_store_bytes" in refused.json()["detail"]
        assert upload(c, "again.safetensors", first).status_code == 201  # already stored: no new bytes
        stored = list((tmp_path / "up").glob("sha256-*.safetensors"))
        assert [p.stem for p in stored] == [kept.json()["name"]]


def test_the_demo_models_say_what_their_training_measured_and_the_walk_names_the_induction_head():
    """The listing carries what `xt train` measured (the induction head its probe found; the text
    model's held-out loss and a sample), and the induction head's layer names it on the walk:
    from the measurement, so a retrained model whose head moves is named right."""
    with make_client() as client:  # the shipped demo models
        _check_measured(client)


def _check_measured(client) -> None:
    models = {m["name"]: m for m in client.get("/api/models").json()["models"]}
    found = models["induction"]["measured"]
    assert found["induction_score"] >= 0.8 and {"induction_layer", "induction_head"} <= set(found)
    assert models["text"]["measured"]["heldout_loss"] > 0 and models["text"]["measured"]["sample"]
    gpt2 = models["gpt2-text"]  # the GPT-2-style demo: the text task's corpus, GPT-2's ops
    assert gpt2["shipped"] and gpt2["config"]["family"] == "gpt2" and gpt2["tokenizer"] == "char"
    assert 0 < gpt2["measured"]["heldout_loss"] < math.log(gpt2["config"]["vocab_size"])
    walked = client.post("/api/traces", json={"model": "gpt2-text", "text": gpt2["examples"][0]}).json()
    assert {"embedding_positions", "layers.1.feed_forward.gelu"} <= {s["name"] for s in walked["steps"]}
    trace = client.post("/api/traces", json={"model": "induction", "text": "abcabcabc"}).json()
    layer, head = found["induction_layer"], found["induction_head"]
    for step in trace["steps"]:
        if step["name"].endswith("attention.probs") and step["phase"] == "forward":
            text = client.get(f"/api/traces/{trace['id']}/steps/{step['index']}").json()["explanation"]
            named = f"Layer {layer}, head {head}: induction head" in text
            assert named == (step["name"] == f"layers.{layer}.attention.probs"), step["name"]
