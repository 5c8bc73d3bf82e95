"""The real model against the implementation people use: SmolLM2-135M-Instruct's .gguf (from
`xt models fetch smollm2-135m`) imported by xt and loaded by transformers (dequantized to
float32); the same two sentences through both, float32: logits, loss, every parameter's
gradient and the greedy next token (the tokenizer's ids: test_smollm2_tokenizer.py).

Skips unless the file is there (XT_SMOLLM2_GGUF, else the models directory), or torch and
transformers (the `reference` extra) are missing; with XT_REQUIRE_REAL_MODEL=1 (CI) it fails
instead. About a minute and ~2.5 GB at peak: each side runs once, transformers' model is freed
before xt's step."""

import gc

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import xt_core
from tests.helpers.env import skip_unless_installed
from tests.helpers.real_model import SMOLLM2, require_smollm2
from xt_core.checkpoint.zoo import ZOO

pytestmark = pytest.mark.torch

PROMPT = "The capital of France is Paris. The capital of Italy is"
SENTENCES = [PROMPT + " Rome.", "Gradients flow backwards through every layer, one op at a time."]
GGUF = require_smollm2(allow_module_level=True)
skip_unless_installed("torch", "transformers", hint="pip install -e '.[reference]'")
torch = hf_step = load_hf = normwise = None  # imported by load_reference, when this module's tests run


@pytest.fixture(autouse=True, scope="module")
def load_reference():
    global torch, hf_step, load_hf, normwise
    import torch

    from tests.helpers.hf_reference import hf_step, load_hf, normwise


@pytest.fixture(scope="module")
def checkpoint(smollm2_models_dir):
    """import_gguf's checkpoint of the file, as the app caches it (so test_smollm2_views.py, in the
    same worker, reuses this import)."""
    from app.checkpoints.real_models import load

    path = smollm2_models_dir / ZOO[SMOLLM2].filename
    return load(path, path.stat().st_mtime_ns)


@pytest.fixture(scope="module")
def tokens(checkpoint):
    ids = [checkpoint.tokenizer.encode(s) for s in SENTENCES]
    n = len(ids[0])  # the first sentence is the prompt + " Rome.": its length decides T
    assert len(ids[1]) >= n
    return np.array([row[:n] for row in ids])


@pytest.fixture(scope="module")
def reference(checkpoint, tokens):
    """transformers' logits, loss and gradients; the model is freed before xt's step runs."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = load_hf(GGUF)
        result = hf_step(model, checkpoint.cfg, tokens)
    finally:
        torch.set_num_threads(threads)
    del model
    gc.collect()
    return result


@pytest.fixture(scope="module")
def trace(checkpoint, tokens, reference):
    with threadpool_limits(limits=1, user_api="blas"):
        return xt_core.forward_backward(checkpoint.cfg, checkpoint.params, tokens[:, :-1], tokens[:, 1:])


def test_the_file_is_the_model_the_issue_describes(checkpoint):
    cfg = checkpoint.cfg
    assert (cfg.n_layer, cfg.n_head, cfg.n_kv_head, cfg.n_embd, cfg.ffn_hidden, cfg.vocab_size) == (
        30,
        9,
        3,
        576,
        1536,
        49152,
    )
    assert cfg.tie_embeddings and cfg.rope_theta == 100000.0 and cfg.norm_eps == 1e-5
    assert checkpoint.meta["gguf_tensor_types"] == {"Q4_1": 210, "Q8_0": 1, "F32": 61}


def test_logits_loss_and_every_gradient_match_transformers(trace, reference):
    assert np.max(np.abs(trace["logits"] - reference["logits"])) <= 1e-3
    assert abs(trace.loss - reference["loss"]) <= 1e-4 * reference["loss"]
    worst = {name: normwise(trace.grads[name], grad) for name, grad in reference["grads"].items()}
    assert set(worst) == set(trace.grads)
    assert max(worst.values()) <= 2e-3, sorted(worst.items(), key=lambda kv: -kv[1])[:5]


def test_greedy_next_token_after_the_prompt_is_rome_on_both(checkpoint, tokens, trace, reference):
    tok = checkpoint.tokenizer
    last = len(tok.encode(PROMPT)) - 1  # the prompt's last position, " is"
    assert tokens[0, last + 1] == tok.encode(" Rome")[0]
    for logits in (trace["logits"], reference["logits"]):
        assert tok.pieces([int(np.argmax(logits[0, last]))]) == [" Rome"]
