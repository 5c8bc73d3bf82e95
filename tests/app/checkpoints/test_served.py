"""`xt serve --model PATH`: a Hugging Face Llama directory written by transformers'
`save_pretrained` is listed by its name, opened like a demo model, walked step by step, and its
loss and every parameter gradient agree with transformers' own (float64, from the same float32
weights); a refused directory's reason reaches the terminal, the home page and the spec's 422;
a path a client sends never opens a file.

The model is small (vocabulary 512, width 128, 2 layers: 2 MB): the test proves what a 50 MB
one would (the importer reads any size the same way; the machine's memory bounds the size, see
test_limits_come_from_the_machines_memory), in a fraction of the time."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from app.checkpoints import served
from tests.helpers.client import make_client
from tests.helpers.env import skip_unless_installed

pytestmark = pytest.mark.torch
skip_unless_installed("torch", "transformers", hint="pip install -e '.[reference]'")

SIZES = dict(
    vocab_size=512,
    hidden_size=128,
    intermediate_size=256,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    tie_word_embeddings=False,
    rms_norm_eps=1e-5,
)
TOKENS = [[5, 17, 300, 42, 42, 99, 7, 511, 0, 64, 3, 200, 17]]


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory):
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    root = tmp_path_factory.mktemp("served")
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**SIZES))
    with torch.no_grad():  # unit-scale activations: a layout mistake shows in the loss
        for p in model.parameters():
            p.copy_(1 + 0.3 * torch.randn_like(p) if p.ndim == 1 else 1.5 * torch.randn_like(p) / p.shape[-1] ** 0.5)
    model.save_pretrained(root / "tiny-llama")
    biased = root / "biased-llama"
    model.save_pretrained(biased)
    config = json.loads((biased / "config.json").read_text())
    (biased / "config.json").write_text(json.dumps({**config, "attention_bias": True}))
    return root / "tiny-llama", biased


@pytest.fixture(scope="module")
def client(model_dirs):
    with make_client(model_paths=model_dirs) as c:
        yield c


def test_listed_by_name_with_limits_from_memory(client, model_dirs):
    listing = {m["name"]: m for m in client.get("/api/models").json()["models"]}
    entry = listing["tiny-llama"]
    assert entry["kind"] == "served" and entry["config"]["n_layer"] == 2 and entry["tokenizer"] is None
    assert str(model_dirs[0]) in entry["description"] and "MB of float32 weights" in entry["description"]
    assert entry["max_positions"]["float64"]["step"] == 64  # its own seq_len fits this machine's memory
    assert "biased-llama" not in listing
    home = client.get("/").text
    assert "tiny-llama" in home and "Served models (xt serve --model)" in home
    assert "biased-llama" in home and "attention_bias = True" in home  # the importer's refusal on the page


def test_walked_and_agrees_with_transformers(client, model_dirs):
    import torch
    import transformers

    summary = client.post("/api/traces", json={"model": "tiny-llama", "tokens": TOKENS, "dtype": "float64"})
    assert summary.status_code == 200, summary.text
    body = summary.json()
    for step in body["steps"][::7]:  # every kind of step: forward, loss, backward
        view = client.get(f"/api/traces/{body['id']}/steps/{step['index']}")
        assert view.status_code == 200, view.text
        assert view.json()["gradcheck"]["passed"], step["name"]

    model = transformers.LlamaForCausalLM.from_pretrained(model_dirs[0], dtype=torch.float64)
    from tests.helpers.hf_reference import hf_step, normwise

    cfg = served.checkpoint(served.served_paths((model_dirs[0],))[0]).cfg
    reference = hf_step(model, cfg, np.array(TOKENS))
    assert abs(body["loss"] - reference["loss"]) <= 1e-5
    for name, grad in reference["grads"].items():
        answer = client.get(f"/api/traces/{body['id']}/tensors/{name}?grad=true")
        assert answer.status_code == 200, name
        assert normwise(np.load(io.BytesIO(answer.content)), grad) <= 1e-4, name


def test_refusal_reaches_the_spec_and_the_terminal(client, model_dirs, monkeypatch):
    answer = client.post("/api/traces", json={"model": "biased-llama", "tokens": TOKENS})
    assert answer.status_code == 422 and "attention_bias = True" in answer.text
    import uvicorn

    import xt_cli

    for key in ("XT_MODEL_PATHS", "XT_ALLOWED_HOSTS", "XT_ADMIN_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)
    printed = []
    monkeypatch.setattr("builtins.print", lambda *a, **k: printed.append(" ".join(map(str, a))))
    assert xt_cli.main(["serve", "--model", str(model_dirs[0]), "--model", str(model_dirs[1])]) == 0
    assert any(line.startswith("xt: serving 'tiny-llama'") for line in printed)
    assert any("biased-llama: cannot serve it" in line and "attention_bias" in line for line in printed)


def test_a_clients_path_never_opens_a_file(client, model_dirs, monkeypatch, tmp_path):
    opened = []
    monkeypatch.setattr(served, "_read", lambda s, fits: opened.append(s.path))
    monkeypatch.setattr(served, "_OPENED", dict(served._OPENED))  # the served ones stay open
    elsewhere = tmp_path / "tiny-llama"
    for name in (str(model_dirs[0]), str(elsewhere), "../tiny-llama", "tiny-llama/config.json", "~/tiny-llama"):
        answer = client.post("/api/traces", json={"model": name, "tokens": TOKENS})
        assert answer.status_code == 422 and "unknown model" in answer.text, name
        assert client.get("/api/tokenize", params={"model": name, "text": "a"}).status_code in (404, 422)
    assert opened == []


def test_limits_come_from_the_machines_memory(model_dirs, monkeypatch):
    """Weights beyond what the machine has free are refused from the config, before a weight is
    read; a trace may hold half of what is left beside them."""
    target = served.ServedPath("tiny-llama", model_dirs[0], "hf")
    monkeypatch.setattr(served, "_OPENED", {})
    monkeypatch.setattr(served, "machine_memory", lambda: served.Memory(8 << 30, 1 << 20))
    refused = served.opened(target)
    assert refused.checkpoint is None and "more than 80% of the 1 MB this machine has free" in refused.refusal
    monkeypatch.setattr(served, "_OPENED", {})
    monkeypatch.setattr(served, "machine_memory", lambda: served.Memory(8 << 30, 100 << 20))
    got = served.opened(target)
    assert got.trace_limit(1 << 40) == ((100 << 20) - got.weights_bytes) // 2
    assert got.trace_limit(1 << 20) == 1 << 20  # never past cache_bytes


def test_every_format_is_served_and_others_refused(tmp_path):
    """An xt .safetensors (a shipped demo), a llama2.c .bin and a .gguf are listed by file name;
    a file of another kind is refused, by name, on the home page."""
    import xt_core
    from app.settings import Settings
    from tests.helpers.gguf_files import write_llama
    from xt_core.checkpoint import export_llama2c

    demo = Settings().shipped_models_dir / "induction.safetensors"
    cfg = xt_core.Config(vocab_size=32, n_layer=1, n_head=2, n_kv_head=2, n_embd=16, ffn_hidden=24, seq_len=16)
    params = xt_core.init_params(cfg, seed=0)
    llama2c = export_llama2c(tmp_path / "stories.bin", cfg, params)
    gguf = write_llama(tmp_path / "mine.gguf", cfg, params)
    other = tmp_path / "notes.txt"
    other.write_text("not a model")
    with make_client(model_paths=(demo, llama2c, gguf, other)) as c:
        listing = {m["name"]: m for m in c.get("/api/models").json()["models"]}
        assert {"induction.safetensors", "stories.bin", "mine.gguf"} <= set(listing)
        assert listing["stories.bin"]["config"]["n_embd"] == 16 and listing["mine.gguf"]["kind"] == "served"
        answer = c.post("/api/traces", json={"model": "stories.bin", "tokens": [[1, 2, 3, 4]]})
        assert answer.status_code == 200, answer.text
        assert "notes.txt: not a model file xt reads" in c.get("/").text
