"""GPT-2's GGUF files (architecture `gpt2`, xt_core/checkpoint/gguf_gpt2.py) against transformers: a
random-init GPT2LMHeadModel made in the test, written as llama.cpp's converter writes it (with the
`gguf` package's writer: its tensor names, every Conv1D weight stored (out, in), the tied head written
a second time as output.weight, GPT-2's byte-level BPE with the `gpt-2` pre-tokenizer), imported
through the table of file formats: the weights are transformers', and the loss, the logits and every
gradient of xt's step are transformers' own (float64). Files xt cannot compute are refused naming
the key or tensor.

Skips without torch and transformers (optional extra `reference`), except in CI (XT_REQUIRE_TORCH=1).
"""

import copy

import numpy as np
import pytest

import xt_core
from tests.core.test_gpt2_reference import CASES, as_xt, hf_gpt2, normwise, reference_step, xt_config
from tests.helpers.env import skip_unless_installed
from tests.helpers.gguf_files import TINY_VOCAB, Q, encoded, tokenizer_kv, write_gguf
from tests.helpers.specs import make_batch
from xt_core.checkpoint import CheckpointError
from xt_core.checkpoint.formats import recognise
from xt_core.text.bpe import BPETokenizer

pytestmark = pytest.mark.torch
skip_unless_installed("torch", "transformers", hint="pip install -e '.[reference]'")
torch = transformers = None

LAYER = {"ln_1": "attn_norm", "attn.c_attn": "attn_qkv", "attn.c_proj": "attn_output", "ln_2": "ffn_norm"}
LAYER |= {"mlp.c_fc": "ffn_up", "mlp.c_proj": "ffn_down"}


@pytest.fixture(autouse=True, scope="module")
def load_torch():
    global torch, transformers
    import torch
    import transformers

    import tests.core.test_gpt2_reference as reference

    reference.torch, reference.transformers = torch, transformers  # its helpers, outside its own fixture
    transformers.logging.set_verbosity_error()


def gguf_tensors(model, head=None) -> dict:
    """GGUF name -> float32 array, as convert_hf_to_gguf.py's GPT2Model writes a GPT-2: Conv1D
    weights transposed to (out, in); the head written as output.weight (the tied one: wte again)."""
    weights = {n: p.detach().numpy().astype(np.float32) for n, p in model.named_parameters()}
    out = {
        "token_embd.weight": weights["transformer.wte.weight"],
        "position_embd.weight": weights["transformer.wpe.weight"],
        "output_norm.weight": weights["transformer.ln_f.weight"],
        "output_norm.bias": weights["transformer.ln_f.bias"],
        "output.weight": weights["transformer.wte.weight"] if head is None else head,
    }
    for L in range(model.config.n_layer):
        for ours, theirs in LAYER.items():
            for part in ("weight", "bias"):
                value = weights[f"transformer.h.{L}.{ours}.{part}"]
                out[f"blk.{L}.{theirs}.{part}"] = value.T if value.ndim == 2 and ours != "ln_1" else value
    return {name: np.ascontiguousarray(value) for name, value in out.items()}


def gpt2_kv(model) -> dict:
    c = model.config
    keys = {
        "block_count": c.n_layer, "context_length": c.n_positions, "embedding_length": c.n_embd,
        "feed_forward_length": c.n_inner or 4 * c.n_embd, "attention.head_count": c.n_head,
        "attention.layer_norm_epsilon": float(c.layer_norm_epsilon),
    }  # fmt: skip
    return {f"gpt2.{key}": value for key, value in keys.items()}


def write_gpt2(path, model, head=None, kv=None, tensors=None, qtype=Q.F32):
    stored = {**gguf_tensors(model, head), **(tensors or {})}
    arrays = {name: encoded(v, Q.F32 if v.ndim == 1 else qtype) for name, v in stored.items() if v is not None}
    return write_gguf(path, {**gpt2_kv(model), **tokenizer_kv("gpt-2"), **(kv or {})}, arrays, "gpt2")


@pytest.fixture(scope="module")
def model():
    return hf_gpt2({**CASES["gpt2-gelu-new"], "vocab_size": TINY_VOCAB})


