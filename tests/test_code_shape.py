"""The code stays in pieces a reader can hold: no function over 60 lines, no module over 350
lines unless a comment among its first lines says why ("# Over 350 lines: <reason>").
Complexity (ruff's C901, at most 10) is checked by `ruff check`, which CI runs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*ROOT.joinpath("app").rglob("*.py"), *ROOT.joinpath("xt_core").rglob("*.py"), ROOT / "xt_cli.py"])
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 350
REASON = "# Over 350 lines:"


def _functions(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            yield node.name, start, node.end_lineno - start + 1


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_functions_are_short(path: Path):
    long = [
        f"{name} (line {start}): {n} lines"
        for name, start, n in _functions(ast.parse(path.read_text()))
        if n > MAX_FUNCTION_LINES
    ]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_are_short_or_say_why(path: Path):
    lines = path.read_text().splitlines()
    if len(lines) > MAX_MODULE_LINES:
        assert any(line.startswith(REASON) for line in lines[:15]), (
            f"{len(lines)} lines: split it, or say why near its top with '{REASON} ...'"
        )
