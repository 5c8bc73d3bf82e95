"""The model family seam: a config names its family and the parts of it (positions, norm,
activation, biases, qk-norm, head width); the family's script and rows of recorded tensors run
it. Llama and GPT-2 are computed: a part a family's script cannot compute is refused naming the
field and what it computes, never computed as something else. A head width other than n_embd / n_head is
computed (Wq (C, H*hd), Wo (H*hd, C)); its gradients: tests/core/test_model.py (finite
differences) and tests/core/test_torch_parity.py (autograd)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest

import xt_core
from tests.helpers.specs import make_batch
from xt_core import names
from xt_core.checkpoint import Checkpoint, export_hf, import_hf, load, save
from xt_core.config import FAMILY_PARTS
from xt_core.families.registry import FAMILIES, family_of


def test_the_tables_name_the_same_families():
    assert set(FAMILIES) == set(FAMILY_PARTS) == set(names.ROWS)
    config_fields = {f.name for f in dataclasses.fields(xt_core.Config)}
    for parts in FAMILY_PARTS.values():  # every family says what it computes of every part
        assert set(parts) == set(FAMILY_PARTS["llama"]) and set(parts) <= config_fields
    for name, family in FAMILIES.items():
        cfg = xt_core.Config(family=name)
        assert family_of(cfg) is family and family.rows == names.ROWS[name]
        assert [node.name for node in xt_core.build_tape(cfg)] == names.tensor_names(cfg)
        assert xt_core.param_shapes(cfg) == family.param_shapes(cfg)


def test_a_config_takes_its_familys_defaults_and_leaves_them_out_of_its_dict():
    cfg = xt_core.Config()
    assert cfg.family == "llama" and cfg.head_dim == 16
    assert (cfg.positions, cfg.norm_type, cfg.activation) == ("rope", "rmsnorm", "swiglu")
    assert not (cfg.norm_bias or cfg.qkv_bias or cfg.o_bias or cfg.mlp_bias or cfg.qk_norm)
    assert list(cfg.to_dict()) == [
        "vocab_size", "n_layer", "n_head", "n_kv_head", "n_embd", "ffn_hidden", "seq_len", "tie_embeddings",
        "rope_theta", "norm_eps",
    ]  # fmt: skip
    # naming a default is the same config, with the same dict
    named = xt_core.Config(family="llama", head_dim=16, positions="rope", norm_type="rmsnorm", qk_norm=False)
    assert named == cfg and named.to_dict() == cfg.to_dict()
    assert xt_core.Config.from_dict(cfg.to_dict()) == cfg


@pytest.mark.parametrize(
    "field,value,computes",
    [
        ("family", "gpt3", "family must be one of 'llama', 'gpt2', got 'gpt3'"),
        ("positions", "learned", "positions = 'learned' is not computed for the 'llama' family: it computes 'rope'"),
        ("norm_type", "layernorm", "norm_type = 'layernorm' .* it computes 'rmsnorm'"),
        ("norm_bias", True, "norm_bias = True .* it computes False"),
        ("activation", "gelu_tanh", "activation = 'gelu_tanh' .* it computes 'swiglu'"),
        ("activation", "gelu", "activation = 'gelu' .* it computes 'swiglu'"),
        ("qkv_bias", 1, "qkv_bias = 1 .* it computes False, True"),
        ("o_bias", True, "o_bias = True"),
        ("mlp_bias", True, "mlp_bias = True"),
        ("qk_norm", 0, "qk_norm = 0 is not computed"),  # a number is not a boolean
        ("head_dim", 0, "head_dim must be positive, got 0"),
        ("head_dim", 2.0, "head_dim must be an integer"),
        ("head_dim", 7, "head_dim = 7 must be even: RoPE rotates pairs"),
    ],
)
def test_what_the_code_cannot_compute_is_refused_naming_the_field(field, value, computes):
    with pytest.raises(ValueError, match=computes):
        xt_core.Config(**{field: value})


@pytest.mark.parametrize(
    "fields,computes",
    [
        (dict(positions="rope"), "positions = 'rope' is not computed for the 'gpt2' family: it computes 'learned'"),
        (dict(norm_type="rmsnorm"), "norm_type = 'rmsnorm' .* it computes 'layernorm'"),
        (dict(activation="swiglu"), "activation = 'swiglu' .* it computes 'gelu_tanh', 'gelu'"),
        (dict(qk_norm=True), "qk_norm = True .* it computes False"),
    ],
)
def test_gpt2_refuses_what_its_script_does_not_compute(fields, computes):
    with pytest.raises(ValueError, match=computes):
        xt_core.Config(family="gpt2", **fields)


def test_gpt2s_defaults_are_gpt2s_and_its_dict_names_only_the_family():
    cfg = xt_core.Config(family="gpt2")
    assert (cfg.positions, cfg.norm_type, cfg.activation) == ("learned", "layernorm", "gelu_tanh")
    assert cfg.norm_bias and cfg.qkv_bias and cfg.o_bias and cfg.mlp_bias and not cfg.qk_norm
    assert cfg.to_dict()["family"] == "gpt2" and "activation" not in cfg.to_dict()
    nanogpt = xt_core.Config(family="gpt2", activation="gelu", norm_bias=False, qkv_bias=False, o_bias=False,
                             mlp_bias=False)  # fmt: skip
    assert xt_core.Config.from_dict(nanogpt.to_dict()) == nanogpt
    for variant in (cfg, nanogpt, dataclasses.replace(nanogpt, tie_embeddings=False, mlp_bias=True)):
        shapes = xt_core.param_shapes(variant)
        assert variant.n_params() == sum(np.prod(s) for s in shapes.values())
    assert xt_core.param_shapes(cfg)["pos_embeddings"] == (cfg.seq_len, cfg.n_embd)
    assert "layers.0.attention.bq" not in xt_core.param_shapes(nanogpt)


def test_gpt2s_init_gives_biases_zero_and_gains_one():
    params = xt_core.init_params(xt_core.Config(family="gpt2"), seed=0)
    for name, value in params.items():
        if name.endswith(("_bias", ".bq", ".bk", ".bv", ".bo", ".b1", ".b2")):
            assert not value.any(), name
        elif value.ndim == 1:
            assert (value == 1).all(), name
    assert 0.05 < params["pos_embeddings"].std() < 0.2  # N(0, 1/C), C = 64


def test_qwens_parts_add_their_parameters_and_rows_and_stay_in_the_dict():
    """Qwen2 (qkv_bias) and Qwen3 (qk_norm) are Llama's script with parts on: their parameters
    are bq, bk, bv (H*hd, K*hd, K*hd) and the q/k gains (hd,), their tensors rows of Llama's table."""
    cfg = xt_core.Config(n_embd=30, n_head=4, n_kv_head=2, head_dim=6, qkv_bias=True, qk_norm=True)
    shapes = xt_core.param_shapes(cfg)
    assert shapes["layers.1.attention.bq"] == (24,) and shapes["layers.1.attention.bk"] == (12,)
    assert shapes["layers.1.attention.q_norm"] == shapes["layers.1.attention.k_norm"] == (6,)
    assert cfg.n_params() == sum(np.prod(s) for s in shapes.values())
    assert {"qkv_bias": True, "qk_norm": True}.items() <= cfg.to_dict().items()
    assert xt_core.Config.from_dict(cfg.to_dict()) == cfg
    kinds = [node.kind for node in xt_core.build_tape(cfg) if node.layer == 0][:10]
    assert kinds == ["rmsnorm", "linear", "bias", "linear", "bias", "linear", "bias", "qk_norm", "qk_norm", "rope"]
    plain = names.tensor_names(xt_core.Config())
    assert not [n for n in plain if n.endswith(("_biased", "_norm.out")) and ".attention." in n]


