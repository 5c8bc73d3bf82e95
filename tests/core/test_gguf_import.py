"""GGUF import on small synthetic files: every tensor type the gguf package can dequantize, the
layout (logits and gradients against transformers loading the same file), and refusals that
name the metadata key or tensor at fault, raised before any weight is dequantized."""

import numpy as np
import pytest
from gguf import GGML_QUANT_SIZES
from gguf.quants import dequantize, quantize

import xt_core
from tests.helpers.env import required
from tests.helpers.gguf_files import (
    TINY_VOCAB,
    Q,
    llama_kv,
    random_blocks,
    stored_layout,
    tokenizer_kv,
    write_gguf,
    write_llama,
)
from xt_core.checkpoint import CheckpointError
from xt_core.checkpoint.gguf_file import GGUFLimits, can_dequantize, import_gguf, xt_name

# rows of 256 values: every block size (32, 64, 256) divides each tensor's rows
BLOCKY = xt_core.Config(vocab_size=40, n_layer=1, n_head=4, n_kv_head=2, n_embd=256, ffn_hidden=256, seq_len=16)
SMALL = xt_core.Config(vocab_size=TINY_VOCAB, n_layer=2, n_head=4, n_kv_head=2, n_embd=64, ffn_hidden=96, seq_len=16)


def _quantizable(qtype) -> bool:
    try:
        quantize(np.zeros((1, 256), np.float32), qtype)
    except NotImplementedError:
        return False
    return True


DEQUANTIZABLE = [q for q in Q if q in GGML_QUANT_SIZES and can_dequantize(q)]
# worst |imported - original| / max |original| per tensor, for types gguf can also quantize
# (TQ1_0 / TQ2_0 are ternary and MXFP4 has 8 levels: they keep only the rough shape)
CLOSENESS = {Q.F32: 0, Q.F16: 1e-3, Q.BF16: 1e-2, Q.Q8_0: 2e-2, Q.Q5_0: 0.1, Q.Q5_1: 0.1, Q.Q4_0: 0.2, Q.Q4_1: 0.2}


def _stored_tensors(cfg, params, qtype, rng):
    """GGUF tensors in `qtype` (norms F32) and, per tensor, the raw data written."""
    tensors = {}
    for name, values in stored_layout(cfg, params).items():
        if values.ndim == 1 or qtype in (Q.F32, Q.F16):
            dtype = np.float16 if qtype == Q.F16 and values.ndim == 2 else np.float32
            tensors[name] = (values.astype(dtype), None)
        elif _quantizable(qtype):
            tensors[name] = (quantize(values, qtype), qtype)
        else:
            tensors[name] = (random_blocks(values.shape, qtype, rng), qtype)
    return tensors


def _expected(cfg, tensors) -> dict:
    """What xt must hold: each written tensor dequantized, mapped to xt's name and layout."""
    expected = {}
    for gguf_name, (data, raw) in tensors.items():
        name, transpose = xt_name(gguf_name)
        values = np.asarray(dequantize(data, raw), dtype=np.float32) if raw else data.astype(np.float32)
        expected[name] = values.T if transpose else values
    return expected


@pytest.mark.parametrize("qtype", DEQUANTIZABLE, ids=lambda q: q.name)
def test_every_dequantizable_type_imports_in_xt_layout(tmp_path, qtype):
    rng = np.random.default_rng(int(qtype))
    params = xt_core.init_params(BLOCKY, seed=int(qtype))
    tensors = _stored_tensors(BLOCKY, params, qtype, rng)
    ckpt = import_gguf(write_gguf(tmp_path / "m.gguf", llama_kv(BLOCKY), tensors))

    assert ckpt.cfg == BLOCKY and ckpt.tokenizer is None
    shapes = xt_core.param_shapes(BLOCKY).values()
    norms, matrices = sum(len(s) == 1 for s in shapes), sum(len(s) == 2 for s in shapes)
    want = {"F32": norms + matrices} if qtype == Q.F32 else {"F32": norms, qtype.name: matrices}
    assert ckpt.meta["gguf_tensor_types"] == want
    for name, want in _expected(BLOCKY, tensors).items():
        got = ckpt.params[name]
        assert got.dtype == np.float32 and got.shape == params[name].shape and got.flags.c_contiguous, name
        assert got.flags.writeable and got.flags.owndata, name  # not a view of the file: training updates it
        np.testing.assert_array_equal(got, want, err_msg=name)
        if qtype in CLOSENESS:
            err = np.max(np.abs(got - params[name])) / np.max(np.abs(params[name]))
            assert err <= CLOSENESS[qtype], (name, err)


