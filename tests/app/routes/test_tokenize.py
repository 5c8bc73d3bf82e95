"""GET /api/tokenize: a text as a checkpoint's own tokenizer splits it, before any trace: the
home form counts a BPE model's tokens with it (a character count said 159 tokens for SmolLM2
where its tokenizer gives 29), and states the training limit it answers. Bounded as a spec
is: the same text limit, the same refusals, by field. The BPE model: a tiny GGUF stored under
SmolLM2's name (as tests/app/checkpoints/test_real_models.py)."""

from __future__ import annotations

import pytest

import xt_core
from app.checkpoints.real_models import KNOWN_MODELS
from app.checkpoints.registry import MAX_NAME_CHARS, registry
from app.settings import Settings
from app.spec import TraceSpec, resolve
from app.spec.cost import build_cost
from app.spec.training import canonical_optimizer
from app.traces.pool import BUILDS, LIGHT
from tests.helpers.client import make_client
from tests.helpers.gguf_files import STAND_IN, STAND_IN_NAME, STAND_IN_TEXT, write_llama
from tests.helpers.real_model import SMOLLM2
from xt_core.names import estimate_build_bytes

NAME, CFG, TEXT = STAND_IN_NAME, STAND_IN, STAND_IN_TEXT


@pytest.fixture(scope="module")
def client(stand_in_client):
    return stand_in_client


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
        ({"model": NAME, "text": "x" * (CFG.seq_len + 2)}, "text"),
        ({"model": NAME, "text": TEXT, "dtype": "float8"}, "dtype"),
    ],
)
def test_refusals_name_the_field(client, params, field):
    assert refused_field(client.get("/api/tokenize", params=params)) == field


def test_characters_a_char_model_lacks_are_refused_by_name(client):
    model = next(m for m in client.get("/api/models").json()["models"] if m["tokenizer"] == "char")
    response = client.get("/api/tokenize", params={"model": model["name"], "text": "☃☃"})
    assert refused_field(response) == "text" and "☃" in response.json()["detail"][0]["msg"]


def test_a_long_model_name_is_refused_by_its_limit_and_never_echoed(client):
    response = client.get("/api/tokenize", params={"model": "m" * 5000, "text": TEXT})
    assert refused_field(response) == "model"
    assert str(MAX_NAME_CHARS) in response.json()["detail"][0]["msg"] and len(response.content) < 500
    for name in ("sha256-" + "0" * 64, "a" * 41, *KNOWN_MODELS):  # every name the listing can hold fits
        assert len(name) <= MAX_NAME_CHARS


# ---------------------------------------------------------------------- the most positions


def char_text(model: dict, positions: int) -> str:
    """A text in a char model's alphabet giving exactly `positions` positions."""
    return (model["examples"][0] * 100)[: positions + 1]


@pytest.fixture(scope="module")
def tight():
    """A client whose max_trace_bytes lets the `text` demo model train first on 10 positions in
    float32 (the trace then holds its own weights and AdamW's state), take more without training
    (its weights borrowed), fewer in float64 and none with training first there; and that model."""
    settings = Settings()
    info = registry(settings).info("text")
    cfg = registry(settings).summary(info).cfg
    limit = build_cost(cfg, 1, 10, "float32", 1, canonical_optimizer(None, 1)).nbytes
    with make_client(max_trace_bytes=limit) as c:
        model = next(m for m in c.get("/api/models").json()["models"] if m["name"] == "text")
        yield c, model


def test_the_most_positions_it_answers_are_the_most_post_accepts(tight):
    client, model = tight
    for dtype in ("float32", "float64"):
        body = client.get("/api/tokenize", params={"model": "text", "text": char_text(model, 2), "dtype": dtype})
        most, by_optimizer = body.json()["max_positions"], body.json()["max_positions_training"]
        assert model["max_positions"][dtype] == {"step": most, "training": by_optimizer}  # the listing: the same
        assert set(by_optimizer) == {"adamw", "sgd"}
        training = by_optimizer["adamw"]  # the limit was set for the default optimizer's training
        # a step without training holds its forward only: it may take the model's every position
        assert 0 <= training < most <= model["config"]["seq_len"] and (training > 0) == (dtype == "float32")
        assert training <= by_optimizer["sgd"]  # no m and v to hold
        spec = {"model": "text", "text": char_text(model, most), "dtype": dtype}
        assert client.post("/api/traces", json=spec).status_code == 200
        past = char_text(model, most + 1)
        posted = refused_field(client.post("/api/traces", json={**spec, "text": past}))
        assert (
            refused_field(client.get("/api/tokenize", params={"model": "text", "text": past, "dtype": dtype})) == posted
        )
        spec = {"model": "text", "text": char_text(model, max(training, 1)), "dtype": dtype, "train_steps": 1}
        if training:
            assert client.post("/api/traces", json=spec).status_code == 200
        longer = {**spec, "text": char_text(model, training + 1)}
        assert refused_field(client.post("/api/traces", json=longer)) in ("text", "dtype")


