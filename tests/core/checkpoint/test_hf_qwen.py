"""import_hf on Qwen2/2.5 and Qwen3 directories written by transformers' save_pretrained (random
tiny models, no download): the config's model_type switches on Llama's script's parts (qkv_bias,
qk_norm, head_dim), the weights arrive in xt's layout (q/k biases and q/k norm gains permuted like
q and k's rows), and the loss and every gradient are transformers' own. A checkpoint asking for
what xt cannot compute is refused before a tensor is read, the message naming the config key, its
value and the feature. Qwen2.5-0.5B's real config (no weights) is admitted or refused by the
served-model limits with its numbers.

Skips without torch and transformers, except in CI (XT_REQUIRE_TORCH=1)."""

import json
import re

import numpy as np
import pytest

import xt_core
from app.checkpoints import served
from tests.helpers.env import skip_unless_installed
from tests.helpers.qwen_models import CASES, SHAPE, hf_model, load_pretrained
from xt_core import names
from xt_core.checkpoint import CheckpointError, export_hf, import_hf
from xt_core.checkpoint.hf import read_config

pytestmark = pytest.mark.torch
skip_unless_installed("torch", "transformers", hint="pip install -e '.[reference]'")


def written(case: str, directory, **edits):
    """The case's model saved by transformers (float32), config.json edited by `edits`."""
    hf_model(case).float().save_pretrained(directory)
    if edits:
        config = json.loads((directory / "config.json").read_text())
        (directory / "config.json").write_text(json.dumps({**config, **edits}))
    return directory


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_qwen_directory_imports_as_llamas_script_with_its_parts_and_steps_as_transformers(tmp_path, case):
    directory = written(case, tmp_path / case)
    ckpt = import_hf(directory, dtype=np.float64)
    assert ckpt.cfg == xt_core.Config(**SHAPE, **CASES[case][2])
    model, hf = load_pretrained(directory)
    tokens = np.random.default_rng(2).integers(0, SHAPE["vocab_size"], size=(2, 11))
    reference = hf.hf_step(model, ckpt.cfg, tokens, with_weights=True)
    for name, value in ckpt.params.items():  # the importer's permutation, against the test's own
        assert value.tobytes() == reference["weights"][name].tobytes(), name
    trace = xt_core.forward_backward(ckpt.cfg, ckpt.params, tokens[:, :-1], tokens[:, 1:])
    assert abs(trace.loss - reference["loss"]) <= 1e-5
    for name, grad in reference["grads"].items():
        assert hf.normwise(trace.grads[name], grad) <= 1e-4, name


@pytest.mark.parametrize("case", ["qwen2-gqa-tied", "qwen3-wide-heads-untied"])
def test_export_writes_a_qwen_directory_transformers_loads(tmp_path, case):
    ckpt = import_hf(written(case, tmp_path / "theirs"), dtype=np.float64)
    ours = export_hf(tmp_path / "ours", ckpt.cfg, ckpt.params)
    again = import_hf(ours, dtype=np.float64)
    assert again.cfg == ckpt.cfg and all(np.array_equal(again.params[n], v) for n, v in ckpt.params.items())
    model, hf = load_pretrained(ours)
    assert type(model).__name__ == f"{CASES[case][0]}ForCausalLM"
    tokens = np.random.default_rng(3).integers(0, SHAPE["vocab_size"], size=(1, 9))
    trace = xt_core.forward_backward(ckpt.cfg, ckpt.params, tokens[:, :-1], tokens[:, 1:])
    assert abs(trace.loss - hf.hf_step(model, ckpt.cfg, tokens)["loss"]) <= 1e-5


