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
    view), and it rebuilds gguf's tensor-name map, a pure function of (architecture, layers),
    once per parameter (~400 times for SmolLM2). Loading SmolLM2 took 16 s, 7 s with both."""
    import gguf

    from xt_core.checkpoint.gguf_file import plain_array_reader

    name_map = functools.cache(gguf.get_tensor_name_map)
    with (
        mock.patch.object(gguf, "GGUFReader", plain_array_reader()),
        mock.patch.object(gguf, "get_tensor_name_map", name_map),
    ):
        yield
