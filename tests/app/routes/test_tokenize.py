"""GET /api/tokenize: a text as a checkpoint's own tokenizer splits it, before any trace: the
home form counts a BPE model's tokens with it (a character count said 159 tokens for SmolLM2
where its tokenizer gives 29), and states the training limit it answers. Bounded as a spec
is: the same text limit, the same refusals, by field. The BPE model: a tiny GGUF stored under
SmolLM2's name (as tests/app/checkpoints/test_real_models.py)."""

from __future__ import annotations

import pytest

import xt_core
from app.checkpoints.registry import registry
from app.settings import Settings
from tests.helpers.client import make_client
from tests.helpers.gguf_files import write_llama

NAME = "smollm2-135m"
CFG = xt_core.Config(vocab_size=600, n_layer=1, n_head=4, n_kv_head=2, n_embd=16, ffn_hidden=24, seq_len=64)
TEXT = "the world in 12 worlds, the café"


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("models")
    write_llama(directory / f"{NAME}.gguf", CFG, xt_core.init_params(CFG, seed=7), tokenizer=True)
    return directory


@pytest.fixture(scope="module")
def client(models_dir):
    with make_client(models_dir=models_dir) as c:
        yield c


def refused_field(response) -> str:
    assert response.status_code == 422, response.text
    return response.json()["detail"][0]["loc"][-1]


def test_a_bpe_models_pieces_and_count_are_its_tokenizers(client, models_dir):
    body = client.get("/api/tokenize", params={"model": NAME, "text": TEXT}).json()
    models = registry(Settings(models_dir=models_dir))
    tokenizer = models.tokenizer(models.info(NAME))
    ids = tokenizer.encode(TEXT)
    assert body["tokenizer"] == "bpe" and body["tokenizer_label"] == "SmolLM2 BPE (from the model file)"
    assert body["count"] == len(ids) < len(TEXT) and body["positions"] == len(ids) - 1
    assert body["pieces"] == [tokenizer.token_label(i) for i in ids]
    assert body["seq_len"] == CFG.seq_len and body["max_train_steps"] == Settings().max_train_steps


def test_the_training_limit_it_answers_is_the_one_a_spec_meets(models_dir):
    with make_client(models_dir=models_dir, max_train_seconds=1e-9) as client:
        body = client.get("/api/tokenize", params={"model": NAME, "text": TEXT}).json()
        assert body["max_train_steps"] == 0
        spec = {"model": NAME, "text": TEXT, "train_steps": 1}
        assert refused_field(client.post("/api/traces", json=spec)) == "train_steps"


def test_a_demo_models_char_tokenizer_is_counted_too(client):
    model = next(m for m in client.get("/api/models").json()["models"] if m["tokenizer"] == "char")
    text = model["examples"][0]
    body = client.get("/api/tokenize", params={"model": model["name"], "text": text}).json()
    assert body["count"] == len(text) and body["tokenizer_label"] is None


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"model": "nope", "text": TEXT}, "model"),
        ({"text": TEXT}, "model"),
        ({"model": NAME, "text": "x" * (Settings().max_text_chars + 1)}, "text"),
        ({"model": NAME, "text": TEXT, "dtype": "float16"}, "dtype"),
    ],
)
def test_refusals_name_the_field(client, params, field):
    assert refused_field(client.get("/api/tokenize", params=params)) == field


def test_characters_a_char_model_lacks_are_refused_by_name(client):
    model = next(m for m in client.get("/api/models").json()["models"] if m["tokenizer"] == "char")
    response = client.get("/api/tokenize", params={"model": model["name"], "text": "☃☃"})
    assert refused_field(response) == "text" and "☃" in response.json()["detail"][0]["msg"]
