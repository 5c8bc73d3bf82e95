"""Loading cannot be abused: a header that lies about sizes is refused from O(1) facts (the
file's size, its tensor count, its npy headers) before anything the header claims is
computed or allocated; the caller's `limits` run before any tensor is read; metadata is
parsed strictly; error messages stay short whatever the file claims.

"Before" is checked by what did not happen, not by a clock: `param_shapes` (a loop over every
layer the config claims) is replaced by a function that fails the test, and tracemalloc
measures the peak of what a refused load allocated (NumPy reports its buffers to it).
"""

import io
import json
import re
import struct
import tracemalloc
import zipfile

import numpy as np
import pytest
from safetensors.numpy import save_file

import xt_core
from xt_core.checkpoint import (
    Checkpoint,
    CheckpointError,
    export_hf,
    import_hf,
    import_llama2c,
    load,
    load_metadata,
    save,
)
from xt_core.text.byte_char import CharTokenizer

CFG = xt_core.Config(vocab_size=20, n_layer=2, n_head=4, n_kv_head=2, n_embd=16, ffn_hidden=24, seq_len=10)
PARAMS = xt_core.init_params(CFG, seed=1)
MB = 1 << 20


def metadata(config=None, tokenizer=None, meta=None, **raw) -> dict:
    strings = {
        "format": "xt-checkpoint-1",
        "config": json.dumps(CFG.to_dict() if config is None else config),
        "tokenizer": json.dumps(tokenizer),
        "meta": json.dumps({} if meta is None else meta),
    }
    return {**strings, **raw}


def write_npz(path, arrays: dict, strings: dict):
    with open(path, "wb") as f:
        np.savez(f, **arrays, **{f"__{k}__": np.array(v) for k, v in strings.items()})
    return path


@pytest.fixture
def no_layer_loop(monkeypatch):
    """Any call of param_shapes fails the test: the refusal must come before it."""

    def refuse(cfg):
        raise AssertionError(f"param_shapes called for n_layer = {cfg.n_layer}")

    for module in ("native", "llama2c", "hf"):
        monkeypatch.setattr(f"xt_core.checkpoint.{module}.param_shapes", refuse)


def refused_with_peak(load_call) -> tuple[str, int]:
    """(the CheckpointError's message, peak bytes allocated while refusing)."""
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointError) as info:
            load_call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return str(info.value), peak


# ---------------------------------------------------------------------- lying headers


def test_the_452_byte_llama2c_file_is_refused_from_its_size(tmp_path, no_layer_loop):
    path = tmp_path / "bomb.bin"
    path.write_bytes(struct.pack("<7i", 8, 8, 2**31 - 1, 2, 1, 8, 16) + bytes(64))
    message, peak = refused_with_peak(lambda: import_llama2c(path))
    assert "bomb.bin" in message and "truncated" in message and len(message) < 300
    assert peak < 50 * MB, peak


def test_a_safetensors_claiming_100000_layers_is_refused_short(tmp_path, no_layer_loop):
    path = tmp_path / "deep.safetensors"
    save_file(PARAMS, str(path), metadata=metadata(config={**CFG.to_dict(), "n_layer": 100_000}))
    message, peak = refused_with_peak(lambda: load(path))
    assert "needs 900002 tensors; the file holds 20" in message and len(message) < 300
    assert peak < 50 * MB, peak


def test_hf_config_claiming_100000_layers_is_refused_before_any_shard(tmp_path, no_layer_loop):
    directory = export_hf(tmp_path / "hf", CFG, PARAMS)
    config = json.loads((directory / "config.json").read_text())
    (directory / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 100_000}))
    message, peak = refused_with_peak(lambda: import_hf(directory))
    assert "needs 900002 tensors; the file holds 20" in message and peak < 50 * MB


def test_missing_tensors_are_named_a_few_then_counted(tmp_path):
    deeper = {**CFG.to_dict(), "n_layer": 4}  # 38 tensors needed, 20 held: 18 missing
    path = tmp_path / "short.safetensors"
    save_file(PARAMS, str(path), metadata=metadata(config=deeper))
    with pytest.raises(CheckpointError, match=r"missing layers\.2\.attention\.wk, .* and 14 more$"):
        load(path)


def npy_bytes(descr: str, shape: tuple, data: bytes = b"") -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": descr, "fortran_order": False, "shape": shape})
    return buffer.getvalue() + data  # the header writer writes the magic string too


