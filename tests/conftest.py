import os

import numpy as np
import pytest

import xt_core


def required(flag: str) -> bool:
    """CI sets XT_REQUIRE_TORCH / XT_REQUIRE_BROWSER: there a missing optional tool fails
    the run instead of silently skipping the checks that need it."""
    return os.environ.get(flag, "") not in ("", "0")


def make_batch(cfg: xt_core.Config, n_seq: int, T: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, cfg.vocab_size, size=(n_seq, T + 1))
    return ids[:, :-1], ids[:, 1:]


@pytest.fixture
def tiny():
    return xt_core.PRESETS["tiny"]
