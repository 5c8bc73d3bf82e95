"""import_hf without transformers: config.json key by key (computed, fixed or refused with
its name and value), both RoPE layouts, bfloat16 / float16 / float64 tensors, shards read
through model.safetensors.index.json. test_hf_reference.py checks the math against
transformers itself."""

import json
import re

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import xt_core
from xt_core.checkpoint import CheckpointError, export_hf, import_hf
from xt_core.checkpoint.hf_config import IGNORED

CFG = xt_core.Config(
    vocab_size=20, n_layer=2, n_head=4, n_kv_head=2, n_embd=16, ffn_hidden=24, seq_len=10, rope_theta=5e5, norm_eps=1e-6
)
PARAMS = xt_core.init_params(CFG, seed=2)


@pytest.fixture
def hf_dir(tmp_path):
    return export_hf(tmp_path / "hf", CFG, PARAMS)


def edit_config(directory, **changes):
    config = json.loads((directory / "config.json").read_text())
    for key, value in changes.items():
        if value is ...:
            config.pop(key, None)
        else:
            config[key] = value
    (directory / "config.json").write_text(json.dumps(config))


def test_both_rope_layouts(hf_dir):
    assert json.loads((hf_dir / "config.json").read_text())["rope_parameters"] == {
        "rope_theta": 5e5,
        "rope_type": "default",
    }
    assert import_hf(hf_dir).cfg == CFG  # transformers >= 5: rope_parameters
    edit_config(hf_dir, rope_parameters=..., rope_theta=5e5)
    assert import_hf(hf_dir).cfg == CFG  # earlier: a top-level rope_theta
    edit_config(hf_dir, rope_parameters={"rope_theta": 5e5, "rope_type": "default"})
    assert import_hf(hf_dir).cfg == CFG  # both, agreeing
    edit_config(hf_dir, rope_parameters=..., rope_theta=..., rope_scaling=None)
    assert import_hf(hf_dir).cfg.rope_theta == 10000.0  # neither: transformers' default


def test_defaults_are_transformers_llama_defaults(hf_dir):
    edit_config(hf_dir, rms_norm_eps=..., tie_word_embeddings=...)
    tensors = load_file(str(hf_dir / "model.safetensors"))
    save_file({**tensors, "lm_head.weight": PARAMS["tok_embeddings"]}, str(hf_dir / "model.safetensors"))
    cfg = import_hf(hf_dir).cfg
    assert cfg.norm_eps == 1e-6 and cfg.tie_embeddings is False  # LlamaConfig: rms_norm_eps 1e-6, untied


REFUSED = {  # key: value -> the words of the refusal
    "attention_bias": (True, "attention_bias = True: xt computes only attention projections without bias"),
    "mlp_bias": (True, "mlp_bias = True"),
    "hidden_act": ("gelu", "hidden_act = 'gelu': xt computes only SwiGLU with silu"),
    "attention_dropout": (0.1, "attention_dropout = 0.1"),
    "model_type": (
        "mistral",
        "model_type = 'mistral': xt computes only Llama, Qwen2, Qwen3 and GPT-2 models "
        "('llama', 'qwen2', 'qwen3', 'gpt2')",
    ),
    "pretraining_tp": (2, "pretraining_tp = 2"),
    "head_dim": (3, "head_dim = 3 must be even: RoPE rotates pairs"),
    "rope_scaling": ({"rope_type": "llama3", "factor": 8.0}, "rope_scaling = {'rope_type': 'llama3'"),
    "rope_parameters": (
        {"rope_type": "linear", "factor": 2.0, "rope_theta": 1e4},
        "rope_parameters.rope_type = 'linear'",
    ),
    "sliding_window": (4096, "sliding_window = 4096: unknown key"),
    "quantization_config": ({"bits": 4}, "quantization_config = {'bits': 4}: unknown key"),
    "rms_norm_eps": (1e300, "rms_norm_eps = 1e+300 is outside"),
    "rope_theta": (1e-300, "rope_theta = 1e-300 is outside"),
}