def npz_with(path, members: dict[str, bytes], strings: dict | None = None):
    """An .npz holding `members` (raw .npy bytes) beside xt's metadata and CFG's other tensors."""
    write_npz(path, {k: v for k, v in PARAMS.items() if k not in members}, strings or metadata())
    with zipfile.ZipFile(path, "a") as archive:
        for name, data in members.items():
            archive.writestr(f"{name}.npy", data)
    return path


def test_an_npz_whose_npy_header_claims_2_pow_40_values_is_refused(tmp_path):
    path = npz_with(tmp_path / "bomb.npz", {"tok_embeddings": npy_bytes("<f4", (2**40,), bytes(64))})
    message, peak = refused_with_peak(lambda: load(path))
    assert "tensor tok_embeddings has shape (1099511627776,), the config needs (20, 16)" in message
    assert peak < 50 * MB, peak


def test_an_npz_whose_config_and_npy_header_agree_on_a_huge_size_is_refused_from_the_zip_entry(tmp_path):
    huge = {**CFG.to_dict(), "vocab_size": 2**34}  # the npy header agrees; the zip entry holds 64 bytes
    members = {"tok_embeddings": npy_bytes("<f4", (2**34, 16), bytes(64))}
    path = npz_with(tmp_path / "huge.npz", members, metadata(config=huge))
    message, peak = refused_with_peak(lambda: load(path))
    assert "claims (17179869184, 16) float32" in message and peak < 50 * MB


def test_an_npz_metadata_string_claiming_a_gigabyte_is_refused(tmp_path):
    strings = metadata()
    path = write_npz(tmp_path / "meta.npz", PARAMS, {k: v for k, v in strings.items() if k != "config"})
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("__config__.npy", npy_bytes(f"<U{2**28}", (), bytes(64)))  # 1 GiB of UCS-4
    message, peak = refused_with_peak(lambda: load(path))
    assert "member __config__.npy claims () <U268435456 (1073741824 bytes)" in message and peak < 50 * MB


def test_an_npz_of_python_objects_is_refused_unread(tmp_path):
    path = tmp_path / "evil.npz"
    np.savez(path, tok_embeddings=np.array([{"a": 1}], dtype=object))
    with pytest.raises(CheckpointError, match="Python objects.*never unpickles"):
        load(path)


# ---------------------------------------------------------------------- the caller's limits


class Refused(CheckpointError):
    pass


def refuse_all(seen: list):
    def limits(cfg):
        seen.append(cfg)
        raise Refused(f"n_layer = {cfg.n_layer} is over this caller's limit")

    return limits


@pytest.mark.parametrize("kind", [".safetensors", ".npz", ".bin", "hf"])
def test_limits_run_on_the_parsed_config_before_any_tensor(tmp_path, kind, no_layer_loop):
    ckpt = Checkpoint(CFG, PARAMS, CharTokenizer("abc"), {"steps": 1})
    if kind == ".bin":
        path = xt_core.checkpoint.export_llama2c(tmp_path / "m.bin", CFG, PARAMS)
        loader = import_llama2c
    elif kind == "hf":
        path, loader = export_hf(tmp_path / "hf", CFG, PARAMS), import_hf
    else:
        path, loader = save(tmp_path / f"m{kind}", ckpt), load
    seen = []
    with pytest.raises(Refused):
        loader(path, limits=refuse_all(seen))
    assert seen == [CFG]


def test_limits_that_pass_change_nothing(tmp_path):
    path = save(tmp_path / "m.safetensors", Checkpoint(CFG, PARAMS))
    seen = []
    loaded = load(path, limits=seen.append)
    assert seen == [CFG] and loaded.params["norm"].tobytes() == PARAMS["norm"].tobytes()


# ---------------------------------------------------------------------- strict metadata

