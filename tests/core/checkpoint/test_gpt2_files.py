"""GPT-2's files against transformers: a Hugging Face GPT2LMHeadModel directory written by
save_pretrained, and nanoGPT's ckpt.pt saved as nanoGPT's train.py saves it (its GPT module,
written out below as nanoGPT's model.py has it, holding the weights of a transformers GPT-2 with
exact GELU), each imported through the table of file formats and its step compared with
transformers' GPT-2 of the same weights: loss and every gradient in float64. Both read without
torch (the reader is NumPy's; torch only writes the files here).

Skips without torch and transformers (optional extra `reference`), except in CI (XT_REQUIRE_TORCH=1).
"""

import json

import numpy as np
import pytest

import xt_core
from tests.core.test_gpt2_reference import CASES, as_xt, hf_gpt2, normwise, reference_step, xt_config
from tests.helpers.env import skip_unless_installed
from tests.helpers.specs import make_batch
from xt_core.checkpoint import CheckpointError
from xt_core.checkpoint.formats import recognise
from xt_core.text.byte_char import CharTokenizer

pytestmark = pytest.mark.torch
skip_unless_installed("torch", "transformers", hint="pip install -e '.[reference]'")
torch = transformers = nn = None


@pytest.fixture(autouse=True, scope="module")
def load_torch():
    global torch, transformers, nn
    import torch
    import torch.nn as nn
    import transformers

    import tests.core.test_gpt2_reference as reference

    reference.torch, reference.transformers = torch, transformers  # its helpers, outside its own fixture
    transformers.logging.set_verbosity_error()


def assert_same_step(ckpt, model, tied=True):
    """ckpt's step (float64) against transformers' model (float64) on one batch."""
    model = model.double()
    params = {k: v.astype(np.float64) for k, v in ckpt.params.items()}
    inputs, targets = make_batch(ckpt.cfg, 2, 10, seed=3)
    logits, loss, grads = reference_step(model, inputs, targets)
    trace = xt_core.forward_backward(ckpt.cfg, params, inputs, targets, keep_param_grads=True)
    assert abs(trace.loss - loss) <= 1e-6  # the weights went through float32 files
    expected = as_xt(grads, xt_config(model))
    assert set(expected) == set(trace.grads)
    for name, grad in expected.items():
        if not name.endswith(".bk"):  # dL/dbk is 0 up to round-off (tests/core/test_gpt2_reference.py)
            assert normwise(trace.grads[name], grad) <= 1e-8, name


# --------------------------------------------------------------------------- HF directory


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_hf_gpt2_directory_is_read_as_transformers_reads_it(tmp_path, case):
    model = hf_gpt2(CASES[case])
    model.save_pretrained(tmp_path / "gpt2")
    row = recognise(tmp_path / "gpt2")
    assert row.name == "hf"
    ckpt = row.read(tmp_path / "gpt2")
    assert ckpt.cfg.family == "gpt2" and ckpt.cfg.activation == xt_config(model).activation
    assert ckpt.cfg == xt_config(model)
    weights = as_xt({n: p.detach().numpy() for n, p in model.named_parameters()}, ckpt.cfg)
    for name, value in weights.items():
        np.testing.assert_array_equal(ckpt.params[name], value, err_msg=name)
    assert_same_step(ckpt, model)


@pytest.mark.parametrize(
    "key,value,refusal",
    [
        ("activation_function", "relu", "activation_function = 'relu': xt computes GELU"),
        ("scale_attn_by_inverse_layer_idx", True, "not scaled by the layer's index"),
        ("n_ctx", 8, "n_ctx = 8 differs from n_positions"),
        ("rotary_dim", 16, "rotary_dim = 16: unknown key"),
    ],
)
def test_an_hf_gpt2_config_xt_cannot_compute_is_refused_naming_the_key(tmp_path, key, value, refusal):
    hf_gpt2(CASES["gpt2-gelu-new"]).save_pretrained(tmp_path / "gpt2")
    config = json.loads((tmp_path / "gpt2" / "config.json").read_text())
    (tmp_path / "gpt2" / "config.json").write_text(json.dumps({**config, key: value}))
    with pytest.raises(CheckpointError, match=refusal):
        recognise(tmp_path / "gpt2").read(tmp_path / "gpt2")


# --------------------------------------------------------------------------- nanoGPT


def nanogpt_module(n_layer, n_head, n_embd, block_size, vocab_size, bias):
    """nanoGPT's GPT (model.py), its modules as nanoGPT names them: LayerNorm with an optional
    bias, a fused c_attn Linear, nn.GELU(), the LM head tied to wte; the causal mask a buffer
    (attn.bias) as nanoGPT registers it without flash attention."""

    class LayerNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(n_embd))
            self.bias = nn.Parameter(torch.zeros(n_embd)) if bias else None

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=bias)
            self.c_proj = nn.Linear(n_embd, n_embd, bias=bias)
            mask = torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size)
            self.register_buffer("bias", mask)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(n_embd, 4 * n_embd, bias=bias)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * n_embd, n_embd, bias=bias)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn, self.ln_2, self.mlp = LayerNorm(), Attention(), LayerNorm(), MLP()

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(
                dict(
                    wte=nn.Embedding(vocab_size, n_embd),
                    wpe=nn.Embedding(block_size, n_embd),
                    drop=nn.Dropout(0.0),
                    h=nn.ModuleList([Block() for _ in range(n_layer)]),
                    ln_f=LayerNorm(),
                )
            )
            self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
            self.transformer.wte.weight = self.lm_head.weight  # nanoGPT's weight tying

    return GPT()


