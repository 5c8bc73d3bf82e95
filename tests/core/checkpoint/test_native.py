"""Checkpoint I/O: round trips per format, the exporting conventions, corrupt files."""

import json
from pathlib import Path

import numpy as np
import pytest

import xt_core
from tests.helpers.specs import make_batch
from xt_core.checkpoint import (
    Checkpoint,
    CheckpointError,
    export_hf,
    export_llama2c,
    import_hf,
    import_llama2c,
    load,
    save,
)
from xt_core.text.byte_char import CharTokenizer

CFGS = {
    "tied-gqa": xt_core.Config(vocab_size=20, n_layer=2, n_head=4, n_kv_head=2, n_embd=16, ffn_hidden=24, seq_len=10),
    "untied": xt_core.Config(
        vocab_size=12, n_layer=1, n_head=2, n_kv_head=2, n_embd=8, ffn_hidden=12, seq_len=6, tie_embeddings=False
    ),
}


def ckpt(name, dtype=np.float32):
    cfg = CFGS[name]
    return Checkpoint(
        cfg, xt_core.init_params(cfg, seed=3, dtype=dtype), CharTokenizer.from_text("abcdefg hij"), {"steps": 7}
    )


@pytest.mark.parametrize("suffix", [".safetensors", ".npz"])
@pytest.mark.parametrize("name", sorted(CFGS))
def test_xt_round_trip(tmp_path, suffix, name):
    original = ckpt(name)
    loaded = load(save(tmp_path / f"m{suffix}", original))
    assert loaded.cfg == original.cfg and loaded.tokenizer == original.tokenizer and loaded.meta == {"steps": 7}
    for k, v in original.params.items():
        assert loaded.params[k].dtype == v.dtype and loaded.params[k].tobytes() == v.tobytes()


@pytest.mark.parametrize("name", sorted(CFGS))
def test_llama2c_round_trip_and_layout(tmp_path, name):
    original = ckpt(name)
    cfg = original.cfg
    path = export_llama2c(tmp_path / "m.bin", cfg, original.params)
    raw = path.read_bytes()
    header = np.frombuffer(raw[:28], dtype="<i4")
    assert list(header) == [
        cfg.n_embd,
        cfg.ffn_hidden,
        cfg.n_layer,
        cfg.n_head,
        cfg.n_kv_head,
        cfg.vocab_size if cfg.tie_embeddings else -cfg.vocab_size,
        cfg.seq_len,
    ]
    floats = np.frombuffer(raw[28:], dtype="<f4")
    emb = cfg.vocab_size * cfg.n_embd
    np.testing.assert_array_equal(floats[:emb], original.params["tok_embeddings"].ravel())
    # after the attention norms of every layer comes wq of layer 0, stored (out, in) as PyTorch does
    start = emb + cfg.n_layer * cfg.n_embd
    wq = original.params["layers.0.attention.wq"]
    np.testing.assert_array_equal(floats[start : start + wq.size], wq.T.ravel())
    imported = import_llama2c(path)
    assert imported.cfg == cfg
    for k, v in original.params.items():
        np.testing.assert_array_equal(imported.params[k], v)


