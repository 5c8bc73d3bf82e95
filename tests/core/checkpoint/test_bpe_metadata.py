"""A byte-level BPE tokenizer (a GGUF's) travels in xt's own checkpoint metadata, and a GGUF's
header alone gives what a model listing needs (config and tokenizer, no weight read)."""

from __future__ import annotations

import numpy as np

import xt_core
from tests.helpers.gguf_files import write_llama
from xt_core.checkpoint import Checkpoint, load, load_metadata, save
from xt_core.checkpoint.gguf_file import import_gguf, read_gguf_header

CFG = xt_core.Config(vocab_size=600, n_layer=1, n_head=2, n_kv_head=1, n_embd=8, ffn_hidden=12, seq_len=16)
TEXT = "the world in 12 worlds, the café"


def test_a_bpe_tokenizer_round_trips_through_an_xt_checkpoint(tmp_path):
    ckpt = import_gguf(write_llama(tmp_path / "m.gguf", CFG, xt_core.init_params(CFG, seed=1), tokenizer=True))
    kept = Checkpoint(ckpt.cfg, ckpt.params, ckpt.tokenizer, {"imported_from": ckpt.meta["imported_from"]})
    path = save(tmp_path / "m.safetensors", kept)
    loaded = load(path)
    assert loaded.tokenizer.name == "bpe" and loaded.tokenizer.encode(TEXT) == ckpt.tokenizer.encode(TEXT)
    assert loaded.tokenizer.pieces(loaded.tokenizer.encode(TEXT)) == ckpt.tokenizer.pieces(ckpt.tokenizer.encode(TEXT))
    assert load_metadata(path)[1].name == "bpe"


def test_the_header_gives_the_config_and_tokenizer_without_the_weights(tmp_path):
    path = write_llama(tmp_path / "m.gguf", CFG, xt_core.init_params(CFG, seed=1), tokenizer=True)
    header = read_gguf_header(path)
    full = import_gguf(path)
    assert header.cfg == full.cfg and header.tokenizer.encode(TEXT) == full.tokenizer.encode(TEXT)
    assert header.meta == full.meta
    data = bytearray(path.read_bytes())
    data[-64:] = np.full(64, 0xFF, dtype=np.uint8).tobytes()  # NaN in the last weight: the header does not care
    path.write_bytes(bytes(data))
    assert read_gguf_header(path).cfg == header.cfg
