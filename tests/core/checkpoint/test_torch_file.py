"""torch.save files and plain pickles are read without running pickled code: a pickle naming any
function but a tensor's rebuilding or OrderedDict is refused naming it, before anything runs; a
file that is no torch.save zip, or lies about its tensors, is refused naming what is wrong. Needs
no torch: the files are written here by hand (tests/core/checkpoint/test_gpt2_files.py reads
files torch wrote)."""

from __future__ import annotations

import os
import pickle
import zipfile

import numpy as np
import pytest

from xt_core.checkpoint import CheckpointError
from xt_core.checkpoint.formats import recognise
from xt_core.checkpoint.torch_file import TorchFile, plain_pickle

CALLS: list = []


def record_call(*args):
    """What a malicious pickle would run: it must never be called."""
    CALLS.append(args)
    return {}


class Malicious:
    def __init__(self, function, *args):
        self.function, self.args = function, args

    def __reduce__(self):
        return self.function, self.args


def torch_zip(path, obj_pickle: bytes, storages: dict[str, bytes] | None = None):
    """A zip laid out as torch.save writes it: <stem>/data.pkl, <stem>/data/<key>, byteorder."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{path.stem}/data.pkl", obj_pickle)
        z.writestr(f"{path.stem}/byteorder", b"little")
        for key, raw in (storages or {}).items():
            z.writestr(f"{path.stem}/data/{key}", raw)
    return path


@pytest.mark.parametrize(
    "payload,named",
    [
        (lambda marker: Malicious(os.system, f"touch {marker}"), r"'(posix|nt)\.system'"),
        (
            lambda marker: Malicious(record_call, str(marker)),
            r"'tests\.core\.checkpoint\.test_torch_file\.record_call'",
        ),
        (lambda marker: {"model": Malicious(eval, f"open({str(marker)!r}, 'w')")}, r"'(__builtin__|builtins)\.eval'"),
        (lambda marker: [Malicious(exec, f"open({str(marker)!r}, 'w')")], r"'(__builtin__|builtins)\.exec'"),
    ],
)
def test_a_malicious_pickle_is_refused_and_nothing_runs(tmp_path, payload, named):
    marker = tmp_path / "ran"
    data = pickle.dumps(payload(marker), protocol=2)
    for path in (torch_zip(tmp_path / "ckpt.pt", data), tmp_path / "meta.pkl"):
        if path.suffix == ".pkl":
            path.write_bytes(data)
            with pytest.raises(CheckpointError, match=f"names {named}.*never runs code"):
                plain_pickle(path, path.name)
        else:
            with pytest.raises(CheckpointError, match=f"names {named}.*never runs code"):
                recognise(path).read(path)
    assert not marker.exists() and CALLS == []


def test_a_plain_pickle_resolves_no_name_at_all(tmp_path):
    from collections import OrderedDict

    path = tmp_path / "meta.pkl"
    path.write_bytes(pickle.dumps({"stoi": OrderedDict(a=0)}))  # harmless, but a name all the same
    with pytest.raises(CheckpointError, match="names 'collections.OrderedDict'"):
        plain_pickle(path, path.name)
    path.write_bytes(pickle.dumps({"vocab_size": 2, "itos": {0: "a", 1: "b"}, "stoi": {"a": 0, "b": 1}}))
    assert plain_pickle(path, path.name)["itos"] == {0: "a", 1: "b"}


class _Global:
    """pickle's GLOBAL of a name, without importing it: a tensor record as torch writes one."""

    def __init__(self, module, name):
        self.module, self.name = module, name


def tensor_pickle(key: str, storage: str, numel: int, offset: int, shape, stride) -> bytes:
    """Protocol 2 opcodes of {"w": _rebuild_tensor_v2(storage, offset, shape, stride, False, OrderedDict())}
    with the storage as torch's persistent id, written by hand (no torch here)."""

    def global_(module, name):
        return b"c" + module.encode() + b"\n" + name.encode() + b"\n"

    def tuple_of(items: bytes) -> bytes:
        return b"(" + items + b"t"

    def ints(values) -> bytes:
        return b"".join(b"J" + int(v).to_bytes(4, "little", signed=True) for v in values)

    def text(s: str) -> bytes:
        return b"X" + len(s.encode()).to_bytes(4, "little") + s.encode()

    pid = tuple_of(text("storage") + global_("torch", storage) + text(key) + text("cpu") + ints([numel]))
    hooks = global_("collections", "OrderedDict") + b")R"
    args = tuple_of(pid + b"Q" + ints([offset]) + tuple_of(ints(shape)) + tuple_of(ints(stride)) + b"\x89" + hooks)
    return b"\x80\x02}" + text("w") + global_("torch._utils", "_rebuild_tensor_v2") + args + b"Rs."


def test_a_hand_written_torch_file_reads_its_strided_tensor(tmp_path):
    values = np.arange(12, dtype="<f4")
    path = torch_zip(
        tmp_path / "m.pt", tensor_pickle("0", "FloatStorage", 12, 2, (2, 3), (1, 2)), {"0": values.tobytes()}
    )
    stored = TorchFile(path, path.name)
    expected = [[values[2 + i + 2 * j] for j in range(3)] for i in range(2)]  # offset 2, strides (1, 2)
    np.testing.assert_array_equal(stored.read(stored.obj["w"], "w"), expected)


@pytest.mark.parametrize(
    "numel,offset,shape,stride,raw,refusal",
    [
        (12, 0, (4, 4), (4, 1), 48, "reaches past its storage"),
        (12, 0, (3, 4), (4, 1), 40, "holds 40 bytes, not the 12 × 4"),
        (4096, 0, (2, 2), (2, 1), 4096 * 4, "a view of 4 entries into a storage of 4096"),
    ],
)
def test_a_tensor_record_that_lies_about_its_storage_is_refused(tmp_path, numel, offset, shape, stride, raw, refusal):
    path = torch_zip(
        tmp_path / "m.pt", tensor_pickle("0", "FloatStorage", numel, offset, shape, stride), {"0": bytes(raw)}
    )
    stored = TorchFile(path, path.name)
    with pytest.raises(CheckpointError, match=refusal):
        stored.read(stored.obj["w"], "w")


def test_what_is_not_a_torch_zip_is_refused(tmp_path):
    legacy = tmp_path / "old.pt"
    legacy.write_bytes(pickle.dumps({"model": {}}))  # torch < 1.6's format starts with a pickle
    with pytest.raises(CheckpointError, match="not a torch.save zip"):
        recognise(legacy).read(legacy)
    not_nanogpt = torch_zip(tmp_path / "other.pt", pickle.dumps({"state_dict": {}}))
    with pytest.raises(CheckpointError, match="not a nanoGPT checkpoint"):
        recognise(not_nanogpt).read(not_nanogpt)
