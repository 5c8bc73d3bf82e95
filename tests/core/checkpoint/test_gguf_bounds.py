"""A GGUF header that declares more than its file holds is refused before GGUFReader parses it
(xt_core/checkpoint/gguf_bounds.py): GGUFReader loops over a declared array of 2^50 items,
allocating a part per item, and grew a 125-byte file into gigabytes at `xt serve --model`."""

from __future__ import annotations

import struct
import tracemalloc

import pytest

import xt_core
from tests.helpers.gguf_files import write_llama
from xt_core.checkpoint import gguf_file
from xt_core.checkpoint.common import CheckpointError
from xt_core.checkpoint.gguf_bounds import check_gguf_header
from xt_core.checkpoint.gguf_file import import_gguf

SMALL = xt_core.Config(vocab_size=64, n_layer=1, n_head=2, n_kv_head=1, n_embd=8, ffn_hidden=12, seq_len=8)


def _string(text: bytes) -> bytes:
    return struct.pack("<Q", len(text)) + text


def _header(n_tensors: int, fields: bytes, n_fields: int = 2) -> bytes:
    architecture = _string(b"general.architecture") + struct.pack("<I", 8) + _string(b"llama")
    return b"GGUF" + struct.pack("<IQQ", 3, n_tensors, n_fields) + architecture + fields


def crafted_array_file() -> bytes:
    """The review's 125 bytes: an array of uint8 declared with 2^50 items, then the file ends."""
    body = _header(0, _string(b"llama.block_count") + struct.pack("<IIQ", 9, 0, 2**50))
    return body + b"\0" * (125 - len(body))


def _tensor_info(dims: list[int], offset: int = 0, kind: int = 0) -> bytes:
    return _string(b"token_embd.weight") + struct.pack(f"<I{len(dims)}QIQ", len(dims), *dims, kind, offset)


CASES = {
    "array items": (crafted_array_file(), "declares 1,125,899,906,842,624 items in metadata llama.block_count"),
    "string bytes": (
        _header(0, _string(b"general.name") + struct.pack("<IQ", 8, 2**40)),
        "declares 1,099,511,627,776 bytes of metadata general.name",
    ),
    "key/value pairs": (_header(0, b"", n_fields=2**60), "declares 1,152,921,504,606,846,976 key/value pairs"),
    "tensors": (_header(2**40, b"", n_fields=1), "declares 1,099,511,627,776 tensors"),
    "dims": (_header(1, struct.pack("<Q", 1) + b"x" + struct.pack("<I", 2**31) + b"\0" * 40, 1), "2147483648 dims"),
    "tensor data": (_header(1, _tensor_info([2**20, 2**20]), n_fields=1), "lie beyond the file's"),
    "nested arrays": (
        _header(0, _string(b"tokenizer.ggml.merges") + struct.pack("<IIQ", 9, 9, 2**50)),
        "declares 1,125,899,906,842,624 items in metadata tokenizer.ggml.merges",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_declared_count_beyond_the_file_is_refused_before_any_parser_allocates(tmp_path, monkeypatch, case):
    content, said = CASES[case]
    path = tmp_path / "crafted.gguf"
    path.write_bytes(content)

    def no_parsing(path):
        raise AssertionError("GGUFReader parsed a header that declares more than the file holds")

    monkeypatch.setattr(gguf_file, "open_reader", no_parsing)
    tracemalloc.start()
    try:
        with pytest.raises(
            CheckpointError, match="crafted.gguf: not a readable GGUF file: .*" + said.replace("(", ".")
        ):
            import_gguf(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64_000, f"the refusal allocated {peak:,} bytes"


def test_the_crafted_file_is_125_bytes():
    assert len(crafted_array_file()) == 125


def test_every_well_formed_file_passes_the_bounded_look(tmp_path):
    path = write_llama(tmp_path / "m.gguf", SMALL, xt_core.init_params(SMALL))
    check_gguf_header(path)
    assert import_gguf(path).cfg == SMALL
    truncated = tmp_path / "t.gguf"
    truncated.write_bytes(path.read_bytes()[:-1])  # the last tensor's data is a byte short
    with pytest.raises(CheckpointError, match="t.gguf: not a readable GGUF file: tensor .* lie beyond the file's"):
        import_gguf(truncated)