def _torch_dequant():
    """transformers' own GGUF dequantizer, written in torch: an implementation independent of gguf's."""
    try:
        import torch
        from transformers.integrations.gguf.dequant import dequantize
    except ImportError:
        if required("XT_REQUIRE_TORCH"):
            raise
        pytest.skip("torch and transformers are not installed (the `reference` extra)")
    return lambda data, qtype: dequantize(torch.from_numpy(np.ascontiguousarray(data).reshape(-1)), int(qtype)).numpy()


RAW_ONLY = [q for q in DEQUANTIZABLE if not _quantizable(q)]


@pytest.mark.parametrize("qtype", RAW_ONLY, ids=lambda q: q.name)
def test_types_gguf_cannot_quantize_agree_with_transformers_dequantizer(tmp_path, qtype):
    """K-quants and i-quants from hand-built blocks: gguf's numpy dequantizer (the importer's)
    against transformers' torch one, on every imported weight."""
    reference = _torch_dequant()
    from transformers.integrations.gguf.dequant import GGML_BLOCK

    if int(qtype) not in GGML_BLOCK:
        pytest.skip(f"transformers' dequantizer has no {qtype.name}; covered by the layout test only")
    rng = np.random.default_rng(int(qtype))
    tensors = _stored_tensors(BLOCKY, xt_core.init_params(BLOCKY), qtype, rng)
    ckpt = import_gguf(write_gguf(tmp_path / "m.gguf", llama_kv(BLOCKY), tensors))
    for gguf_name, (data, raw) in tensors.items():
        if raw is None:
            continue
        name, transpose = xt_name(gguf_name)
        theirs = reference(data, raw).reshape(data.shape[0], -1)
        ours = ckpt.params[name].T if transpose else ckpt.params[name]
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6 * np.max(np.abs(theirs)), err_msg=name)


# ---------------------------------------------------------------------- against transformers

TINY_FILES = {  # config, matrices' type
    "gqa-tied-f32": (SMALL, Q.F32),
    "mha-untied-q8_0": (xt_core.Config(**{**SMALL.to_dict(), "n_kv_head": 4, "tie_embeddings": False}), Q.Q8_0),
    "mqa-theta-500-q4_1": (xt_core.Config(**{**SMALL.to_dict(), "n_kv_head": 1, "rope_theta": 500.0}), Q.Q4_1),
}


@pytest.mark.parametrize("name", sorted(TINY_FILES))
def test_logits_loss_and_gradients_match_transformers_on_the_same_file(tmp_path, name):
    """transformers undoes llama.cpp's q/k permutation for its rotate-half RoPE; xt takes the
    rows as stored for its interleaved RoPE. Same logits and gradients = same model."""
    try:
        import torch  # noqa: F401

        from tests.helpers.hf_reference import hf_step, load_hf, normwise
    except ImportError:
        if required("XT_REQUIRE_TORCH"):
            raise
        pytest.skip("torch and transformers are not installed (the `reference` extra)")
    cfg, qtype = TINY_FILES[name]
    path = write_llama(tmp_path / f"{name}.gguf", cfg, xt_core.init_params(cfg, seed=7), qtype, tokenizer=True)
    ckpt = import_gguf(path)
    tokens = np.random.default_rng(1).integers(0, cfg.vocab_size, size=(2, 13))
    trace = xt_core.forward_backward(ckpt.cfg, ckpt.params, tokens[:, :-1], tokens[:, 1:])
    ref = hf_step(load_hf(path), ckpt.cfg, tokens, with_weights=True)

    assert ckpt.cfg.tie_embeddings == cfg.tie_embeddings and set(ref["grads"]) == set(ckpt.params)
    for pname, weight in ref["weights"].items():
        np.testing.assert_array_equal(ckpt.params[pname], weight, err_msg=pname)
    assert np.max(np.abs(trace["logits"] - ref["logits"])) <= 1e-5
    assert abs(trace.loss - ref["loss"]) <= 1e-6 * ref["loss"]
    for pname, grad in ref["grads"].items():
        assert normwise(trace.grads[pname], grad) <= 1e-4, pname


# a qwen2 (q/k/v biases) and a qwen3 (QK-norm, heads 128 wide where C / H = 16: transformers' GGUF
# reader (5.25) leaves a qwen3's head_dim at Qwen3Config's 128 whatever attention.key_length says;
# xt reads it from key_length)
QWEN_FILES = {
    "qwen2-gqa-tied-q8_0": ("qwen2", xt_core.Config(**{**SMALL.to_dict(), "qkv_bias": True}), Q.Q8_0),
    "qwen3-wide-heads-untied-f16": (
        "qwen3",
        xt_core.Config(**{**SMALL.to_dict(), "head_dim": 128, "qk_norm": True, "tie_embeddings": False}),
        Q.F16,
    ),
}