@pytest.fixture(scope="module")
def short():
    """A client whose max_trace_bytes lets the `text` demo model's step (no training) take 20 positions."""
    settings = Settings()
    cfg = registry(settings).summary(registry(settings).info("text")).cfg
    with make_client(max_trace_bytes=estimate_build_bytes(cfg, 1, 20, 4, shared_params=True)) as c:
        yield c, next(m for m in c.get("/api/models").json()["models"] if m["name"] == "text")


def test_a_text_past_the_most_positions_is_refused_naming_the_limit(short):
    client, model = short
    most = client.get("/api/tokenize", params={"model": "text", "text": "ab"}).json()["max_positions"]
    response = client.get("/api/tokenize", params={"model": "text", "text": char_text(model, most + 1)})
    assert refused_field(response) == "text"
    message = response.json()["detail"][0]["msg"]
    assert f"{most + 1} positions" in message and f"takes {most} positions" in message and "max_trace_bytes" in message
    post = client.post("/api/traces", json={"model": "text", "text": char_text(model, most + 1)})
    assert refused_field(post) == "text"  # as POST refuses it


def test_a_text_only_float32_takes_is_refused_at_dtype(tight):
    client, model = tight
    text = char_text(model, model["max_positions"]["float64"]["step"] + 1)  # one past float64's most
    assert client.get("/api/tokenize", params={"model": "text", "text": text}).status_code == 200
    response = client.get("/api/tokenize", params={"model": "text", "text": text, "dtype": "float64"})
    assert refused_field(response) == "dtype" and "use float32" in response.json()["detail"][0]["msg"]
    post = client.post("/api/traces", json={"model": "text", "text": text, "dtype": "float64"})
    assert refused_field(post) == "dtype"


def test_a_text_past_seq_len_is_refused_naming_it(client):
    model = next(m for m in client.get("/api/models").json()["models"] if m["name"] == "text")
    seq_len = model["config"]["seq_len"]
    body = client.get("/api/tokenize", params={"model": "text", "text": "ab"}).json()
    assert body["max_positions"] == seq_len == model["max_positions"]["float32"]["step"]
    response = client.get("/api/tokenize", params={"model": "text", "text": char_text(model, seq_len + 1)})
    assert refused_field(response) == "text" and f"seq_len = {seq_len}" in response.json()["detail"][0]["msg"]


def test_smollm2s_most_positions_are_the_most_post_accepts(smollm2_models_dir):
    """The real model: the home page said "Up to 8192 positions" where 61 fit (float32) and
    62 were refused on Start ("trace too large"). A trace now keeps its layer boundaries only
    (xt_core.recompute): what bounds it is its build, every forward value at once."""
    settings = Settings(models_dir=smollm2_models_dir)  # its header read once per process (the reference group)
    models = registry(settings)
    tokenizer = models.tokenizer(models.info(SMOLLM2))
    with make_client(models_dir=smollm2_models_dir) as client:
        body = client.get("/api/tokenize", params={"model": SMOLLM2, "text": "Hello"}).json()
        most, training = body["max_positions"], body["max_positions_training"]
        # training first: its own weights, AdamW's m and v and the build pass the trace budget at any
        # length; SGD (no momentum) holds no state, and one step at a time (xt_core.training.loop.train)
        assert training["adamw"] == 0 and 64 <= training["sgd"] < 256 <= most < body["seq_len"]
        trained = client.post("/api/traces", json={"model": SMOLLM2, "text": "Hello world", "train_steps": 1})
        assert refused_field(trained) == "text" and "building this trace would hold" in trained.text
        the = tokenizer.encode(" the")
        assert len(the) == 1  # one token each: most + 1 tokens, most positions
        by_sgd = {"train_steps": 1, "optimizer": {"name": "sgd"}}
        resolve(TraceSpec(model=SMOLLM2, tokens=[the * (training["sgd"] + 1)], **by_sgd), settings)  # POST's check
        past = client.post("/api/traces", json={"model": SMOLLM2, "tokens": [the * (training["sgd"] + 2)], **by_sgd})
        assert past.status_code == 422  # the time limit (train_steps) or the bytes (tokens), whichever binds first
        resolve(TraceSpec(model=SMOLLM2, tokens=[the * (most + 1)]), settings)  # POST's own check (no build here)
        longer = client.post("/api/traces", json={"model": SMOLLM2, "tokens": [the * (most + 2)]})
        assert refused_field(longer) == "tokens" and "give fewer tokens" in longer.text
        float64 = client.get("/api/tokenize", params={"model": SMOLLM2, "text": "Hello world", "dtype": "float64"})
        assert 0 < float64.json()["max_positions"] < most  # its weights of its own, in float64: fewer fit
        # a real paragraph (issue 34: 1,078 characters were refused by a cap of 512 characters)
        paragraph = client.get("/api/tokenize", params={"model": SMOLLM2, "text": PARAGRAPH})
        assert paragraph.status_code == 200 and 200 < paragraph.json()["positions"] <= most
        resolve(TraceSpec(model=SMOLLM2, text=PARAGRAPH), settings)  # POST's own check (no build here)


