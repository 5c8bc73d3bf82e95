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


# Answers under /api that are not JSON, by their documented media type: the SSE stream of a
# session, its QR code. (The tensor route answers .npy or JSON: its JSON has a model. The
# redirects, /quiz and /lessons/{name}, are pages outside /api and outside the schema.)
NOT_JSON_MEDIA = {"text/event-stream", "image/svg+xml"}


def _api_routes():
    """(path, APIRoute) of every route under /api, walked from the app as it is built."""
    from fastapi.routing import APIRoute

    from app.main import create_app

    app = create_app()
    try:  # FastAPI keeps an included router as one entry of app.routes: walk into it
        from fastapi.routing import iter_route_contexts
    except ImportError:
        walked = [(r.path, r) for r in app.routes]
    else:
        walked = [(c.path, c.original_route) for c in iter_route_contexts(app.routes)]
    return app, [(path, r) for path, r in walked if isinstance(r, APIRoute) and path.startswith("/api/")]


def _answer_media(app, path: str, route) -> set[str]:
    operations = app.openapi()["paths"][path]
    media = set()
    for method in route.methods:
        responses = operations[method.lower()]["responses"]
        media |= {m for status, r in responses.items() if status.startswith("2") for m in r.get("content", {})}
    return media


def test_every_api_json_answer_has_a_response_model():
    """/openapi.json describes every JSON answer, so schemathesis checks each real answer
    against its model (tests/app/test_fuzz.py)."""
    from pydantic import BaseModel

    app, routes = _api_routes()
    exempt, missing = [], []
    for path, route in routes:
        media = _answer_media(app, path, route)
        if media and media <= NOT_JSON_MEDIA:
            exempt.append(path)
        elif not (isinstance(route.response_model, type) and issubclass(route.response_model, BaseModel)):
            missing.append(f"{sorted(route.methods)} {path} answers {sorted(media)}")
    assert not missing, f"JSON routes without a pydantic response_model: {missing}"
    assert sorted(exempt) == ["/api/sessions/{code}/events", "/api/sessions/{code}/qr.svg"], exempt
    documented = {p for p in app.openapi()["paths"] if p.startswith("/api/")}
    assert documented <= {path for path, _ in routes}, "every documented /api route is walked"