BAD_METADATA = {
    "meta examples a number": (dict(meta={"examples": 5}), "meta.examples must be a list of strings"),
    "meta examples not strings": (dict(meta={"examples": ["ok", 3]}), "meta.examples"),
    "meta a list": (dict(meta=["description"]), "meta must be an object"),
    "meta unknown key": (dict(meta={"author": "me"}), "meta.'author' is not a known key"),
    "meta steps a bool": (dict(meta={"steps": True}), "meta.steps must be a non-negative integer"),
    "meta final_loss NaN": (dict(meta='{"final_loss": NaN}'), "metadata meta is not readable JSON"),
    "tokenizer a list": (dict(tokenizer=[1]), "tokenizer must be null or an object"),
    "tokenizer a string": (dict(tokenizer="byte"), "tokenizer must be null or an object"),
    "tokenizer unknown kind": (
        dict(tokenizer={"name": "wordpiece"}),
        "tokenizer.name = 'wordpiece' is not a known kind",
    ),
    "bpe without its json": (dict(tokenizer={"name": "bpe"}), "tokenizer.tokenizer_json must be a non-empty string"),
    "bpe json garbage": (
        dict(tokenizer={"name": "bpe", "tokenizer_json": "{not json"}),
        "tokenizer.tokenizer_json is not a readable tokenizer",
    ),
    "tokenizer extra key": (dict(tokenizer={"name": "byte", "x": 1}), "tokenizer.'x' is not a known key"),
    "chars unsorted": (dict(tokenizer={"name": "char", "chars": "ba"}), "tokenizer.chars must be sorted distinct"),
    "chars repeated": (dict(tokenizer={"name": "char", "chars": "aab"}), "tokenizer.chars must be sorted distinct"),
    "chars empty": (dict(tokenizer={"name": "char", "chars": ""}), "tokenizer.chars must be a non-empty string"),
    "chars a list": (dict(tokenizer={"name": "char", "chars": ["a"]}), "tokenizer.chars must be a non-empty string"),
    "byte tokenizer, 20 tokens": (dict(tokenizer={"name": "byte"}), "tokenizer has 256 tokens, vocab_size is 20"),
    "rope_theta 1e300": (dict(config={**CFG.to_dict(), "rope_theta": 1e300}), "rope_theta = 1e+300 is outside"),
    "rope_theta 1e-300": (dict(config={**CFG.to_dict(), "rope_theta": 1e-300}), "rope_theta = 1e-300 is outside"),
    "norm_eps 1e300": (dict(config={**CFG.to_dict(), "norm_eps": 1e300}), "norm_eps = 1e+300 is outside"),
    "config unknown field": (dict(config={**CFG.to_dict(), "dropout": 0.1}), "unknown config field(s): dropout"),
    "config a list": (dict(config=[1]), "metadata config must be an object"),
    "unknown metadata key": (dict(extra="1"), "metadata key 'extra' is not one of"),
}


def bad_metadata(case) -> dict:
    fields, _ = BAD_METADATA[case]
    strings = metadata(**{k: v for k, v in fields.items() if k in ("config", "tokenizer", "meta")})
    if isinstance(fields.get("meta"), str):
        strings["meta"] = fields["meta"]
    return {**strings, **{k: v for k, v in fields.items() if k not in ("config", "tokenizer", "meta")}}


@pytest.mark.parametrize("suffix", [".safetensors", ".npz"])
@pytest.mark.parametrize("case", sorted(BAD_METADATA))
def test_bad_metadata_is_refused_naming_the_key(tmp_path, case, suffix):
    path = tmp_path / f"m{suffix}"
    strings = bad_metadata(case)
    if suffix == ".safetensors":
        save_file(PARAMS, str(path), metadata=strings)
    else:
        write_npz(path, PARAMS, strings)
    words = BAD_METADATA[case][1]
    with pytest.raises(CheckpointError, match=f"^m{suffix}: .*" + re.escape(words)):
        load(path)
    if suffix == ".safetensors":  # what a listing reads, from the header alone, refuses alike
        with pytest.raises(CheckpointError, match=re.escape(words)):
            load_metadata(path)


def test_save_refuses_a_meta_that_load_would_refuse(tmp_path):
    with pytest.raises(CheckpointError, match="meta.examples must be a list of strings"):
        save(tmp_path / "m.safetensors", Checkpoint(CFG, PARAMS, None, {"examples": "abc"}))
    assert not (tmp_path / "m.safetensors").exists()


def test_every_meta_key_the_app_and_cli_write_loads(tmp_path):
    meta = {
        "task": "induction",
        "description": "copies",
        "examples": ["abcabc"],
        "steps": 3,
        "batch": 2,
        "seed": 0,
        "lr": 0.003,
        "final_loss": 1.25,
        "imported_from": "llama2.c m.bin",
        "uploaded_as": "m.bin",
    }
    path = save(tmp_path / "m.safetensors", Checkpoint(CFG, PARAMS, CharTokenizer("\n abc"), meta))
    cfg, tokenizer, loaded = load_metadata(path)
    assert cfg == CFG and tokenizer == CharTokenizer("\n abc") and loaded == meta
