"""xt's own checkpoints: .safetensors or .npz holding the parameters under xt's names, and
the config, tokenizer and meta as JSON strings (metadata.py). Float32 or float64, kept.

Loading reads headers before data: the metadata (config, then the caller's limits), the
tensor count, every name, dtype and shape, and only then the arrays. Nothing ever
unpickles: an .npz member holding Python objects is refused from its npy header.
"""

from __future__ import annotations

import math
import zipfile
import zlib
from pathlib import Path

import numpy as np

from xt_core.checkpoint.common import (
    Checkpoint,
    CheckpointError,
    Header,
    Limits,
    check_count,
    check_finite,
    check_names,
    short,
)
from xt_core.checkpoint.metadata import metadata_strings, parse_metadata
from xt_core.checkpoint.safetensors_file import read_header, read_tensor, write_file
from xt_core.model import FLOAT_DTYPES, param_shapes

MAX_METADATA_CHARS = 1 << 20  # one .npz metadata string; xt writes a few kB
# What a corrupt zip or npy header raises (zlib: bad deflate data; NotImplementedError: an
# unknown compression method).
_ZIP_ERRORS = (OSError, EOFError, ValueError, zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, zlib.error)


def save(path, ckpt: Checkpoint) -> Path:
    """Writes `.safetensors` or `.npz` by suffix."""
    path = Path(path)
    if path.suffix not in (".safetensors", ".npz"):
        raise CheckpointError(f"unknown checkpoint suffix {path.suffix!r}: use .safetensors or .npz")
    metadata = metadata_strings(ckpt.cfg, ckpt.tokenizer, ckpt.meta)
    arrays = {k: np.ascontiguousarray(v) for k, v in ckpt.params.items()}
    if path.suffix == ".safetensors":
        write_file(path, arrays, metadata)
    else:
        extras = {f"__{k}__": np.array(v) for k, v in metadata.items()}
        with open(path, "wb") as f:
            np.savez(f, **arrays, **extras)
    return path


def load(path, limits: Limits | None = None) -> Checkpoint:
    """An xt `.safetensors` or `.npz` checkpoint. `limits(cfg)` runs before any tensor is read."""
    path = Path(path)
    if path.suffix == ".safetensors":
        return _load_safetensors(path, limits)
    if path.suffix == ".npz":
        return _load_npz(path, limits)
    raise CheckpointError(f"{path.name}: unknown checkpoint suffix {path.suffix!r}: use .safetensors or .npz")


def load_metadata(path, limits: Limits | None = None):
    """(cfg, tokenizer, meta) of an xt .safetensors checkpoint from its header alone, checked
    as strictly as `load` checks them: what a listing may show without reading weights."""
    path = Path(path)
    return parse_metadata(read_header(path, path.name).metadata, path.name, limits)


def checkpoint_header(path, limits: Limits | None = None) -> Header:
    """The xt row of xt_core.checkpoint.formats: a .safetensors' metadata from its header alone
    (the tensors are read by checkpoint()), an .npz read whole (its metadata are zip members)."""
    path = Path(path)
    if path.suffix != ".safetensors":
        return Header.holding(load(path, limits))
    cfg, tokenizer, meta = load_metadata(path, limits)
    return Header(cfg, tokenizer, meta, lambda: load(path, limits))


def _load_safetensors(path: Path, limits: Limits | None) -> Checkpoint:
    source = path.name
    header = read_header(path, source)
    cfg, tokenizer, meta = parse_metadata(header.metadata, source, limits)
    check_count(cfg, len(header.entries), source)
    shapes = param_shapes(cfg)
    check_names(shapes, header.entries, source)
    for name, shape in shapes.items():
        entry = header.entries[name]
        _check_tensor(name, entry.shape, shape, entry.dtype in ("F32", "F64"), entry.dtype, source)
    params = {}
    with open(path, "rb") as f:
        for name in shapes:
            entry = header.entries[name]
            dtype = np.float64 if entry.dtype == "F64" else np.float32
            params[name] = check_finite(name, read_tensor(f, entry, dtype, source, name), source)
    return Checkpoint(cfg, params, tokenizer, meta)


