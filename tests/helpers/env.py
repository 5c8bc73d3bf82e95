"""What the environment asks of a test run: optional tools that must not skip (CI), and the
long versions of the system tests (`make loadtest`)."""

from __future__ import annotations

import importlib.util
import os

import pytest


def required(flag: str) -> bool:
    """CI sets XT_REQUIRE_TORCH / XT_REQUIRE_BROWSER: there a missing optional tool fails
    the run instead of silently skipping the checks that need it."""
    return os.environ.get(flag, "") not in ("", "0")


def long_run() -> bool:
    """XT_LONG_TESTS=1 (`make test-long`, `make loadtest`): the tests marked long run too (sweeps
    and system tests past `make test`'s budget); `make test` skips them."""
    return required("XT_LONG_TESTS")


def sized(short, long):
    """`long` under XT_LOADTEST=1 (`make loadtest`), else `short`: one size, two run lengths.
    Not XT_LONG_TESTS: `make test-long` runs the tests marked long at their short sizes."""
    return long if required("XT_LOADTEST") else short


def skip_unless_installed(*modules: str, hint: str) -> None:
    """Skips the calling test module unless every module is installed, failing instead under
    XT_REQUIRE_TORCH (CI). Finds them without importing them: torch and transformers take
    seconds to import, and every xdist worker collects every test module; a module that needs
    them imports them in a module-scoped fixture."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing and required("XT_REQUIRE_TORCH"):
        raise RuntimeError(f"XT_REQUIRE_TORCH is set but {', '.join(missing)} is not installed: {hint}")
    if missing:
        pytest.skip(f"{', '.join(missing)} is not installed ({hint})", allow_module_level=True)


# A float32 number measured when a shipped checkpoint was made, recomputed on a machine whose BLAS
# kernels differ (OpenBLAS picks them by CPU, and a machine may pin them): the same to this
# relative round-off, not to the bit.
KERNEL_ROUNDOFF = 1e-6
