"""GPT-2 in the app: a random init of the gpt2 family (GPT-2's form and nanoGPT's bias-free exact
GELU form), a Hugging Face GPT-2 directory, a nanoGPT ckpt.pt with its meta.pkl and a GPT-2 GGUF served by
`xt serve --model PATH`: each is built, and every one of its steps answers 200 over HTTP with a
passing gradient check; the served nanoGPT model encodes text with meta.pkl's characters.

Skips without torch and transformers (they write the files), except in CI (XT_REQUIRE_TORCH=1)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import xt_core
from app.steps import titles
from tests.app.steps.test_russian import ALLOWED, english_words
from tests.helpers.client import make_client
from tests.helpers.env import skip_unless_installed

SIZES = dict(vocab_size=40, n_layer=2, n_head=4, n_kv_head=4, n_embd=32, ffn_hidden=128, seq_len=16)
NANOGPT = dict(activation="gelu", norm_bias=False, qkv_bias=False, o_bias=False, mlp_bias=False, tie_embeddings=False)
CHARS = sorted(set("to be or not to be, that is the question"))


def walk_every_step(client, spec: dict) -> dict:
    """Builds the spec's trace and asks for each of its steps: 200 and a passing check each."""
    summary = client.post("/api/traces", json=spec)
    assert summary.status_code == 200, summary.text
    body = summary.json()
    failing = []
    for step in body["steps"]:
        view = client.get(f"/api/traces/{body['id']}/steps/{step['index']}")
        assert view.status_code == 200, (step["name"], view.text[:300])
        check = view.json()["gradcheck"]
        if check is not None and not check["passed"]:
            failing.append((step["name"], step["phase"]))
    assert not failing
    return body


@pytest.mark.parametrize("parts", [{}, NANOGPT], ids=["gpt2", "nanogpt"])
def test_a_random_gpt2_is_walked_with_every_check_passing(parts):
    with make_client() as client:
        config = {"family": "gpt2", **SIZES, "n_layer": 1, **parts}
        body = walk_every_step(client, {"config": config, "tokens": [[3, 9, 27, 3, 9, 0, 39]], "dtype": "float64"})
        assert body["config"]["family"] == "gpt2"
        steps = {(s["name"], s["phase"]): s for s in body["steps"]}
        assert steps["embedding_positions", "forward"]["title"] == "Learned position embedding added"
        assert (
            steps["layers.0.attention_norm.out", "backward"]["title"]
            == "Layer 0 · LayerNorm before attention — backward"
        )
        assert steps["layers.0.feed_forward.gelu", "forward"]["block"] == "layers.0.ffn"
        assert [b["label"] for b in body["blocks"]][-3] == "Final LayerNorm"
        norm = client.get(f"/api/traces/{body['id']}/steps/{steps['layers.0.attention_norm.out', 'backward']['index']}")
        titles = [figure["title"] for figure in norm.json()["figures"]]
        assert "Gradient arriving at the LayerNorm output of layer 0, before attention" in titles
        assert "Weight gradient from this op: layer 0 attention LayerNorm gain" in titles
        page = client.get("/walk", params={"family": "gpt2", "n_head": "4", "n_kv_head": "4", "text": "hello"})
        assert page.status_code == 200


def test_a_gpt2s_titles_and_figure_titles_are_in_russian_on_request():
    """GPT-2's own words (names.ftl's names-gpt2-… rows, its parameters, its blocks) in Russian:
    no English word in a step title, a block or a figure title, beside the trace's tensor names."""
    cfg = xt_core.Config(family="gpt2", **SIZES)
    trace = xt_core.forward_backward(
        cfg, xt_core.init_params(cfg), np.array([[3, 9, 27, 3]]), np.array([[9, 27, 3, 9]])
    )
    steps = {(s["name"], s["phase"]): s for s in titles.steps(trace, "ru")}
    assert steps["embedding_positions", "forward"]["title"] == "Прибавление обучаемых позиционных эмбеддингов"
    blocks = [b["label"] for b in titles.blocks(cfg, "ru")]
    assert (blocks[0], blocks[-3]) == ("Эмбеддинги токенов и позиций", "Финальный LayerNorm")
    texts = [s["title"] for s in steps.values()] + blocks
    with make_client() as client:
        spec = {"config": {"family": "gpt2", **SIZES, "n_layer": 1}, "tokens": [[3, 9, 27, 3, 9]], "dtype": "float64"}
        body = client.post("/api/traces", json=spec).json()
        index = {(s["name"], s["phase"]): s["index"] for s in body["steps"]}
        for key in (("layers.0.attention_norm.out", "backward"), ("layers.0.feed_forward.up", "backward")):
            view = client.get(f"/api/traces/{body['id']}/steps/{index[key]}", params={"lang": "ru"})
            texts += [figure["title"] for figure in view.json()["figures"]]
    assert "Градиент весов от этой операции: смещение LayerNorm перед вниманием слоя 0" in texts
    assert "Градиент весов от этой операции: повышающее смещение b1 слоя 0" in texts
    recorded = {name for name, _ in steps} | {"pos_embeddings", "bq", "bk", "bv", "bo", "b1", "b2"}  # and symbols
    assert [w for text in texts for w in english_words(text, ALLOWED | recorded)] == []


