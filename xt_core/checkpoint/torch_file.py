"""PyTorch's `torch.save` files, read without torch and without running pickled code.

Such a file is a zip: `<prefix>/data.pkl`, the saved object as a pickle, and `<prefix>/data/<key>`,
each tensor storage's raw bytes (little-endian, `<prefix>/byteorder`). A pickle is a program: the
plain `pickle.load` of a file from elsewhere runs whatever functions it names (`os.system`
included), so it is never used here. This reader's unpickler resolves only the names a tensor or a
plain container needs (ALLOWED: PyTorch's tensor-rebuilding functions, its storage types and
OrderedDict), each to a function of this module that builds a description, never to PyTorch's or
anything else; any other name is refused naming it, before anything runs. Tensors come back as
StoredTensor (storage, offset, shape, strides) and are read, one at a time, only when asked for, so
a checkpoint's optimizer state (twice the model) is never read. The same unpickler, with no name
allowed at all, reads plain pickles such as nanoGPT's meta.pkl (plain_pickle).
"""

from __future__ import annotations

import io
import math
import pickle
import re
import zipfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xt_core.checkpoint.common import CheckpointError, short

MAX_PICKLE_BYTES = 64 << 20  # data.pkl: names, shapes and containers, a few MB for a large model
_DATA_PKL = re.compile(r"[^/]+/data\.pkl")

# torch's storage type -> the dtype of its bytes (bfloat16: 16-bit words widened on read)
STORAGE_DTYPES = {
    "FloatStorage": "<f4",
    "DoubleStorage": "<f8",
    "HalfStorage": "<f2",
    "BFloat16Storage": "bfloat16",
    "LongStorage": "<i8",
    "IntStorage": "<i4",
    "ShortStorage": "<i2",
    "CharStorage": "i1",
    "ByteStorage": "u1",
    "BoolStorage": "?",
}
FLOAT_STORAGES = ("FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage")


@dataclass(frozen=True)
class StorageType:
    name: str  # "FloatStorage"

    @property
    def itemsize(self) -> int:
        return 2 if self.name == "BFloat16Storage" else np.dtype(STORAGE_DTYPES[self.name]).itemsize


@dataclass(frozen=True)
class Storage:
    key: str  # its bytes are <prefix>/data/<key>
    kind: StorageType
    numel: int


@dataclass(frozen=True)
class StoredTensor:
    """A tensor as the pickle describes it: where its entries lie in a storage."""

    storage: Storage
    offset: int
    shape: tuple[int, ...]
    stride: tuple[int, ...]

    @property
    def is_float(self) -> bool:
        return self.storage.kind.name in FLOAT_STORAGES


def _rebuild_tensor(storage, offset, shape, stride, *_ignored):
    """What torch._utils._rebuild_tensor_v2 (storage, offset, size, stride, requires_grad,
    backward_hooks[, metadata]) describes; the rest (autograd flags, hooks) is not a value."""
    ints = isinstance(offset, int) and all(isinstance(v, int) and v >= 0 for v in (*shape, *stride))
    if not isinstance(storage, Storage) or not ints or len(shape) != len(stride) or offset < 0:
        raise CheckpointError(f"a tensor record that is not (storage, offset, shape, stride): {short(shape)}")
    return StoredTensor(storage, offset, tuple(shape), tuple(stride))


def _rebuild_parameter(data, *_ignored):
    """torch._utils._rebuild_parameter(data, requires_grad, backward_hooks): the tensor itself."""
    return data


ALLOWED = {
    ("collections", "OrderedDict"): OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    **{("torch", name): StorageType(name) for name in STORAGE_DTYPES},
}


class _Unpickler(pickle.Unpickler):
    """Resolves only `allowed` names; a storage reference only as torch writes one."""

    def __init__(self, data: bytes, source: str, allowed: dict):
        super().__init__(io.BytesIO(data))
        self.source, self.allowed = source, allowed

    def find_class(self, module: str, name: str):
        found = self.allowed.get((module, name))
        if found is None:
            raise CheckpointError(
                f"{self.source}: the pickle names {short(f'{module}.{name}')}, which is not a tensor or a plain "
                "container: xt never runs code from a pickle, so it does not read this file"
            )
        return found

    def persistent_load(self, pid):
        # torch writes ("storage", storage type, key, location, numel)
        if (
            isinstance(pid, tuple)
            and len(pid) == 5
            and pid[0] == "storage"
            and isinstance(pid[1], StorageType)
            and isinstance(pid[2], str)
            and isinstance(pid[4], int)
            and pid[4] >= 0
        ):
            return Storage(pid[2], pid[1], pid[4])
        raise CheckpointError(f"{self.source}: the pickle refers to {short(pid)}, not a tensor storage")