@pytest.mark.parametrize("key", sorted(REFUSED))
def test_keys_xt_does_not_compute_are_refused_naming_key_and_value(hf_dir, key):
    value, words = REFUSED[key]
    if key == "rope_theta":
        edit_config(hf_dir, rope_parameters={"rope_type": "default", "rope_theta": value})
    else:
        edit_config(hf_dir, **{key: value})
    with pytest.raises(CheckpointError, match=re.escape(words)):
        import_hf(hf_dir)


def test_a_head_dim_the_tensors_do_not_have_is_refused_naming_it(hf_dir):
    """head_dim is read (Qwen3's heads are not hidden_size / num_attention_heads wide): one the
    stored q/k/v/o tensors do not match is refused at the first of them, asking about head_dim."""
    edit_config(hf_dir, head_dim=8)  # the files' heads are 16 / 4 = 4 wide
    with pytest.raises(CheckpointError, match=r"q_proj.*\(does config.json's head_dim match\?\)"):
        import_hf(hf_dir)


def test_other_rope_refusals(hf_dir):
    edit_config(hf_dir, rope_parameters={"rope_type": "default", "rope_theta": 5e5, "partial_rotary_factor": 0.5})
    with pytest.raises(CheckpointError, match=r"rope_parameters\.partial_rotary_factor = 0\.5"):
        import_hf(hf_dir)
    edit_config(hf_dir, rope_parameters={"rope_type": "default", "rope_theta": 5e5}, rope_theta=1e4)
    with pytest.raises(
        CheckpointError, match=r"rope_theta = 10000\.0: disagrees with rope_parameters\.rope_theta = 500000\.0"
    ):
        import_hf(hf_dir)
    edit_config(hf_dir, rope_theta=..., rms_norm_eps="1e-6")
    with pytest.raises(CheckpointError, match="rms_norm_eps = '1e-6': not a finite number"):
        import_hf(hf_dir)


def test_keys_that_change_nothing_are_accepted(hf_dir):
    values = {"architectures": ["LlamaForCausalLM"], "torch_dtype": "float32", "transformers_version": "4.40.0"}
    edit_config(hf_dir, **{key: values.get(key, 0) for key in IGNORED}, rope_scaling=None, head_dim=4)
    assert import_hf(hf_dir).cfg == CFG