def test_an_explicit_head_dim_sets_the_attention_widths_and_is_kept_in_the_dict():
    cfg = xt_core.Config(n_embd=30, n_head=4, n_kv_head=2, head_dim=6)  # 30 is not a multiple of 4
    shapes = xt_core.param_shapes(cfg)
    assert shapes["layers.0.attention.wq"] == (30, 24) and shapes["layers.0.attention.wo"] == (24, 30)
    assert shapes["layers.0.attention.wk"] == shapes["layers.0.attention.wv"] == (30, 12)
    assert cfg.to_dict()["head_dim"] == 6 and xt_core.Config.from_dict(cfg.to_dict()) == cfg
    assert cfg.n_params() == sum(np.prod(s) for s in shapes.values())
    with pytest.raises(ValueError, match=r"n_embd \(30\) must be divisible by n_head \(4\)"):
        xt_core.Config(n_embd=30, n_head=4, n_kv_head=2)  # without head_dim, the width is derived

    inputs, targets = make_batch(cfg, 2, 5)
    trace = xt_core.forward_backward(cfg, xt_core.init_params(cfg, seed=1), inputs, targets)
    sizes = names.dims(cfg, 2, 5)
    assert sizes["hd"] == 6
    for name in names.tensor_names(cfg):
        axes = names.lookup(name).axes
        assert np.shape(trace[name]) == tuple(int(np.prod([sizes[d] for d in a.split("*")])) for a in axes), name
    assert trace["layers.0.attention.heads"].shape == (2, 4, 5, 6)


def test_the_families_import_nothing_that_reads_them_back():
    """xt_core/names.py reads the families' rows, so no module of xt_core/families may import
    names (or model, which runs them): one direction, module by module and folder by folder."""
    root = Path(xt_core.__file__).parent / "families"
    for path in root.glob("*.py"):
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:  # from xt_core import names: xt_core.names
                imported |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
            elif isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
        assert not imported & {"xt_core.names", "xt_core.model", "xt_core.trace"}, path.name


def test_an_explicit_head_dim_survives_xts_and_hfs_checkpoints(tmp_path):
    cfg = xt_core.Config(n_embd=30, n_head=4, n_kv_head=2, head_dim=6, n_layer=1)
    params = xt_core.init_params(cfg, seed=1)
    native = load(save(tmp_path / "model.safetensors", Checkpoint(cfg, params)))
    hf = import_hf(export_hf(tmp_path / "hf", cfg, params))
    for ckpt in (native, hf):
        assert ckpt.cfg == cfg and ckpt.cfg.head_dim == 6
        for name, value in params.items():
            np.testing.assert_array_equal(ckpt.params[name], value, err_msg=name)


def test_a_gpt2_survives_xts_own_checkpoint(tmp_path):
    cfg = xt_core.Config(family="gpt2", n_head=4, n_kv_head=4, activation="gelu", mlp_bias=False, n_layer=1)
    params = xt_core.init_params(cfg, seed=1)
    ckpt = load(save(tmp_path / "model.safetensors", Checkpoint(cfg, params)))
    assert ckpt.cfg == cfg
    for name, value in params.items():
        np.testing.assert_array_equal(ckpt.params[name], value, err_msg=name)
