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


# ---- imports: no private name crosses a module, no circle among xt_core's modules

IMPORTERS = sorted([*SOURCES, *ROOT.joinpath("benchmarks").rglob("*.py")])


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _imports(path: Path):
    """(module, name taken from it or None, line, alias bound) for every import in the file, at any depth."""
    here = _module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node.lineno, alias.asname or alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], *filter(None, [node.module])])
            for alias in node.names:
                yield base, alias.name, node.lineno, alias.asname or alias.name


def _module_aliases(path: Path) -> dict[str, str]:
    """Each name the file binds to one of the project's modules -> that module."""
    aliases = {}
    for module, name, _, bound in _imports(path):
        if name is None:
            aliases[bound] = module if bound != module.split(".")[0] else bound
        elif _is_module(f"{module}.{name}"):
            aliases[bound] = f"{module}.{name}"
    return {bound: module for bound, module in aliases.items() if _is_module(module)}


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return inner and f"{inner}.{node.attr}"
    return None


def _private_uses(path: Path):
    for module, name, line, _ in _imports(path):
        if name and _is_private(name) and _is_module(module):
            yield f"line {line}: from {module} import {name}"
    aliases = _module_aliases(path)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            owner = _dotted(node.value) or ""
            head, _, rest = owner.partition(".")
            if head in aliases and _is_module(".".join(filter(None, [aliases[head], rest]))):
                yield f"line {node.lineno}: {owner}.{node.attr}"


@pytest.mark.parametrize("path", IMPORTERS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_name_crosses_modules(path: Path):
    """A name with a leading underscore is its module's own; what another module needs is public
    where it belongs."""
    uses = list(_private_uses(path))
    assert not uses, f"private names of other modules: {uses}"


def _core_edges(path: Path) -> set[str]:
    """The xt_core modules importing this file runs: each one it names (a `from pkg import mod`
    names the submodule) and the packages around them whose __init__ runs first."""
    here = _module_name(path)
    targets = set()
    for module, name, _, _ in _imports(path):
        target = f"{module}.{name}" if name and _is_module(f"{module}.{name}") else module
        if not target.startswith("xt_core"):
            continue
        parts = target.split(".")
        for depth in range(1, len(parts) + 1):
            package = ".".join(parts[:depth])
            if not (here == package or here.startswith(package + ".")):
                targets.add(package)
    return targets - {here}


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), list(graph[start])
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return seen


def test_no_import_cycle_in_core():
    """Every import counts, a function's own included (a lazy import is a circle all the same):
    the modules of xt_core form a tree of dependencies a reader can follow one way."""
    graph = {_module_name(p): _core_edges(p) for p in ROOT.joinpath("xt_core").rglob("*.py")}
    reach = {module: _reachable(graph, module) for module in graph}
    cycles = {
        tuple(sorted(m for m in reach[module] if module in reach[m])) for module in graph if module in reach[module]
    }
    assert not cycles, f"import cycles among xt_core modules: {sorted(cycles)}"


PROJECT = ("xt_core", "app", "tests", "benchmarks", "xt_cli")


@pytest.mark.parametrize(
    "path", sorted([*IMPORTERS, *ROOT.joinpath("tests").rglob("*.py")]), ids=lambda p: str(p.relative_to(ROOT))
)
def test_imports_name_modules_of_this_tree(path: Path):
    """An import of the project's names a module that exists here (an installed copy of the
    project elsewhere on the path would otherwise answer for a module moved or removed)."""
    missing = [
        f"line {line}: {module}"
        for module, _, line, _ in _imports(path)
        if module.split(".")[0] in PROJECT and not _is_module(module)
    ]
    assert not missing, f"no such module in this tree: {missing}"


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


# The modules on the words layer (app/words): their words live in the catalogues
# (app/words/locales/*/*.ftl), never in the code. A module joins this list when it moves.
ON_THE_WORDS_LAYER = [
    *sorted((ROOT / "templates").glob("*.html")),
    ROOT / "static" / "js" / "home.js",
    *sorted((ROOT / "static" / "js" / "home").glob("*.js")),
]


@pytest.mark.parametrize("path", ON_THE_WORDS_LAYER, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_sentence_outside_the_catalogues(path: Path):
    """A user-facing literal (two or more words: benchmarks/literals.py) in a module on the words layer."""
    from benchmarks.literals import js_literals, template_literals

    found = (js_literals if path.suffix == ".js" else template_literals)(path)
    assert found == [], f"words outside the catalogues (app/words/locales): {found}"