@pytest.mark.parametrize("name", sorted(QWEN_FILES))
def test_qwen_files_match_transformers_on_the_same_file(tmp_path, name):
    """A qwen2/qwen3 GGUF keeps q/k (and their biases, norm gains) in rotate-half order, as
    transformers reads them; xt permutes them to pairs. Same weights, logits and gradients."""
    try:
        import torch  # noqa: F401

        from tests.helpers.hf_reference import hf_step, load_hf, normwise
    except ImportError:
        if required("XT_REQUIRE_TORCH"):
            raise
        pytest.skip("torch and transformers are not installed (the `reference` extra)")
    arch, cfg, qtype = QWEN_FILES[name]
    params = xt_core.init_params(cfg, seed=7)
    params = {k: (1 + 0.3 * v) if k.endswith("_norm") else v for k, v in params.items()}  # gains away from 1
    path = write_llama(tmp_path / f"{name}.gguf", cfg, params, qtype, tokenizer=True, arch=arch)
    ckpt = import_gguf(path)
    assert ckpt.cfg == cfg and ckpt.tokenizer is not None
    tokens = np.random.default_rng(1).integers(0, cfg.vocab_size, size=(2, 13))
    trace = xt_core.forward_backward(ckpt.cfg, ckpt.params, tokens[:, :-1], tokens[:, 1:])
    ref = hf_step(load_hf(path), ckpt.cfg, tokens, with_weights=True)
    assert set(ref["grads"]) == set(ckpt.params)
    for pname, weight in ref["weights"].items():
        np.testing.assert_array_equal(ckpt.params[pname], weight, err_msg=pname)
    assert np.max(np.abs(trace["logits"] - ref["logits"])) <= 1e-5
    for pname, grad in ref["grads"].items():
        assert normwise(trace.grads[pname], grad) <= 1e-4, pname


# ---------------------------------------------------------------------- refusals


def _kv_without(*keys):
    return {k: v for k, v in llama_kv(SMALL).items() if k not in keys}


def _tensors(cfg=SMALL, params=None, drop=(), extra=None):
    params = params if params is not None else xt_core.init_params(cfg, seed=0)
    tensors = {k: (v, None) for k, v in stored_layout(cfg, params).items() if k not in drop}
    return {**tensors, **(extra or {})}


