"""import_hf checked against transformers' own LlamaForCausalLM: random tiny models written by
`save_pretrained` (both config layouts, float32 / float64 / bfloat16, one file and shards),
imported, and the loss and every parameter gradient compared in float64. The same for
import_llama2c, on a llama2.c legacy file this test writes from a transformers model; and
export_hf's directory must be what save_pretrained writes, and load in transformers.

How the float64 comparison is made fair: transformers run in float64 still computes three
things in float32 (transformers 5.24): RMSNorm's variance and normalised activations
(`hidden_states.to(torch.float32)`), RoPE's inverse frequencies, angles, cos and sin, and the
eager attention's softmax; and its `loss_function` upcasts logits to float32. Measured on the
"gqa-untied" case: loss off by 1.7e-7 and gradients by 1.3e-6 (normwise), from those alone.
So the reference is transformers' model loaded from the files (its weights, layouts, q/k
rotate-half, GQA repeat, tying, causal mask, SDPA attention, which runs in float64), with
RMSNorm and RoPE computed by the same formulas in float64 (patched `forward`s, checked against
transformers' own float32 `inv_freq`), and the mean cross-entropy taken in float64 by torch.
Then loss agrees to 1e-15 and gradients to 1e-14; the test asks 1e-10 and 1e-8. The
unpatched model is also compared, at float32's tolerance (1e-5 / 1e-4).

Skips without torch and transformers (optional extra `reference`), except in CI
(XT_REQUIRE_TORCH=1).
"""

import json
import re

import numpy as np
import pytest

import xt_core
from tests.helpers.env import skip_unless_installed
from tests.helpers.specs import make_batch
from xt_core.checkpoint import CheckpointError, export_hf, import_hf, import_llama2c

pytestmark = pytest.mark.torch
skip_unless_installed("torch", "transformers", hint="pip install -e '.[reference]'")
torch = transformers = None  # imported by load_transformers, when this module's tests run


@pytest.fixture(autouse=True, scope="module")
def load_transformers():
    global torch, transformers
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


SIZES = dict(vocab_size=40, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4)
CASES = {  # name: (LlamaConfig fields, how the files are written)
    "mha-tied": (dict(num_key_value_heads=4, tie_word_embeddings=True, rope_theta=1e4, rms_norm_eps=1e-5), {}),
    "gqa-untied-old-layout": (
        dict(num_key_value_heads=2, tie_word_embeddings=False, rope_theta=5e5, rms_norm_eps=1e-6),
        {"layout": "old"},
    ),
    "mqa-float64-sharded": (
        dict(num_key_value_heads=1, tie_word_embeddings=False, rope_theta=5e5, rms_norm_eps=1e-5),
        {"dtype": "float64", "max_shard_size": "8KB"},
    ),
    "gqa-wide-heads": (  # Qwen3's head_dim: heads 16 wide where hidden_size / num_attention_heads = 8
        dict(num_key_value_heads=2, head_dim=16, tie_word_embeddings=False, rope_theta=1e4, rms_norm_eps=1e-5),
        {},
    ),
    "gqa-bf16-old-layout": (
        dict(num_key_value_heads=2, tie_word_embeddings=True, rope_theta=1e4, rms_norm_eps=1e-6),
        {"dtype": "bfloat16", "layout": "old"},
    ),
}


def hf_model(fields: dict, seed: int = 0):
    """A random LlamaForCausalLM with weights of unit-scale activations (transformers' own init,
    std 0.02, leaves attention uniform, which would hide a RoPE or head-order mistake) and
    norm gains away from 1 (which would hide a swapped norm)."""
    torch.manual_seed(seed)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**SIZES, max_position_embeddings=16, **fields))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(1 + 0.3 * torch.randn_like(p) if p.ndim == 1 else 1.5 * torch.randn_like(p) / p.shape[-1] ** 0.5)
    return model


def write(model, directory, layout="new", dtype="float32", max_shard_size=None):
    model.to(getattr(torch, dtype)).save_pretrained(
        directory, **({"max_shard_size": max_shard_size} if max_shard_size else {})
    )
    if layout == "old":  # transformers < 5: a top-level rope_theta, no rope_parameters
        config = json.loads((directory / "config.json").read_text())
        config["rope_theta"] = config.pop("rope_parameters")["rope_theta"]
        (directory / "config.json").write_text(json.dumps(config))
    return directory


