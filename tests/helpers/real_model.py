"""Where the tests find the fetched SmolLM2-135M (`xt models fetch smollm2-135m`): the path, or
a skip that says how to get it, a failure instead where CI requires it (XT_REQUIRE_REAL_MODEL)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.env import required
from xt_core.zoo import ZOO, default_models_dir

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