def _check_tensor(name, shape, needed, dtype_ok: bool, dtype, source: str) -> None:
    if tuple(shape) != needed:
        raise CheckpointError(f"{source}: tensor {name} has shape {tuple(shape)}, the config needs {needed}")
    if not dtype_ok:
        raise CheckpointError(f"{source}: tensor {name} has dtype {dtype}; float32 or float64 expected")


# ---------------------------------------------------------------------- .npz


def _load_npz(path: Path, limits: Limits | None) -> Checkpoint:
    source = path.name
    try:
        with zipfile.ZipFile(path) as archive:
            members = {info.filename.removesuffix(".npy"): info for info in archive.infolist()}
            headers = {name: _member_header(archive, info, source) for name, info in members.items()}  # no pickles
            keys = [name for name in members if name.startswith("__") and name.endswith("__")]
            strings = {key[2:-2]: _read_string(archive, members.pop(key), source) for key in keys}
            cfg, tokenizer, meta = parse_metadata(strings, source, limits)
            check_count(cfg, len(members), source)
            shapes = param_shapes(cfg)
            check_names(shapes, members, source)
            for name, shape in shapes.items():  # every header before any array
                stored, dtype, _ = headers[name]
                _check_tensor(name, stored, shape, dtype in FLOAT_DTYPES, dtype, source)
            params = {name: check_finite(name, _read_array(archive, members[name], source), source) for name in shapes}
    except CheckpointError:
        raise
    except _ZIP_ERRORS as exc:
        raise CheckpointError(f"{source}: not a readable .npz file ({short(str(exc), 120)})") from None
    return Checkpoint(cfg, params, tokenizer, meta)


def _member_header(archive, info, source: str):
    with archive.open(info) as fp:
        return _npy_header(fp, info.filename, source)


def _npy_header(fp, name: str, source: str):
    """(shape, dtype, fortran_order) from an open .npy member, which is left at its data."""
    version = np.lib.format.read_magic(fp)
    read = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}.get(version)
    if read is None:
        raise CheckpointError(f"{source}: member {name} has npy format version {version}; xt reads 1.0 and 2.0")
    try:
        shape, fortran, dtype = read(fp)
    except ValueError as exc:
        raise CheckpointError(f"{source}: not a readable .npz file (member {name}: {short(str(exc))})") from None
    if dtype.hasobject:
        raise CheckpointError(
            f"{source}: not a readable .npz file: member {name} holds Python objects, which only unpickling could "
            "load; xt never unpickles"
        )
    return shape, dtype, fortran


def _read_array(archive, info, source: str, max_bytes: int | None = None) -> np.ndarray:
    """One member's array; the size its npy header claims is checked against its zip entry
    (and `max_bytes`) before anything that size is allocated."""
    with archive.open(info) as fp:
        shape, dtype, fortran = _npy_header(fp, info.filename, source)
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes > info.file_size or (max_bytes is not None and nbytes > max_bytes):
            raise CheckpointError(
                f"{source}: member {info.filename} claims {shape} {dtype} ({nbytes} bytes); the archive holds "
                f"{info.file_size} bytes for it" + ("" if max_bytes is None else f" and allows {max_bytes}")
            )
        raw = fp.read(nbytes)
    if len(raw) != nbytes:
        raise CheckpointError(f"{source}: member {info.filename} is truncated ({len(raw)} of {nbytes} bytes)")
    array = np.frombuffer(raw, dtype).reshape(shape, order="F" if fortran else "C")
    return np.array(array, dtype=dtype.newbyteorder("="), order="C")  # a writable copy in native byte order


def _read_string(archive, info, source: str) -> str:
    """A metadata member: a 0-d unicode array (np.array(str)) of at most MAX_METADATA_CHARS."""
    shape, dtype, _ = _member_header(archive, info, source)
    if shape != () or dtype.kind != "U":
        raise CheckpointError(f"{source}: metadata member {info.filename} is {shape} {dtype}, not a string")
    return str(_read_array(archive, info, source, max_bytes=4 * MAX_METADATA_CHARS)[()])