def reference_step(directory, inputs, targets):
    """Loss and {HF name: grad} from transformers' model read from `directory`, in float64."""
    model = transformers.LlamaForCausalLM.from_pretrained(directory, dtype=torch.float64, attn_implementation="sdpa")
    logits = model(torch.tensor(inputs)).logits
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.tensor(targets).reshape(-1))
    loss.backward()
    return model, loss.item(), {name: p.grad.numpy() for name, p in model.named_parameters()}


def as_xt(hf_name: str, grad: np.ndarray, cfg: xt_core.Config):
    """(xt name, grad in xt's layout), written out apart from the importer: layer Linears
    are (out, in) in HF; q/k row h*hd + j is xt's column h*hd + 2j for j < hd/2 and
    h*hd + 2(j - hd/2) + 1 after (rotate-half halves -> interleaved pairs)."""
    top = {"model.embed_tokens.weight": "tok_embeddings", "model.norm.weight": "norm", "lm_head.weight": "output"}
    if hf_name in top:
        return top[hf_name], grad
    kinds = {
        "input_layernorm": "attention_norm",
        "post_attention_layernorm": "ffn_norm",
        "self_attn.q_proj": "attention.wq",
        "self_attn.k_proj": "attention.wk",
        "self_attn.v_proj": "attention.wv",
        "self_attn.o_proj": "attention.wo",
        "mlp.gate_proj": "feed_forward.w1",
        "mlp.up_proj": "feed_forward.w3",
        "mlp.down_proj": "feed_forward.w2",
    }
    _, _, layer, rest = hf_name.split(".", 3)
    name = f"layers.{layer}.{kinds[rest.removesuffix('.weight')]}"
    if grad.ndim == 1:
        return name, grad
    if name.endswith(("wq", "wk")):
        grad = interleaved_rows(grad, cfg.head_dim)
    return name, grad.T


