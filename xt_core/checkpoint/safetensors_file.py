"""Reading a .safetensors file header first: 8 bytes (little-endian u64 n), n bytes of JSON
({name: {dtype, shape, data_offsets}}, "__metadata__": {str: str}), then the raw data.

Every entry is checked against the file's size before any tensor is read, and tensors are
then read one at a time. Done by hand because the safetensors package hands NumPy neither
bfloat16 nor one tensor's header without reading the tensor; writing stays with the package.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xt_core.checkpoint.common import CheckpointError, short

MAX_HEADER_BYTES = 100 << 20  # the format's own bound on the JSON header
STORED = {"F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "BF16": np.dtype("<u2")}


@dataclass(frozen=True)
class Entry:
    dtype: str  # the file's name for it: F64, F32, F16 or BF16
    shape: tuple[int, ...]
    start: int  # absolute byte offset of the data in the file
    nbytes: int


@dataclass(frozen=True)
class Header:
    path: Path
    metadata: dict[str, str]
    entries: dict[str, Entry]


def read_header(path: Path, source: str) -> Header:
    def unreadable(why: str):
        return CheckpointError(f"{source}: not a readable safetensors file ({why})")

    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            n = int.from_bytes(f.read(8), "little")
            if size < 8 or n > min(size - 8, MAX_HEADER_BYTES):
                raise unreadable(f"the header claims {n} bytes; the file has {size}")
            text = f.read(n)
    except OSError as exc:
        raise unreadable(str(exc)) from None
    try:
        header = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise unreadable(f"header is not JSON: {short(str(exc))}") from None
    if not isinstance(header, dict):
        raise unreadable("header is not an object")
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise unreadable("__metadata__ is not an object of strings")
    entries = {name: _entry(name, info, 8 + n, size - 8 - n, unreadable) for name, info in header.items()}
    return Header(path, metadata, entries)


def _entry(name: str, info, data_start: int, data_size: int, unreadable) -> Entry:
    if not isinstance(info, dict):
        raise unreadable(f"entry {short(name)} is not an object")
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if dtype not in STORED:
        raise unreadable(f"tensor {short(name)} has dtype {short(dtype)}; xt reads {', '.join(STORED)}")
    if not isinstance(shape, list) or not all(_is_index(d) for d in shape):
        raise unreadable(f"tensor {short(name)} has shape {short(shape)}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_index(o) for o in offsets)):
        raise unreadable(f"tensor {short(name)} has data_offsets {short(offsets)}")
    begin, end = offsets
    nbytes = math.prod(shape) * STORED[dtype].itemsize
    if not begin <= end <= data_size or end - begin != nbytes:
        raise unreadable(
            f"tensor {short(name)}: {dtype} {tuple(shape)} needs {nbytes} bytes, its offsets {offsets} hold "
            f"{end - begin} of the file's {data_size}"
        )
    return Entry(dtype, tuple(shape), data_start + begin, nbytes)


def _is_index(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def read_tensor(f, entry: Entry, dtype, source: str, name: str) -> np.ndarray:
    """One tensor from an open file, as `dtype` (bfloat16: its 16 bits are float32's upper half)."""
    f.seek(entry.start)
    raw = f.read(entry.nbytes)
    if len(raw) != entry.nbytes:
        raise CheckpointError(f"{source}: tensor {name} is cut short (the file changed while it was read?)")
    stored = np.frombuffer(raw, STORED[entry.dtype]).reshape(entry.shape)
    if entry.dtype == "BF16":
        stored = (stored.astype("<u4") << 16).view("<f4")
    return stored.astype(dtype)


_DTYPE_NAMES = {np.dtype(np.float32): "F32", np.dtype(np.float64): "F64"}


def write_file(path, arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> None:
    """A .safetensors file with its header written in a fixed order (metadata keys and tensor
    names sorted): the same checkpoint gives the same bytes (`make demo-models` reproduces the
    shipped files bit for bit; the safetensors package orders the header differently each run)."""
    header: dict = {"__metadata__": dict(sorted(metadata.items()))}
    offset = 0
    for name in sorted(arrays):
        array = arrays[name]
        end = offset + array.nbytes
        header[name] = {"dtype": _DTYPE_NAMES[array.dtype], "shape": list(array.shape), "data_offsets": [offset, end]}
        offset = end
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)  # the data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        for name in sorted(arrays):
            f.write(np.ascontiguousarray(arrays[name]).astype(arrays[name].dtype.newbyteorder("<")).tobytes())