PARAGRAPH = (
    "Backpropagation is the chain rule applied to a computation, one operation at a time, from the loss back to "
    "every weight. The forward pass of a transformer keeps the values that the backward pass will need: the "
    "normalised inputs of each layer, the attention probabilities of every head, the gate and the up projection "
    "of every feed-forward block. The backward pass then walks the same operations in exact reverse order. Each "
    "operation receives the gradient of the loss with respect to its output and hands back the gradients with "
    "respect to its inputs; where a tensor is read twice, as the residual stream is, the two contributions are "
    "added. The softmax is the subtle step: its Jacobian is the diagonal of the probabilities minus their outer "
    "product, so the gradient of one score depends on every other score in its row. The update comes last: the "
    "optimizer turns each weight's gradient into a step, and a second forward pass shows whether the loss went "
    "down. Watching these numbers one operation at a time is the quickest way to believe them."
)


# ---------------------------------------------------------------------- which pool


def test_the_first_read_of_a_real_models_tokenizer_is_not_on_the_light_thread(tmp_path):
    """SmolLM2's header takes ~1 s to read: on the one thread for millisecond jobs it held up
    every quick request behind it, and on the event loop (a spec resolved) every request. A
    server reads the headers of the models it finds at startup; one fetched while it serves is
    read in the builds pool the first time, then the quick thread answers."""
    at_start, later = tmp_path / "at-start", tmp_path / "later"
    at_start.mkdir()
    write_llama(at_start / f"{NAME}.gguf", CFG, xt_core.init_params(CFG, seed=7), tokenizer=True)
    with make_client(models_dir=at_start) as client:
        settings = client.app.state.settings
        assert registry(settings).ready(registry(settings).info(NAME))  # read before the first request
    later.mkdir()
    with make_client(models_dir=later) as client:
        write_llama(later / f"{NAME}.gguf", CFG, xt_core.init_params(CFG, seed=8), tokenizer=True)
        services = client.app.state.services
        pools = []
        run = services.run

        async def recording(fn, *args, pool=BUILDS, **kwargs):
            pools.append(pool)
            return await run(fn, *args, pool=pool, **kwargs)

        services.run = recording
        for _ in range(2):
            assert client.get("/api/tokenize", params={"model": NAME, "text": TEXT}).status_code == 200
        assert pools == [BUILDS, LIGHT]


def test_past_the_models_seq_len_both_refuse_the_text_even_where_bytes_allow_float32():
    """The `induction` model's seq_len is 32; with a trace limit float32 would meet at 34
    positions, a 34-position text in float64 is refused at `text` (its seq_len) by POST: the
    preview must not advise float32."""
    settings = Settings()
    info = registry(settings).info("induction")
    cfg = registry(settings).summary(info).cfg
    limit = estimate_build_bytes(cfg, 1, cfg.seq_len + 2, 4, shared_params=True)
    with make_client(max_trace_bytes=limit) as c:
        model = next(m for m in c.get("/api/models").json()["models"] if m["name"] == "induction")
        text = char_text(model, cfg.seq_len + 2)
        posted = refused_field(c.post("/api/traces", json={"model": "induction", "text": text, "dtype": "float64"}))
        previewed = c.get("/api/tokenize", params={"model": "induction", "text": text, "dtype": "float64"})
        assert posted == refused_field(previewed) == "text" and "seq_len" in previewed.json()["detail"][0]["msg"]


def test_a_low_precision_asks_the_limits_of_its_float32_arrays(tight):
    """The home form's count for bfloat16 or float16: the limits a float32 step has (its arrays)."""
    client, model = tight
    params = {"model": "text", "text": char_text(model, 2)}
    float32 = client.get("/api/tokenize", params={**params, "dtype": "float32"}).json()
    for dtype in ("bfloat16", "float16"):
        low = client.get("/api/tokenize", params={**params, "dtype": dtype})
        assert low.status_code == 200 and low.json() == float32