def hf_scores(directory, cfg, tokens):
    """Attention scores of layer 0 computed the Hugging Face way, straight from its files:
    (out, in) weights, rotate-half RoPE."""
    from safetensors.numpy import load_file

    t = load_file(str(directory / "model.safetensors"))
    x = t["model.embed_tokens.weight"][tokens].astype(np.float64)
    x = x / np.sqrt(np.mean(x * x, -1, keepdims=True) + cfg.norm_eps) * t["model.layers.0.input_layernorm.weight"]
    hd, T = cfg.head_dim, len(tokens)
    q = (x @ t["model.layers.0.self_attn.q_proj.weight"].T).reshape(T, cfg.n_head, hd)
    k = (x @ t["model.layers.0.self_attn.k_proj.weight"].T).reshape(T, cfg.n_kv_head, hd)
    inv = cfg.rope_theta ** (-np.arange(0, hd, 2) / hd)
    angle = np.arange(T)[:, None] * inv
    cos = np.concatenate([np.cos(angle)] * 2, -1)[:, None, :]
    sin = np.concatenate([np.sin(angle)] * 2, -1)[:, None, :]

    def rotate_half(v):
        return np.concatenate([-v[..., hd // 2 :], v[..., : hd // 2]], -1)

    q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
    k = np.repeat(k, cfg.n_head // cfg.n_kv_head, axis=1)
    return np.einsum("ihd,jhd->hij", q, k) / np.sqrt(hd)


@pytest.mark.parametrize("name", sorted(CFGS))
def test_hf_round_trip_and_rope_convention(tmp_path, name):
    original = ckpt(name, dtype=np.float64)
    cfg = original.cfg
    directory = export_hf(tmp_path / "hf", cfg, original.params)
    imported = import_hf(directory)  # a float64 file stays float64
    assert imported.cfg == cfg
    for k, v in original.params.items():
        assert imported.params[k].dtype == np.float64 and imported.params[k].tobytes() == v.tobytes(), k
    as32 = import_hf(directory, dtype=np.float32)
    for k, v in original.params.items():
        assert as32.params[k].dtype == np.float32 and as32.params[k].tobytes() == v.astype(np.float32).tobytes(), k
    tokens = make_batch(cfg, 1, 6)[0][0]
    trace = xt_core.forward_backward(cfg, imported.params, tokens, tokens)
    ours = trace["layers.0.attention.scores"][0]
    theirs = hf_scores(directory, cfg, tokens)
    keep = np.isfinite(ours)
    np.testing.assert_allclose(ours[keep], theirs[keep], rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------- corrupt files


def test_safetensors_corrupt(tmp_path):
    path = save(tmp_path / "m.safetensors", ckpt("tied-gqa"))
    path.write_bytes(path.read_bytes()[:-40])
    with pytest.raises(CheckpointError, match="m.safetensors"):
        load(path)
    (tmp_path / "junk.safetensors").write_bytes(b"\x00garbage")
    with pytest.raises(CheckpointError, match="not a readable safetensors"):
        load(tmp_path / "junk.safetensors")


def test_safetensors_wrong_shape_and_foreign_file(tmp_path):
    from safetensors.numpy import save_file

    good = ckpt("tied-gqa")
    params = dict(good.params, norm=np.ones(5, np.float32))
    meta = {"format": "xt-checkpoint-1", "config": json.dumps(good.cfg.to_dict()), "tokenizer": "null", "meta": "{}"}
    save_file(params, str(tmp_path / "w.safetensors"), metadata=meta)
    with pytest.raises(CheckpointError, match=r"tensor norm has shape \(5,\), the config needs \(16,\)"):
        load(tmp_path / "w.safetensors")
    save_file(good.params, str(tmp_path / "f.safetensors"))
    with pytest.raises(CheckpointError, match="not an xt checkpoint"):
        load(tmp_path / "f.safetensors")


def test_npz_never_unpickles(tmp_path):
    path = tmp_path / "evil.npz"
    np.savez(path, payload=np.array([{"a": 1}], dtype=object))
    with pytest.raises(CheckpointError, match="not a readable .npz"):
        load(path)


def test_npz_truncated(tmp_path):
    path = save(tmp_path / "m.npz", ckpt("untied"))
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(CheckpointError, match="m.npz"):
        load(path)


def test_llama2c_truncated_and_bad_header(tmp_path):
    original = ckpt("untied")
    path = export_llama2c(tmp_path / "m.bin", original.cfg, original.params)
    path.write_bytes(path.read_bytes()[:-8])
    with pytest.raises(CheckpointError, match="truncated"):
        import_llama2c(path)
    (tmp_path / "h.bin").write_bytes(np.array([10, 20, 1, 3, 3, 5, 8], dtype="<i4").tobytes())
    with pytest.raises(CheckpointError, match="not a valid config"):
        import_llama2c(tmp_path / "h.bin")
    (tmp_path / "s.bin").write_bytes(b"12")
    with pytest.raises(CheckpointError, match="too short"):
        import_llama2c(tmp_path / "s.bin")


def test_hf_missing_tensor_and_config(tmp_path):
    original = ckpt("tied-gqa")
    directory = export_hf(tmp_path / "hf", original.cfg, original.params)
    from safetensors.numpy import load_file, save_file

    tensors = load_file(str(directory / "model.safetensors"))
    del tensors["model.layers.1.mlp.up_proj.weight"]
    save_file(tensors, str(directory / "model.safetensors"))
    with pytest.raises(CheckpointError, match="missing model.layers.1.mlp.up_proj.weight"):
        import_hf(directory)
    (directory / "config.json").write_text("{")
    with pytest.raises(CheckpointError, match="config.json"):
        import_hf(directory)


def test_unknown_suffix(tmp_path):
    with pytest.raises(CheckpointError, match="suffix"):
        save(tmp_path / "m.pt", ckpt("untied"))


@pytest.mark.parametrize("name", ["induction", "text"])
def test_the_shipped_files_are_in_the_one_byte_form_save_writes(name, tmp_path):
    """save() orders the header (metadata keys, tensor names), so a checkpoint has exactly one
    byte form: the shipped demo files are in it, and `make demo-models` (which trains
    deterministically, then saves) reproduces them bit for bit."""
    from xt_core.checkpoint import load, save

    shipped = Path(xt_core.__file__).parent / "checkpoint" / "demos" / f"{name}.safetensors"
    again = save(tmp_path / f"{name}.safetensors", load(shipped))
    assert again.read_bytes() == shipped.read_bytes()