def save_nanogpt(path, hf_model, bias=True, compiled=False):
    """ckpt.pt as nanoGPT's train.py writes it, holding hf_model's weights (Conv1D (in, out)
    transposed into nn.Linear's (out, in)); without bias, hf_model's biases are zeroed to match."""
    c = hf_model.config
    args = dict(n_layer=c.n_layer, n_head=c.n_head, n_embd=c.n_embd, block_size=c.n_positions, bias=bias,
                vocab_size=c.vocab_size, dropout=0.0)  # fmt: skip
    gpt = nanogpt_module(**{k: v for k, v in args.items() if k != "dropout"})
    hf_state = hf_model.state_dict()
    with torch.no_grad():
        for name, p in gpt.named_parameters():
            source = hf_state[name]
            p.copy_(source.T if name.startswith("transformer.h.") and p.ndim == 2 else source)
        for name, p in hf_model.named_parameters():
            if name.endswith(".bias") and not bias:
                p.zero_()
    optimizer = torch.optim.AdamW(gpt.parameters(), lr=1e-3, betas=(0.9, 0.95))
    saved = torch.compile(gpt) if compiled else gpt
    torch.save(
        {
            "model": saved.state_dict(),
            "optimizer": optimizer.state_dict(),
            "model_args": args,
            "iter_num": 250,
            "best_val_loss": torch.tensor(1.5),
            "config": {"dataset": "shakespeare_char", "batch_size": 64, "compile": compiled},
        },
        path,
    )
    return path


@pytest.mark.parametrize("bias,compiled", [(True, False), (False, True)])
def test_a_nanogpt_ckpt_matches_transformers_gpt2_with_exact_gelu(tmp_path, bias, compiled):
    model = hf_gpt2(dict(activation_function="gelu", layer_norm_epsilon=1e-5))
    path = save_nanogpt(tmp_path / "ckpt.pt", model, bias=bias, compiled=compiled)
    row = recognise(path)
    assert row.name == "nanogpt"
    ckpt = row.read(path)
    cfg = ckpt.cfg
    assert (cfg.family, cfg.activation, cfg.tie_embeddings, cfg.norm_bias, cfg.mlp_bias) == (
        "gpt2",
        "gelu",
        True,
        bias,
        bias,
    )
    assert ckpt.tokenizer is None and ckpt.meta["imported_from"] == "nanoGPT ckpt.pt"
    if bias:
        assert_same_step(ckpt, model)
    else:  # transformers' GPT-2 always has biases: here zero, and xt's model has none
        assert not any(name.endswith(("_bias", ".b1", ".bq")) for name in ckpt.params)
        model = model.double()
        inputs, targets = make_batch(cfg, 2, 10, seed=3)
        _, loss, _ = reference_step(model, inputs, targets)
        params = {k: v.astype(np.float64) for k, v in ckpt.params.items()}
        assert abs(xt_core.forward_backward(cfg, params, inputs, targets).loss - loss) <= 1e-6


def test_meta_pkl_beside_the_ckpt_is_its_character_tokenizer(tmp_path):
    import pickle

    model = hf_gpt2(dict(activation_function="gelu", layer_norm_epsilon=1e-5))
    path = save_nanogpt(tmp_path / "ckpt.pt", model)
    chars = sorted(set("to be or not to be, that is the question?\nWhy!"))[: model.config.vocab_size]
    meta = {"vocab_size": len(chars), "itos": dict(enumerate(chars)), "stoi": {c: i for i, c in enumerate(chars)}}
    (tmp_path / "meta.pkl").write_bytes(pickle.dumps(meta))  # as nanoGPT's prepare.py writes it
    ckpt = recognise(path).read(path)
    assert ckpt.tokenizer == CharTokenizer("".join(chars))
    assert ckpt.tokenizer.encode("to be") == [meta["stoi"][c] for c in "to be"]
    (tmp_path / "meta.pkl").write_bytes(pickle.dumps({**meta, "stoi": {c: 0 for c in chars}}))
    with pytest.raises(CheckpointError, match="stoi and itos must number"):
        recognise(path).read(path)


def test_nanogpt_model_args_xt_cannot_compute_are_refused(tmp_path):
    model = hf_gpt2(dict(activation_function="gelu", layer_norm_epsilon=1e-5))
    path = save_nanogpt(tmp_path / "ckpt.pt", model)
    saved = torch.load(path, weights_only=True)
    saved["model_args"]["n_kv_head"] = 2  # a fork's grouped-query attention
    torch.save(saved, path)
    with pytest.raises(CheckpointError, match=r"model_args \['n_kv_head'\]: xt computes nanoGPT's GPT"):
        recognise(path).read(path)


def test_the_original_gpt2_layout_without_transformer_and_with_its_mask_buffers(tmp_path):
    """The hub's original GPT-2 files name tensors h.0.ln_1.weight, wte.weight (no "transformer.")
    and keep each layer's causal mask (attn.bias, attn.masked_bias): read alike, the buffers skipped."""
    from safetensors.numpy import load_file, save_file

    model = hf_gpt2(CASES["gpt2-gelu-new"])
    model.save_pretrained(tmp_path / "gpt2")
    path = tmp_path / "gpt2" / "model.safetensors"
    tensors = {name.removeprefix("transformer."): value for name, value in load_file(path).items()}
    for L in range(model.config.n_layer):
        tensors[f"h.{L}.attn.bias"] = np.tril(np.ones((1, 1, 16, 16), dtype=np.float32))
        tensors[f"h.{L}.attn.masked_bias"] = np.array(-1e4, dtype=np.float32)
    save_file(tensors, str(path), metadata={"format": "pt"})
    ckpt = recognise(tmp_path / "gpt2").read(tmp_path / "gpt2")
    assert_same_step(ckpt, model)