REFUSALS = {  # name: (kv, tensors, arch, what the message must say)
    "architecture": (  # gpt2 is read (tests/core/checkpoint/test_gguf_gpt2.py); falcon is not
        {k.replace("llama.", "falcon."): v for k, v in llama_kv(SMALL).items()},
        None,
        "falcon",
        "general.architecture = 'falcon'",
    ),
    "missing-eps": (_kv_without("llama.attention.layer_norm_rms_epsilon"), None, "llama", "rms_epsilon is missing"),
    "missing-layers": (_kv_without("llama.block_count"), None, "llama", "llama.block_count is missing"),
    "rope-scaling": (
        {**llama_kv(SMALL), "llama.rope.scaling.type": "linear", "llama.rope.scaling.factor": 4.0},
        None,
        "llama",
        "llama.rope.scaling.type = 'linear' is not supported: xt's RoPE has no scaling",
    ),
    "experts": ({**llama_kv(SMALL), "llama.expert_count": 8}, None, "llama", "llama.expert_count = 8"),
    "unknown-key": ({**llama_kv(SMALL), "llama.attention.clamp_kqv": 8.0}, None, "llama", "attention.clamp_kqv"),
    "per-layer-heads": (
        {**llama_kv(SMALL), "llama.attention.head_count_kv": [2, 2]},
        None,
        "llama",
        "llama.attention.head_count_kv is an array",
    ),
    "partial-rope": ({**llama_kv(SMALL), "llama.rope.dimension_count": 8}, None, "llama", "dimension_count = 8"),
    "huge-layer-count": (
        {**llama_kv(SMALL), "llama.block_count": 4_000_000_000},
        None,
        "llama",
        "block_count = 4000000000, but the file holds 20 tensors",
    ),
    "float-layer-count": (
        {**llama_kv(SMALL), "llama.block_count": 2.5},
        None,
        "llama",
        "llama.block_count = 2.5 is not an integer",
    ),
    "nan-theta": (
        {**llama_kv(SMALL), "llama.rope.freq_base": float("nan")},
        None,
        "llama",
        "llama.rope.freq_base = nan is not a number",
    ),
    "vocab-size": ({**llama_kv(SMALL), "llama.vocab_size": 50}, None, "llama", "llama.vocab_size = 50"),
    "bad-config": ({**llama_kv(SMALL), "llama.attention.head_count_kv": 3}, None, "llama", "divisible by n_kv_head"),
    "rope-freqs-tensor": (
        llama_kv(SMALL),
        _tensors(extra={"rope_freqs.weight": (np.ones(8, np.float32), None)}),
        "llama",
        "tensor rope_freqs.weight (F32) has no place",
    ),
    "bias-tensor": (
        llama_kv(SMALL),
        _tensors(extra={"blk.0.attn_q.bias": (np.ones(64, np.float32), None)}),
        "llama",
        "tensors beyond the config (llama, 2 layers): blk.0.attn_q.bias",  # a qwen2's, not a llama's
    ),
    "missing-tensor": (llama_kv(SMALL), _tensors(drop=["blk.1.ffn_up.weight"]), "llama", "layers.1.feed_forward.w3"),
    "extra-layer": (
        llama_kv(SMALL),
        _tensors(extra={"blk.2.attn_norm.weight": (np.ones(64, np.float32), None)}),
        "llama",
        "tensors beyond the config (llama, 2 layers): blk.2.attn_norm.weight",
    ),
    "wrong-shape": (
        llama_kv(SMALL),
        _tensors(extra={"blk.0.ffn_gate.weight": (np.ones((64, 96), np.float32), None)}),
        "llama",
        "tensor blk.0.ffn_gate.weight has shape (64, 96); the config needs (96, 64)",
    ),
    "float64-tensor": (
        llama_kv(SMALL),
        _tensors(extra={"output_norm.weight": (np.ones(64, np.float64), None)}),
        "llama",
        "output_norm.weight has type F64, which the gguf package cannot dequantize",
    ),
    "nan": (
        llama_kv(SMALL),
        _tensors(extra={"blk.0.attn_v.weight": (np.full((32, 64), np.nan, np.float32), None)}),
        "llama",
        "tensor blk.0.attn_v.weight holds NaN or inf",
    ),
    "tokenizer-model": (
        {**llama_kv(SMALL), **tokenizer_kv(), "tokenizer.ggml.model": "llama"},
        None,
        "llama",
        "tokenizer.ggml.model = 'llama' is not supported",
    ),
    "tokenizer-pre": (
        {**llama_kv(SMALL), **tokenizer_kv(pre="qwen35")},
        None,
        "llama",
        "tokenizer.ggml.pre = 'qwen35' is not supported",
    ),
    "tokenizer-merges": (
        {k: v for k, v in {**llama_kv(SMALL), **tokenizer_kv()}.items() if k != "tokenizer.ggml.merges"},
        None,
        "llama",
        "tokenizer.ggml.merges is missing",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_refusals_name_the_key_or_tensor(tmp_path, case):
    kv, tensors, arch, message = REFUSALS[case]
    path = write_gguf(tmp_path / "m.gguf", kv, tensors if tensors is not None else _tensors(), arch)
    with pytest.raises(CheckpointError, match="m.gguf: .*" + _escaped(message)):
        import_gguf(path)


def _escaped(text: str) -> str:
    import re

    return re.escape(text)


def test_limits_are_checked_before_any_weight_is_dequantized(tmp_path, monkeypatch):
    path = write_llama(tmp_path / "m.gguf", SMALL, xt_core.init_params(SMALL), Q.Q8_0)
    import gguf.quants

    def no_dequantizing(*args):
        raise AssertionError("dequantized before checking the limits")

    monkeypatch.setattr(gguf.quants, "dequantize", no_dequantizing)
    with pytest.raises(CheckpointError, match=f"{SMALL.n_params():,} parameters, more than the limit of 1,000"):
        import_gguf(path, GGUFLimits(max_params=1000))
    size = path.stat().st_size
    with pytest.raises(CheckpointError, match=f"{size} bytes, more than the limit of {size - 1}"):
        import_gguf(path, GGUFLimits(max_file_bytes=size - 1))


@pytest.mark.parametrize("content", [b"", b"GGUF", b"not a gguf file at all" * 10, "truncated"])
def test_unreadable_files_are_refused(tmp_path, content):
    path = tmp_path / "m.gguf"
    if content == "truncated":
        write_llama(path, SMALL, xt_core.init_params(SMALL))
        content = path.read_bytes()[: path.stat().st_size // 2]
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match="m.gguf: not a readable GGUF file"):
        import_gguf(path)


def test_missing_file_is_refused(tmp_path):
    with pytest.raises(CheckpointError, match="nothing.gguf: cannot read"):
        import_gguf(tmp_path / "nothing.gguf")


def test_tokenizer_comes_from_the_file(tmp_path):
    ckpt = import_gguf(write_llama(tmp_path / "m.gguf", SMALL, xt_core.init_params(SMALL), tokenizer=True))
    assert ckpt.tokenizer.name == "bpe" and ckpt.tokenizer.vocab_size == TINY_VOCAB
    assert ckpt.tokenizer.decode(ckpt.tokenizer.encode("hello world")) == "hello world"