def test_a_gpt2_gguf_is_transformers_gpt2_loss_logits_and_every_gradient(tmp_path, model):
    path = write_gpt2(tmp_path / "tiny-gpt2.gguf", model)
    row = recognise(path)
    assert row.name == "gguf"
    ckpt = row.read(path)
    assert ckpt.cfg == xt_config(model)  # tied: output.weight is token_embd.weight's bytes again
    weights = as_xt({n: p.detach().numpy() for n, p in model.named_parameters()}, ckpt.cfg)
    assert set(ckpt.params) == set(weights)
    for name, value in weights.items():
        np.testing.assert_array_equal(ckpt.params[name], value, err_msg=name)
    double = copy.deepcopy(model).double()
    params = {k: v.astype(np.float64) for k, v in ckpt.params.items()}
    inputs, targets = make_batch(ckpt.cfg, 2, 10, seed=3)
    logits, loss, grads = reference_step(double, inputs, targets)
    trace = xt_core.forward_backward(ckpt.cfg, params, inputs, targets, keep_param_grads=True)
    assert abs(trace.loss - loss) <= 1e-10 and normwise(trace["logits"], logits) <= 1e-9
    for name, grad in as_xt(grads, ckpt.cfg).items():
        if not name.endswith(".bk"):  # dL/dbk is 0 up to round-off (tests/core/test_gpt2_reference.py)
            assert normwise(trace.grads[name], grad) <= 1e-8, name


def test_its_tokenizer_is_gpt2s_byte_level_bpe(tmp_path, model):
    header = recognise(tmp_path / "x.gguf")  # recognised by the suffix alone
    assert header is not None and header.name == "gguf"
    ckpt = header.read(write_gpt2(tmp_path / "x.gguf", model))
    assert isinstance(ckpt.tokenizer, BPETokenizer)
    ids = ckpt.tokenizer.encode(" the world")
    assert ids and max(ids) < ckpt.cfg.vocab_size and ckpt.tokenizer.decode(ids) == " the world"


def test_an_untied_head_is_read_as_one(tmp_path, model):
    head = np.random.default_rng(0).normal(size=(TINY_VOCAB, model.config.n_embd)).astype(np.float32)
    ckpt = recognise(tmp_path / "u.gguf").read(write_gpt2(tmp_path / "u.gguf", model, head=head))
    assert ckpt.cfg.tie_embeddings is False
    np.testing.assert_array_equal(ckpt.params["output"], head)


def test_quantized_weights_are_dequantized(tmp_path, model):
    ckpt = recognise(tmp_path / "q.gguf").read(write_gpt2(tmp_path / "q.gguf", model, qtype=Q.Q8_0))
    wq = as_xt({n: p.detach().numpy() for n, p in model.named_parameters()}, ckpt.cfg)["layers.0.attention.wq"]
    assert 0 < np.max(np.abs(ckpt.params["layers.0.attention.wq"] - wq)) <= 0.01 * np.max(np.abs(wq))


@pytest.mark.parametrize(
    "edit,refusal",
    [
        ({"kv": {"gpt2.rope.freq_base": 10000.0}}, "gpt2.rope.freq_base is not supported: GPT-2 has learned"),
        ({"kv": {"gpt2.attention.layer_norm_rms_epsilon": 1e-5}}, "LayerNorm, not RMSNorm"),
        ({"kv": {"gpt2.attention.head_count_kv": 2}}, "head_count_kv is not supported"),
        ({"tensors": {"position_embd.weight": None}}, "missing transformer.wpe.weight"),
        ({"tensors": {"blk.0.ffn_gate.weight": np.zeros((4, 4), np.float32)}}, "blk.0.ffn_gate.weight .* no place"),
        ({"tensors": {"blk.0.attn_qkv.bias": np.zeros(5, np.float32)}}, r"attn_qkv.bias has shape \(5,\)"),
    ],
)
def test_a_gpt2_gguf_xt_cannot_compute_is_refused_naming_the_key(tmp_path, model, edit, refusal):
    path = write_gpt2(tmp_path / "bad.gguf", model, **edit)
    with pytest.raises(CheckpointError, match=refusal):
        recognise(path).read(path)