REFUSED = {  # (case, config.json edits) -> what the message says: the key, its value, the feature
    "sliding-window": (
        ("qwen2-gqa-tied", dict(use_sliding_window=True, sliding_window=8)),
        "use_sliding_window = True: sliding window attention",
    ),
    "sliding-layers": (
        ("qwen3-wide-heads-untied", dict(layer_types=["full_attention", "sliding_attention"])),
        "layer_types = ['full_attention', 'sliding_attention']: sliding window attention",
    ),
    "moe-key": (("qwen3-wide-heads-untied", dict(num_experts=8)), "num_experts = 8: a mixture of experts"),
    "moe-model": (("qwen3-wide-heads-untied", dict(model_type="qwen3_moe")), "model_type = 'qwen3_moe': a mixture"),
    "softcap": (
        ("qwen2-gqa-tied", dict(final_logit_softcapping=30.0)),
        "final_logit_softcapping = 30.0: soft-capping",
    ),
    "yarn": (
        ("qwen2-gqa-tied", dict(rope_scaling={"type": "yarn", "factor": 4.0})),
        "rope_scaling = {'type': 'yarn', 'factor': 4.0}: xt computes plain RoPE only",
    ),
    "yarn-parameters": (
        ("qwen3-wide-heads-untied", dict(rope_parameters={"rope_type": "yarn", "rope_theta": 1e4, "factor": 4.0})),
        "rope_parameters.rope_type = 'yarn'",
    ),
    "qwen3-o-bias": (  # Qwen3's attention_bias puts a bias on o as well: xt computes q, k, v's only
        ("qwen3-wide-heads-untied", dict(attention_bias=True)),
        "attention_bias = True: xt computes only attention projections without bias",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_xt_cannot_compute_is_refused_naming_the_key_and_feature_before_a_tensor(tmp_path, name):
    (case, edits), words = REFUSED[name]
    directory = written(case, tmp_path / name, **edits)
    (directory / "model.safetensors").unlink()  # refused from config.json alone: no tensor is read
    with pytest.raises(CheckpointError, match=re.escape(f"{name}: config.json {words}")):
        import_hf(directory)


def test_a_qwen_with_its_window_off_is_imported(tmp_path):
    """Qwen2.5's config names a window it does not use (use_sliding_window false): not refused."""
    edits = dict(use_sliding_window=False, sliding_window=32768, max_window_layers=21)
    assert import_hf(written("qwen2-gqa-tied", tmp_path / "m", **edits)).cfg.qkv_bias


# Qwen2.5-0.5B's config.json as published (Qwen/Qwen2.5-0.5B), written here: no download
QWEN25_05B = {
    "architectures": ["Qwen2ForCausalLM"],
    "attention_dropout": 0.0,
    "bos_token_id": 151643,
    "eos_token_id": 151643,
    "hidden_act": "silu",
    "hidden_size": 896,
    "initializer_range": 0.02,
    "intermediate_size": 4864,
    "max_position_embeddings": 32768,
    "max_window_layers": 24,
    "model_type": "qwen2",
    "num_attention_heads": 14,
    "num_hidden_layers": 24,
    "num_key_value_heads": 2,
    "rms_norm_eps": 1e-06,
    "rope_theta": 1000000.0,
    "sliding_window": 32768,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
    "transformers_version": "4.40.1",
    "use_cache": True,
    "use_sliding_window": False,
    "vocab_size": 151936,
}


def test_qwen25_05b_is_admitted_or_refused_by_the_served_limits_with_its_numbers(tmp_path, monkeypatch):
    directory = tmp_path / "Qwen2.5-0.5B"
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps(QWEN25_05B))
    cfg = read_config(directory)
    assert (cfg.vocab_size, cfg.n_layer, cfg.n_embd, cfg.n_head, cfg.n_kv_head, cfg.head_dim) == (
        151936, 24, 896, 14, 2, 64,
    )  # fmt: skip
    assert cfg.tie_embeddings and cfg.qkv_bias and not cfg.qk_norm
    assert cfg.n_params() == 494_032_768  # the published count: the biases are in it
    target = served.ServedPath(directory.name, directory, "hf")
    monkeypatch.setattr(served, "_OPENED", {})
    monkeypatch.setattr(served, "machine_memory", lambda: served.Memory(4 << 30, 2 << 30))  # 2 GB free
    refused = served.opened(target)
    assert refused.refusal == (
        "its 494,032,768 parameters take 1,885 MB as float32, more than 80% of the 2,048 MB this machine has free"
    )
    monkeypatch.setattr(served, "_OPENED", {})
    monkeypatch.setattr(served, "machine_memory", lambda: served.Memory(16 << 30, 8 << 30))  # 8 GB free
    admitted = served.opened(target)  # past the limits: then refused only for the weights not written here
    assert "neither model.safetensors nor model.safetensors.index.json" in admitted.refusal
    # its trace of 64 positions, within what one trace may hold beside 1,885 MB of weights
    left = ((8 << 30) - cfg.n_params() * 4) // 2
    assert names.estimate_trace_bytes(cfg, 1, 64, shared_params=True) < min(left, 3 << 29)