def write_raw_safetensors(path, tensors: dict[str, tuple[str, np.ndarray]]):
    """A safetensors file by hand, so any stored dtype can be written (bfloat16 as its raw
    16-bit patterns, which NumPy cannot hold as floats)."""
    header, chunks, offset = {}, [], 0
    for name, (dtype, raw) in tensors.items():
        data = np.ascontiguousarray(raw).tobytes()
        header[name] = {"dtype": dtype, "shape": list(raw.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    path.write_bytes(len(text).to_bytes(8, "little") + text + b"".join(chunks))


def bfloat16_bits(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.float32).view(np.uint32) >> 16).astype("<u2")  # truncation: exact in both directions


@pytest.mark.parametrize("stored", ["BF16", "F16"])
def test_bf16_and_f16_widen_exactly(hf_dir, stored):
    tensors = load_file(str(hf_dir / "model.safetensors"))
    if stored == "BF16":
        raw = {name: ("BF16", bfloat16_bits(t)) for name, t in tensors.items()}
        values = {name: (bits.astype(np.uint32) << 16).view(np.float32) for name, (_, bits) in raw.items()}
    else:
        raw = {name: ("F16", t.astype("<f2")) for name, t in tensors.items()}
        values = {name: half.astype(np.float32) for name, (_, half) in raw.items()}
    write_raw_safetensors(hf_dir / "model.safetensors", raw)
    as32, as64 = import_hf(hf_dir), import_hf(hf_dir, dtype=np.float64)
    reference = import_hf_from(values, hf_dir.parent / "reference")
    for name, value in reference.params.items():
        assert as32.params[name].dtype == np.float32 and as32.params[name].tobytes() == value.tobytes(), name
        assert as64.params[name].dtype == np.float64 and np.array_equal(as64.params[name], value), name


def import_hf_from(tensors: dict, directory):
    """The same tensors stored as float32: what a bf16/f16 import must equal exactly."""
    export_hf(directory, CFG, PARAMS)
    save_file(tensors, str(directory / "model.safetensors"))
    return import_hf(directory)


def test_an_unsupported_dtype_is_refused_naming_it(hf_dir):
    tensors = load_file(str(hf_dir / "model.safetensors"))
    raw = {name: ("F32", t) for name, t in tensors.items()}
    raw["model.norm.weight"] = ("I8", np.zeros(16, np.int8))
    write_raw_safetensors(hf_dir / "model.safetensors", raw)
    with pytest.raises(
        CheckpointError, match="tensor 'model.norm.weight' has dtype 'I8'; xt reads F64, F32, F16, BF16"
    ):
        import_hf(hf_dir)


def shard(directory, parts: int = 3):
    tensors = load_file(str(directory / "model.safetensors"))
    (directory / "model.safetensors").unlink()
    names = sorted(tensors)
    weight_map = {}
    for i in range(parts):
        file = f"model-{i + 1:05d}-of-{parts:05d}.safetensors"
        chunk = names[i::parts]
        save_file({n: tensors[n] for n in chunk}, str(directory / file), metadata={"format": "pt"})
        weight_map.update(dict.fromkeys(chunk, file))
    index = {"metadata": {"total_size": 0}, "weight_map": weight_map}
    (directory / "model.safetensors.index.json").write_text(json.dumps(index))
    return weight_map


def test_shards_are_read_through_the_index(hf_dir):
    one_file = import_hf(hf_dir)
    shard(hf_dir)
    sharded = import_hf(hf_dir)
    assert sharded.cfg == one_file.cfg
    for name, value in one_file.params.items():
        assert sharded.params[name].tobytes() == value.tobytes(), name


def test_an_index_is_never_a_path_out_of_the_directory(hf_dir):
    weight_map = shard(hf_dir)
    name = next(iter(weight_map))
    for file in ("../model-00001-of-00003.safetensors", "/etc/passwd", ".hidden.safetensors", 3):
        index = {"weight_map": {**weight_map, name: file}}
        (hf_dir / "model.safetensors.index.json").write_text(json.dumps(index))
        with pytest.raises(CheckpointError, match="not a shard in the directory"):
            import_hf(hf_dir)


def test_an_index_naming_a_tensor_its_shard_lacks(hf_dir):
    weight_map = shard(hf_dir)
    name = "model.norm.weight"
    other = next(f for f in sorted(set(weight_map.values())) if f != weight_map[name])
    (hf_dir / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {**weight_map, name: other}}))
    with pytest.raises(CheckpointError, match=f"the index puts model.norm.weight in {other}, which lacks it"):
        import_hf(hf_dir)


def test_no_weights_at_all(hf_dir):
    (hf_dir / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match="neither model.safetensors nor model.safetensors.index.json"):
        import_hf(hf_dir)


def test_a_tied_model_with_an_lm_head_is_refused(hf_dir):
    tensors = load_file(str(hf_dir / "model.safetensors"))
    save_file({**tensors, "lm_head.weight": tensors["model.embed_tokens.weight"]}, str(hf_dir / "model.safetensors"))
    with pytest.raises(CheckpointError, match="unexpected lm_head.weight"):
        import_hf(hf_dir)


def test_old_writers_rotary_tables_are_ignored(hf_dir):
    tensors = load_file(str(hf_dir / "model.safetensors"))
    tables = {f"model.layers.{L}.self_attn.rotary_emb.inv_freq": np.ones(2, np.float32) for L in range(CFG.n_layer)}
    save_file({**tensors, **tables}, str(hf_dir / "model.safetensors"))
    assert set(import_hf(hf_dir).params) == set(PARAMS)
