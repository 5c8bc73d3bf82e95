"""A bounded look at a GGUF header before the gguf package's GGUFReader parses it.

GGUFReader allocates while it parses: a field list per declared key, a part per declared array
item, a view per declared tensor. A crafted file of 125 bytes that declares an array of 2^50
items makes it loop and grow without end (~80 MB/s). This walk reads the same header with
`struct` over the file's bytes and allocates nothing per item: every declared count (tensors,
key/value pairs, array items, string lengths, tensor dims) is checked against the bytes left in
the file before it is read, each item counting at least its smallest size (a string its 8-byte
length, an array its 12-byte type and count), so the walk takes at most one step per byte of the
file. A tensor's data (its offset and size) must lie inside the file too.

check_gguf_header(path) raises CheckpointError naming what is declared and what the file holds.
"""

from __future__ import annotations

import mmap
import struct
from pathlib import Path

from xt_core.checkpoint.common import CheckpointError

_MAGIC = b"GGUF"
_VERSIONS = (2, 3)
_MAX_DIMS = 4  # ggml's GGML_MAX_DIMS
_STRING, _ARRAY = 8, 9
# GGUFValueType -> its size in bytes (the fixed-size ones)
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_SMALLEST = {**_FIXED, _STRING: 8, _ARRAY: 12}  # an item's fewest bytes


class _Walk:
    """The header's bytes, read forward with every length checked first."""

    def __init__(self, data, order: str):
        self.data, self.order, self.at = data, order, 0

    def left(self) -> int:
        return len(self.data) - self.at

    def take(self, nbytes: int, what: str) -> int:
        if nbytes > self.left():
            raise CheckpointError(
                f"not a readable GGUF file: {what} needs {nbytes} bytes at offset {self.at}, "
                f"the file has {self.left()} left"
            )
        start, self.at = self.at, self.at + nbytes
        return start

    def number(self, fmt: str, what: str) -> int:
        return struct.unpack_from(self.order + fmt, self.data, self.take(struct.calcsize(fmt), what))[0]

    def count(self, what: str, each: int) -> int:
        """A declared count of items of at least `each` bytes, refused when the file cannot hold them."""
        declared = self.number("Q", what)
        if declared * each > self.left():
            raise CheckpointError(
                f"not a readable GGUF file: it declares {declared:,} {what}, "
                f"but {self.left():,} bytes are left (each takes at least {each})"
            )
        return declared

    def string(self, what: str) -> str:
        n = self.count(f"bytes of {what}", 1)
        return bytes(self.data[self.take(n, what) : self.at]).decode("utf-8", "replace")

    def value(self, kind: int, what: str) -> None:
        if kind in _FIXED:
            self.take(_FIXED[kind], what)
        elif kind == _STRING:
            self.string(what)
        elif kind == _ARRAY:
            item = self.number("I", what)
            if item not in _SMALLEST:
                raise CheckpointError(f"not a readable GGUF file: {what} is an array of unknown type {item}")
            n = self.count(f"items in {what}", _SMALLEST[item])
            if item in _FIXED:
                self.take(n * _FIXED[item], what)
            else:
                for _ in range(n):
                    self.value(item, what)
        else:
            raise CheckpointError(f"not a readable GGUF file: {what} has unknown type {kind}")


def _shown(key: str) -> str:
    return key if len(key) <= 80 else key[:77] + "..."


def _tensor(walk: _Walk, index: int, sizes: dict) -> tuple[int, int]:
    """(offset, bytes) of tensor `index`'s data, relative to the data section."""
    walk.string(f"tensor {index}'s name")
    n_dims = walk.number("I", f"tensor {index}'s dims")
    if not 1 <= n_dims <= _MAX_DIMS:
        raise CheckpointError(f"not a readable GGUF file: tensor {index} declares {n_dims} dims (1 to {_MAX_DIMS})")
    elements = 1
    for _ in range(n_dims):
        elements *= walk.number("Q", f"tensor {index}'s shape")
    kind = walk.number("I", f"tensor {index}'s type")
    offset = walk.number("Q", f"tensor {index}'s offset")
    block, nbytes = sizes.get(kind, (1, 0))
    if kind not in sizes:
        raise CheckpointError(f"not a readable GGUF file: tensor {index} has unknown type {kind}")
    return offset, -(-elements // block) * nbytes


def _walk_header(data) -> None:
    if bytes(data[:4]) != _MAGIC:
        raise CheckpointError("not a readable GGUF file: its first bytes are not GGUF")
    walk = _Walk(data, "<")
    walk.take(4, "the magic")
    version = walk.number("I", "the version")
    if version & 0xFFFF == 0:  # written on a machine of the other byte order (as GGUFReader reads it)
        walk.order, version = ">", struct.unpack(">I", struct.pack("<I", version))[0]
    if version not in _VERSIONS:
        raise CheckpointError(f"not a readable GGUF file: version {version} (xt reads {_VERSIONS})")
    n_tensors = walk.number("Q", "the tensor count")
    n_fields = walk.count("key/value pairs", 8 + 4 + 1)  # a key's length, the value's type, one byte
    if n_tensors * (8 + 4 + 8 + 4 + 8) > walk.left():  # name length, dims, one dim, type, offset
        raise CheckpointError(
            f"not a readable GGUF file: it declares {n_tensors:,} tensors, but {walk.left():,} bytes are left"
        )
    for i in range(n_fields):
        key = _shown(walk.string(f"key {i}"))
        walk.value(walk.number("I", f"metadata {key}'s type"), f"metadata {key}")
    from gguf import GGML_QUANT_SIZES

    sizes = {int(kind): (int(block), int(nbytes)) for kind, (block, nbytes) in GGML_QUANT_SIZES.items()}
    extents = [_tensor(walk, i, sizes) for i in range(n_tensors)]
    data_start = walk.at + (-walk.at % 32)  # the default alignment; a larger one only moves it on
    for i, (offset, nbytes) in enumerate(extents):
        if data_start + offset + nbytes > len(data):
            raise CheckpointError(
                f"not a readable GGUF file: tensor {i}'s {nbytes:,} bytes at offset {offset:,} "
                f"lie beyond the file's {len(data):,} bytes"
            )


def check_gguf_header(path: Path) -> None:
    """Refuses (CheckpointError) a file whose header declares more than it holds, before any
    parser allocates for it (the module's docstring)."""
    try:
        with open(path, "rb") as file:
            if file.seek(0, 2) == 0:
                raise CheckpointError("not a readable GGUF file: it is empty")
            with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
                _walk_header(data)
    except OSError as exc:
        raise CheckpointError(f"cannot read ({exc.strerror})") from None
