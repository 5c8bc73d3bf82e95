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


TORCH_HINT = "optional extra: pip install torch==2.13.0"


def imported_when_run(**names: str):
    """A module-scoped autouse fixture (assign it to a name in the test module) that imports each
    name="module" or name="module:attribute" into the module's globals once its tests run (its
    skip_unless_installed found them without importing them)."""

    @pytest.fixture(autouse=True, scope="module")
    def imported(request):
        for name, where in names.items():
            module, _, attribute = where.partition(":")
            value = importlib.import_module(module)
            setattr(request.module, name, getattr(value, attribute) if attribute else value)

    return imported


# A float32 number measured when a shipped checkpoint was made, recomputed on a machine whose BLAS
# kernels differ (OpenBLAS picks them by CPU, and a machine may pin them): the same to this
# relative round-off, not to the bit.
KERNEL_ROUNDOFF = 1e-6