def interleaved_rows(w: np.ndarray, hd: int) -> np.ndarray:
    """q/k rows from rotate-half order to interleaved pairs: row h*hd + j goes to h*hd + 2j
    for j < hd/2, and to h*hd + 2(j - hd/2) + 1 after."""
    rows = np.arange(w.shape[0])
    head, j = rows // hd, rows % hd
    permuted = np.empty_like(w)
    permuted[head * hd + np.where(j < hd // 2, 2 * j, 2 * (j - hd // 2) + 1)] = w
    return permuted


def normwise(a, b) -> float:
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@pytest.fixture
def float64_reference(monkeypatch):
    from tests.helpers.hf_reference import rms_norm_float64, rope_float64  # torch: imported where it is used

    monkeypatch.setattr(transformers.models.llama.modeling_llama.LlamaRMSNorm, "forward", rms_norm_float64)
    monkeypatch.setattr(transformers.models.llama.modeling_llama.LlamaRotaryEmbedding, "forward", rope_float64)


@pytest.mark.parametrize("case", sorted(CASES))
def test_loss_and_every_gradient_match_transformers(tmp_path, case, float64_reference):
    fields, how = CASES[case]
    directory = write(hf_model(fields), tmp_path / case, **how)
    if "max_shard_size" in how:
        assert (directory / "model.safetensors.index.json").exists() and len(list(directory.glob("*.safetensors"))) > 2
    stored = how.get("dtype", "float32")
    ckpt = import_hf(directory, dtype=None if stored == "float64" else np.float64)
    cfg = ckpt.cfg
    assert (cfg.rope_theta, cfg.norm_eps, cfg.n_kv_head) == (
        fields["rope_theta"],
        fields["rms_norm_eps"],
        fields["num_key_value_heads"],
    )
    assert cfg.tie_embeddings == fields["tie_word_embeddings"] and {p.dtype for p in ckpt.params.values()} == {
        np.dtype(np.float64)
    }
    inputs, targets = make_batch(cfg, 3, 12, seed=1)
    trace = xt_core.forward_backward(cfg, ckpt.params, inputs, targets)

    model, loss, grads = reference_step(directory, inputs, targets)
    inv_freq = fields["rope_theta"] ** (-np.arange(0, cfg.head_dim, 2) / cfg.head_dim)
    np.testing.assert_allclose(model.model.rotary_emb.inv_freq.numpy(), inv_freq, rtol=1e-6)  # transformers' own theta
    assert abs(trace.loss - loss) <= 1e-10
    mapped = dict(as_xt(name, grad, cfg) for name, grad in grads.items())
    assert set(mapped) == set(trace.grads)
    for name, grad in mapped.items():
        assert normwise(trace.grads[name], grad) <= 1e-8, name


def test_unpatched_transformers_agrees_to_float32_precision(tmp_path):
    """The float64 patches change precision only: transformers as shipped (eager attention,
    float32 norm, RoPE and softmax inside) agrees to float32's tolerance."""
    fields, how = CASES["gqa-untied-old-layout"]
    directory = write(hf_model(fields), tmp_path / "m", **how)
    ckpt = import_hf(directory, dtype=np.float64)
    inputs, targets = make_batch(ckpt.cfg, 3, 12, seed=1)
    trace = xt_core.forward_backward(ckpt.cfg, ckpt.params, inputs, targets)
    model = transformers.LlamaForCausalLM.from_pretrained(directory, dtype=torch.float64, attn_implementation="eager")
    logits = model(torch.tensor(inputs)).logits.reshape(-1, ckpt.cfg.vocab_size)
    loss = torch.nn.functional.cross_entropy(logits, torch.tensor(targets).reshape(-1))
    loss.backward()
    assert abs(trace.loss - loss.item()) <= 1e-5
    for name, p in model.named_parameters():
        xt_name, grad = as_xt(name, p.grad.numpy(), ckpt.cfg)
        assert normwise(trace.grads[xt_name], grad) <= 1e-4, name


def test_bf16_reads_to_float32_by_default_and_exactly(tmp_path):
    directory = write(hf_model(CASES["mha-tied"][0]), tmp_path / "m", dtype="bfloat16")
    ckpt = import_hf(directory)
    model = transformers.LlamaForCausalLM.from_pretrained(directory, dtype=torch.float32)
    weights = dict(as_xt(n, p.detach().numpy(), ckpt.cfg) for n, p in model.named_parameters())
    for name, value in ckpt.params.items():
        assert value.dtype == np.float32 and value.tobytes() == np.ascontiguousarray(weights[name]).tobytes(), name


def test_export_hf_writes_what_transformers_writes_and_it_loads(tmp_path, float64_reference):
    cfg = xt_core.Config(
        vocab_size=40,
        n_layer=2,
        n_head=4,
        n_kv_head=2,
        n_embd=32,
        ffn_hidden=48,
        seq_len=16,
        tie_embeddings=False,
        rope_theta=5e5,
        norm_eps=1e-6,
    )
    params = xt_core.init_params(cfg, seed=4, dtype=np.float64)
    ours = export_hf(tmp_path / "ours", cfg, params)
    fields = dict(num_key_value_heads=2, tie_word_embeddings=False, rope_theta=5e5, rms_norm_eps=1e-6)
    theirs = write(hf_model(fields), tmp_path / "theirs", dtype="float64")
    written = json.loads((ours / "config.json").read_text())
    expected = json.loads((theirs / "config.json").read_text())
    expected.pop("transformers_version")
    assert written == expected
    inputs, targets = make_batch(cfg, 2, 10, seed=3)
    trace = xt_core.forward_backward(cfg, params, inputs, targets)
    _, loss, grads = reference_step(ours, inputs, targets)
    assert abs(trace.loss - loss) <= 1e-10
    for name, grad in grads.items():
        xt_name, grad = as_xt(name, grad, cfg)
        assert normwise(trace.grads[xt_name], grad) <= 1e-8, name


REFUSED = {  # what transformers writes for a model xt does not compute -> the key the message names
    "attention_bias": (dict(attention_bias=True), "attention_bias = True"),
    "mlp_bias": (dict(mlp_bias=True), "mlp_bias = True"),
    "gelu": (dict(hidden_act="gelu"), "hidden_act = 'gelu'"),
    "llama3": (
        dict(
            rope_parameters=dict(
                rope_type="llama3",
                rope_theta=5e5,
                factor=8.0,
                low_freq_factor=1.0,
                high_freq_factor=4.0,
                original_max_position_embeddings=8,
            )
        ),
        "rope_parameters.rope_type = 'llama3'",
    ),
    "linear": (
        dict(rope_parameters=dict(rope_type="linear", rope_theta=1e4, factor=2.0)),
        "rope_parameters.rope_type = 'linear'",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_models_xt_does_not_compute_are_refused_naming_the_key(tmp_path, case):
    fields, words = REFUSED[case]
    directory = write(hf_model(fields), tmp_path / case)
    with pytest.raises(CheckpointError, match=re.escape(f"config.json {words}")):
        import_hf(directory)


def write_llama2c(path, model, cfg: xt_core.Config):
    """llama2.c's legacy .bin written here from the HF model, as llama2.c's export does:
    7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, +-vocab_size, seq_len); float32
    embeddings; per kind, stacked over layers, in the order attention_norm, wq, wk, wv, wo,
    ffn_norm, w1 (gate), w2 (down), w3 (up), each (out, in) with q/k rows interleaved; the
    final norm; RoPE's cos and sin tables (seq_len, hd/2); the classifier when untied."""
    w = {name: p.detach().numpy() for name, p in model.named_parameters()}
    hd, V = cfg.head_dim, cfg.vocab_size
    header = [cfg.n_embd, cfg.ffn_hidden, cfg.n_layer, cfg.n_head, cfg.n_kv_head, V if cfg.tie_embeddings else -V]
    parts = [np.array(header + [cfg.seq_len], "<i4"), w["model.embed_tokens.weight"]]
    kinds = ["input_layernorm", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"]
    kinds += ["post_attention_layernorm", "mlp.gate_proj", "mlp.down_proj", "mlp.up_proj"]
    for kind in kinds:
        for L in range(cfg.n_layer):
            t = w[f"model.layers.{L}.{kind}.weight"]
            parts.append(interleaved_rows(t, hd) if kind in ("self_attn.q_proj", "self_attn.k_proj") else t)
    angle = np.arange(cfg.seq_len)[:, None] * cfg.rope_theta ** (-np.arange(0, hd, 2) / hd)
    parts += [w["model.norm.weight"], np.cos(angle), np.sin(angle)]
    if not cfg.tie_embeddings:
        parts.append(w["lm_head.weight"])
    path.write_bytes(
        b"".join(np.ascontiguousarray(p, p.dtype if p.dtype.kind == "i" else "<f4").tobytes() for p in parts)
    )
    return path


@pytest.mark.parametrize("tied", [True, False], ids=["tied", "untied"])
def test_llama2c_import_matches_transformers(tmp_path, tied, float64_reference):
    """llama2.c's format has no theta or eps: its run.c uses 10000 and 1e-5, and so does xt."""
    fields = dict(num_key_value_heads=2, tie_word_embeddings=tied, rope_theta=1e4, rms_norm_eps=1e-5)
    directory = write(hf_model(fields, seed=5), tmp_path / "hf")
    model = transformers.LlamaForCausalLM.from_pretrained(directory, dtype=torch.float32)
    cfg = import_hf(directory).cfg
    ckpt = import_llama2c(write_llama2c(tmp_path / "m.bin", model, cfg))
    assert ckpt.cfg == cfg and ckpt.meta == {"imported_from": "llama2.c m.bin"}
    inputs, targets = make_batch(cfg, 3, 12, seed=2)
    params = {name: value.astype(np.float64) for name, value in ckpt.params.items()}
    trace = xt_core.forward_backward(cfg, params, inputs, targets)
    _, loss, grads = reference_step(directory, inputs, targets)
    assert abs(trace.loss - loss) <= 1e-10
    for name, grad in grads.items():
        xt_name, grad = as_xt(name, grad, cfg)
        assert normwise(trace.grads[xt_name], grad) <= 1e-8, name