def _unpickle(data: bytes, source: str, allowed: dict):
    try:
        return _Unpickler(data, source, allowed).load()
    except CheckpointError:
        raise
    except Exception as exc:  # a damaged pickle raises anything from EOFError to TypeError
        raise CheckpointError(
            f"{source}: not a readable pickle ({type(exc).__name__}: {short(str(exc), 120)})"
        ) from None


def plain_pickle(path: Path, source: str, max_bytes: int = MAX_PICKLE_BYTES):
    """A pickle of plain values only (dicts, lists, strings, numbers): no name is resolved."""
    size = path.stat().st_size
    if size > max_bytes:
        raise CheckpointError(f"{source}: {size} bytes, over the {max_bytes >> 20} MB a plain pickle may be")
    return _unpickle(path.read_bytes(), source, {})


class TorchFile:
    """An open torch.save zip: `obj`, the saved object with StoredTensor for every tensor, and
    read(tensor), a tensor's values as a NumPy array."""

    def __init__(self, path: Path, source: str):
        self.source = source
        try:
            self.zip = zipfile.ZipFile(path)
        except (OSError, zipfile.BadZipFile):
            raise CheckpointError(
                f"{source}: not a torch.save zip (a file saved by torch before 1.6, or with "
                "_use_new_zipfile_serialization=False, is not read: save it again with a current torch)"
            ) from None
        names = [info for info in self.zip.infolist() if _DATA_PKL.fullmatch(info.filename)]
        if len(names) != 1:
            raise CheckpointError(f"{source}: a torch.save zip holds one <name>/data.pkl; this one holds {len(names)}")
        self.prefix = names[0].filename.rsplit("/", 1)[0]
        byteorder = f"{self.prefix}/byteorder"
        if byteorder in self.zip.namelist() and self.zip.read(byteorder).strip() not in (b"little", b""):
            raise CheckpointError(f"{source}: its tensors are stored big-endian; xt reads little-endian files")
        if names[0].file_size > MAX_PICKLE_BYTES:
            raise CheckpointError(f"{source}: data.pkl is {names[0].file_size} bytes, over {MAX_PICKLE_BYTES >> 20} MB")
        self.obj = _unpickle(self.zip.read(names[0]), source, ALLOWED)

    def read(self, tensor: StoredTensor, name: str) -> np.ndarray:
        """The tensor's values (float storages as float32 or float64, as stored; bf16/f16 widened
        to float32), a fresh C-contiguous array."""
        storage = tensor.storage
        member = f"{self.prefix}/data/{storage.key}"
        try:
            info = self.zip.getinfo(member)
        except KeyError:
            raise CheckpointError(f"{self.source}: tensor {name}'s storage {short(storage.key)} is missing") from None
        if info.file_size != storage.numel * storage.kind.itemsize:
            raise CheckpointError(
                f"{self.source}: tensor {name}'s storage holds {info.file_size} bytes, not the "
                f"{storage.numel} × {storage.kind.itemsize} its record says"
            )
        last = tensor.offset + sum((n - 1) * s for n, s in zip(tensor.shape, tensor.stride, strict=True) if n)
        if any(n == 0 for n in tensor.shape):
            return np.zeros(tensor.shape, dtype=np.float32)
        if last >= storage.numel:
            raise CheckpointError(f"{self.source}: tensor {name} reaches past its storage ({storage.numel} entries)")
        if storage.numel > 2 * math.prod(tensor.shape) + 1024:  # a zip member may inflate far beyond the file
            raise CheckpointError(
                f"{self.source}: tensor {name} is a view of {math.prod(tensor.shape)} entries into a storage of "
                f"{storage.numel}: xt reads a tensor from a storage of about its own size"
            )
        flat = _values(self.zip.read(info), storage.kind.name)
        itemsize = flat.dtype.itemsize
        view = np.lib.stride_tricks.as_strided(
            flat[tensor.offset :], tensor.shape, tuple(s * itemsize for s in tensor.stride), writeable=False
        )
        return np.array(view, order="C")

    def close(self) -> None:
        self.zip.close()


def _values(raw: bytes, kind: str) -> np.ndarray:
    if kind == "BFloat16Storage":  # the high half of a float32: widening is exact
        return (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
    values = np.frombuffer(raw, dtype=STORAGE_DTYPES[kind])
    return values.astype(np.float32) if kind == "HalfStorage" else values