@pytest.fixture(scope="module")
def served_files(tmp_path_factory):
    skip_unless_installed("torch", "transformers", hint="pip install -e '.[reference]'")
    import torch
    import transformers

    from tests.core import test_gpt2_reference as reference
    from tests.core.checkpoint import test_gguf_gpt2 as gguf_files
    from tests.core.checkpoint import test_gpt2_files as files
    from tests.helpers.gguf_files import TINY_VOCAB

    reference.torch, reference.transformers, files.torch, files.nn = torch, transformers, torch, torch.nn
    transformers.logging.set_verbosity_error()
    root = tmp_path_factory.mktemp("served-gpt2")
    reference.hf_gpt2(reference.CASES["gpt2-gelu-new"]).save_pretrained(root / "tiny-gpt2")
    (root / "nano").mkdir()
    model = reference.hf_gpt2(dict(activation_function="gelu", layer_norm_epsilon=1e-5, vocab_size=len(CHARS)))
    files.save_nanogpt(root / "nano" / "ckpt.pt", model)
    meta = {"vocab_size": len(CHARS), "itos": dict(enumerate(CHARS)), "stoi": {c: i for i, c in enumerate(CHARS)}}
    (root / "nano" / "meta.pkl").write_bytes(pickle.dumps(meta))
    gguf_model = reference.hf_gpt2({**reference.CASES["gpt2-gelu-new"], "vocab_size": TINY_VOCAB})
    gguf_files.write_gpt2(root / "tiny-gpt2-gguf.gguf", gguf_model)  # as llama.cpp's converter writes GPT-2
    return root / "tiny-gpt2", root / "nano" / "ckpt.pt", root / "tiny-gpt2-gguf.gguf"


@pytest.mark.torch
def test_served_gpt2_files_are_listed_and_walked(served_files):
    with make_client(model_paths=served_files) as client:
        listing = {m["name"]: m for m in client.get("/api/models").json()["models"]}
        assert listing["tiny-gpt2"]["config"]["family"] == "gpt2"
        nano = next(m for name, m in listing.items() if name.startswith("ckpt"))
        assert nano["config"]["activation"] == "gelu" and nano["tokenizer"] is not None
        walk_every_step(client, {"model": "tiny-gpt2", "tokens": [[1, 5, 9, 3, 3, 17, 39, 0]]})
        body = walk_every_step(client, {"model": nano["name"], "text": "to be or not"})
        assert "".join(body["tokens"]["input_labels"][0]).replace("␣", " ") == "to be or no"  # meta.pkl's chars
        gguf = listing["tiny-gpt2-gguf.gguf"]
        assert gguf["config"]["family"] == "gpt2" and gguf["tokenizer"] is not None
        walk_every_step(client, {"model": "tiny-gpt2-gguf.gguf", "text": "the world in 12 worlds"})  # GPT-2's BPE


def test_a_gpt2_trains_and_its_update_step_checks():
    with make_client() as client:
        config = {"family": "gpt2", **SIZES, "n_layer": 1}
        spec = {"config": config, "tokens": [[1, 2, 3, 4, 5, 6, 7]], "optimizer": {"name": "adamw", "lr": 0.01}}
        body = client.post("/api/traces", json={**spec, "train_steps": 3}).json()
        update = body["steps"][-1]
        assert update["name"] == "update"
        view = client.get(f"/api/traces/{body['id']}/steps/{update['index']}").json()
        assert view["gradcheck"]["passed"] and "after 3 training steps" in view["figures"][0]["title"]


@pytest.mark.torch
def test_a_nanogpt_ckpt_is_uploaded_within_the_limits(served_files):
    """Uploads take nanoGPT's single-file ckpt.pt (no meta.pkl comes with an upload: token ids),
    read without running its pickle, under today's size limit and the model limits."""
    data = served_files[1].read_bytes()
    with make_client() as client:
        answer = client.post("/api/models", files={"file": ("ckpt.pt", data, "application/octet-stream")})
        assert answer.status_code == 201, answer.text
        model = answer.json()["model"]
        assert model["kind"] == "upload" and model["config"]["family"] == "gpt2"
        assert model["config"]["activation"] == "gelu" and model["description"] == "nanoGPT ckpt.pt"
        trace = client.post("/api/traces", json={"model": answer.json()["name"], "tokens": [[1, 5, 9, 3, 3, 7]]})
        assert trace.status_code == 200 and trace.json()["config"]["family"] == "gpt2"  # walked as served, above
    with make_client(max_upload_bytes=len(data) - 1) as small:
        too_big = small.post("/api/models", files={"file": ("ckpt.pt", data, "application/octet-stream")})
        assert too_big.status_code == 413
    with make_client(max_n_layer=1) as narrow:
        refused = narrow.post("/api/models", files={"file": ("ckpt.pt", data, "application/octet-stream")})
        assert refused.status_code == 422 and "n_layer" in refused.text
