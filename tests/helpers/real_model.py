"""Where the tests find the fetched SmolLM2-135M (`xt models fetch smollm2-135m`): the path, or
a skip that says how to get it, a failure instead where CI requires it (XT_REQUIRE_REAL_MODEL)."""

from __future__ import annotations

import functools
import os
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import pytest

from tests.helpers.env import required
from xt_core.checkpoint.zoo import ZOO, default_models_dir

SMOLLM2 = "smollm2-135m"


def smollm2_gguf() -> Path:
    """XT_SMOLLM2_GGUF, else the models directory's file."""
    return Path(os.environ.get("XT_SMOLLM2_GGUF") or default_models_dir() / ZOO[SMOLLM2].filename)


def skip_or_fail(reason: str, allow_module_level: bool = False):
    if required("XT_REQUIRE_REAL_MODEL"):
        pytest.fail(f"XT_REQUIRE_REAL_MODEL is set but {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=allow_module_level)


def require_smollm2(allow_module_level: bool = False) -> Path:
    """The file's path; skips (fails under XT_REQUIRE_REAL_MODEL) when it is absent."""
    path = smollm2_gguf()
    if not path.is_file():
        skip_or_fail(f"{path} is absent: run `xt models fetch {SMOLLM2}` (or `make real-model`)", allow_module_level)
    return path


def link_smollm2(models_dir: Path) -> Path:
    """The fetched file linked into `models_dir` under the name `xt models fetch` gives it (skips
    or fails as require_smollm2 when it is absent); the link's path."""
    link = Path(models_dir) / ZOO[SMOLLM2].filename
    link.symlink_to(require_smollm2().resolve())
    return link


@contextmanager
def transformers_reads_gguf_quickly():
    """transformers' GGUF loading, sped up without changing what it computes: its GGUFReader
    parses the header over np.memmap slices (xt's reader: the same bytes through a plain ndarray
    view), it parses the same file again for the config, the weights and the tokenizer (one
    parse here: read_only_once), and it rebuilds gguf's tensor-name map, a pure function of
    (architecture, layers), once per parameter (~400 times for SmolLM2). Loading SmolLM2 took
    16 s, 7 s with the plain reader and the map built once."""
    import gguf

    name_map = functools.cache(gguf.get_tensor_name_map)
    with (
        mock.patch.object(gguf, "GGUFReader", read_only_once),
        mock.patch.object(gguf, "get_tensor_name_map", name_map),
    ):
        yield


def read_only_once(path, mode: str = "r"):
    """The file's GGUFReader (xt's plain-array one), parsed once for as long as the file is
    unchanged: transformers only reads the reader's fields and tensors (never writes them), and
    SmolLM2's ~98k vocabulary strings take seconds to parse each time."""
    if mode != "r":
        raise ValueError("only read-only readers are shared")
    stat = Path(path).stat()
    return _reader(str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=1)  # the latest file: SmolLM2 across its tests, never every tiny file
def _reader(path: str, size: int, mtime_ns: int):
    from xt_core.checkpoint.gguf_file import open_reader

    return open_reader(path)
