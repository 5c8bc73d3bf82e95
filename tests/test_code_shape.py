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


def _offenders(paths, problems_of) -> dict[str, list[str]]:
    """{file: its problems} over `paths`, the files without any left out: one test a rule, every
    file it finds named at once (a test per file cost ~5 ms of pytest each, 1,300 of them)."""
    found = {str(path.relative_to(ROOT)): list(problems_of(path)) for path in paths}
    return {path: problems for path, problems in found.items() if problems}


def _long_functions(path: Path):
    for name, start, n in _functions(ast.parse(path.read_text())):
        if n > MAX_FUNCTION_LINES:
            yield f"{name} (line {start}): {n} lines"


def test_functions_are_short():
    found = _offenders(SOURCES, _long_functions)
    assert not found, f"functions over {MAX_FUNCTION_LINES} lines: {found}"


def _unexplained_length(path: Path):
    lines = path.read_text().splitlines()
    if len(lines) > MAX_MODULE_LINES and not any(line.startswith(REASON) for line in lines[:15]):
        yield f"{len(lines)} lines: split it, or say why near its top with '{REASON} ...'"


def test_modules_are_short_or_say_why():
    found = _offenders(SOURCES, _unexplained_length)
    assert not found, found


# ---- imports: no private name crosses a module, no circle among xt_core's modules

IMPORTERS = sorted([*SOURCES, *ROOT.joinpath("benchmarks").rglob("*.py")])


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str, root: Path = ROOT) -> bool:
    path = root.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _imports(path: Path, root: Path = ROOT):
    """(module, name taken from it or None, line, alias bound) for every import in the file, at any depth."""
    here = _module_name(path, root).split(".")
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


def test_no_private_name_crosses_modules():
    """A name with a leading underscore is its module's own; what another module needs is public
    where it belongs."""
    found = _offenders(IMPORTERS, _private_uses)
    assert not found, f"private names of other modules: {found}"


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


def _folder(module: str, root: Path) -> str:
    """What a module stands for in the map of folders: a subfolder's modules (and its __init__) for
    that folder (xt_core.checks.twin -> xt_core.checks), a module lying directly in the package for
    itself (xt_core.model, app.services), the package's own __init__ for the package."""
    parts = module.split(".")
    if len(parts) <= 2 and not root.joinpath(*parts, "__init__.py").is_file():
        return module
    return module if root.joinpath(*parts, "__init__.py").is_file() else ".".join(parts[:-1])


def _folder_edges(package: str, root: Path = ROOT) -> dict[tuple[str, str], list[str]]:
    """(folder, folder it imports) -> where: every import of the package's files counts, a function's
    own and one under TYPE_CHECKING included (a lazy import ties two folders all the same)."""
    edges: dict[tuple[str, str], list[str]] = {}
    for path in sorted(root.joinpath(package).rglob("*.py")):
        here = _module_name(path, root)
        for module, name, line, _ in _imports(path, root):
            target = f"{module}.{name}" if name and _is_module(f"{module}.{name}", root) else module
            if target.split(".")[0] != package or not _is_module(target, root):
                continue
            pair = (_folder(here, root), _folder(target, root))
            where = f"{path.relative_to(root)}:{line} imports {target}"
            if pair[0] != pair[1] and where not in edges.get(pair, ()):
                edges.setdefault(pair, []).append(where)
    return edges


def _folder_cycles(edges: dict[tuple[str, str], list[str]]) -> dict[tuple[str, ...], list[str]]:
    """Each group of folders that import one another in a loop -> the imports that tie it."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    reach = {folder: _reachable(graph, folder) for folder in graph}
    cycles: dict[tuple[str, ...], list[str]] = {}
    for folder in graph:
        if folder in reach[folder]:
            group = tuple(sorted(f for f in reach[folder] if folder in reach.get(f, ())))
            cycles[group] = [w for (a, b), where in edges.items() if a in group and b in group for w in where]
    return cycles


def test_folder_cycles_are_found_in_a_small_tree(tmp_path: Path):
    """The map of folders on a made-up package holding today's two kinds of loop: the model knows
    its lab, whose faults import the model in a function; a step's answers name the services under
    TYPE_CHECKING, the services import them with `from pkg.steps import answers`."""
    files = {
        "__init__.py": "",
        "tape.py": "",
        "model.py": "from pkg.lab.faults import override\nfrom pkg import tape\n",
        "lab/__init__.py": "",
        "lab/faults.py": "from pkg.tape import Node\n\ndef override():\n    from pkg.model import build\n",
        "steps/__init__.py": "",
        "steps/view.py": "from pkg.tape import Node\n",
        "steps/answers.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from pkg.services import S\n",
        "services.py": "from pkg.steps import answers\n",
    }
    for name, text in files.items():
        tmp_path.joinpath("pkg", name).parent.mkdir(parents=True, exist_ok=True)
        tmp_path.joinpath("pkg", name).write_text(text)
    found = _folder_cycles(_folder_edges("pkg", tmp_path))
    assert set(found) == {("pkg.lab", "pkg.model"), ("pkg.services", "pkg.steps")}
    assert found["pkg.lab", "pkg.model"] == [
        "pkg/lab/faults.py:4 imports pkg.model",
        "pkg/model.py:1 imports pkg.lab.faults",
    ]
    tmp_path.joinpath("pkg", "model.py").write_text("from pkg import tape\n")  # the model hands its faults out
    assert set(_folder_cycles(_folder_edges("pkg", tmp_path))) == {("pkg.services", "pkg.steps")}


@pytest.mark.parametrize("package", ["xt_core", "app"])
def test_no_import_cycle_between_folders(package: str):
    """A folder (xt_core/checks, app/steps) or a module lying directly in the package (xt_core/model.py,
    app/services.py) imports nothing that imports it back, however far round: the folders stand on
    one another one way, and a reader can take them from the bottom up."""
    cycles = _folder_cycles(_folder_edges(package))
    assert not cycles, "folders importing one another in a loop:\n" + "\n".join(
        f"{' <-> '.join(group)}: {'; '.join(where)}" for group, where in sorted(cycles.items())
    )


def test_the_model_imports_nothing_from_the_lab():
    """The bug lab hands the step its override table (xt_core.lab.faults.overrides): the model
    imports no lab module, directly or through any module it imports."""
    graph = {_module_name(p): _core_edges(p) for p in ROOT.joinpath("xt_core").rglob("*.py")}
    reached = _reachable(graph, "xt_core.model")
    assert not sorted(m for m in reached if m.split(".")[:2] == ["xt_core", "lab"])


PROJECT = ("xt_core", "app", "tests", "benchmarks", "xt_cli")


def _missing_modules(path: Path):
    for module, _, line, _ in _imports(path):
        if module.split(".")[0] in PROJECT and not _is_module(module):
            yield f"line {line}: {module}"


def test_imports_name_modules_of_this_tree():
    """An import of the project's names a module that exists here (an installed copy of the
    project elsewhere on the path would otherwise answer for a module moved or removed)."""
    everything = sorted([*IMPORTERS, *ROOT.joinpath("tests").rglob("*.py")])
    found = _offenders(everything, _missing_modules)
    assert not found, f"no such module in this tree: {found}"


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
    ROOT / "static" / "js" / "walk.js",
    *sorted((ROOT / "static" / "js" / "walk").glob("*.js")),
    *sorted((ROOT / "static" / "js" / "class").glob("*.js")),
    ROOT / "static" / "js" / "film.js",  # the film of a recorded run (film-page.ftl)
    *sorted((ROOT / "static" / "js" / "film").glob("*.js")),
    ROOT / "app" / "routes" / "film.py",
    # lib/prefs.js is a classic script: its one literal is the "use strict" directive
    *sorted(p for p in (ROOT / "static" / "js" / "lib").glob("*.js") if p.name != "prefs.js"),
    # the refusals a page shows (errors.ftl, errors-server.ftl) and the models' words (models.ftl)
    *(
        ROOT / "app" / "spec" / f"{name}.py"
        for name in ("resolve", "checkpoint", "faults", "preview", "query", "presets", "run_step")
    ),
    ROOT / "app" / "checkpoints" / "upload.py",
    ROOT / "app" / "checkpoints" / "model_words.py",
    ROOT / "app" / "guesses.py",
    ROOT / "app" / "films" / "runs.py",  # a recorded run's refusals (film.ftl)
    # the step views' prose (app/words/locales/*/steps*.ftl); the rest of app/steps still holds
    # figure titles (the names' catalogue), 4xx messages and the glossary
    *(
        ROOT / "app" / "steps" / f"{module}.py"
        for module in (
            "context",
            "gradcheck",
            "heads",
            "kind",
            "measured",
            "measured_parts",
            "nonfinite",
            "stats",
            "summary",
            "tensors",
            "update_text",
            "view",
            "wording",
        )
    ),
    # the step views' titles, axes and figures (names.ftl, figures.ftl)
    ROOT / "app" / "steps" / "titles.py",
    ROOT / "app" / "steps" / "axes.py",
    *sorted((ROOT / "app" / "figures").glob("*.py")),
    # the lessons' claims as sentences (the checks' own messages, for the teacher's `xt lesson
    # check` and the log, stay English as the CLI does: app/lessons/claims.py, catalogue.py)
    ROOT / "app" / "lessons" / "sentences.py",
    ROOT / "app" / "buglab" / "catalogue.py",
    ROOT / "app" / "buglab" / "views.py",
    ROOT / "app" / "buglab" / "quiz.py",
    ROOT / "app" / "steps" / "glossary.py",
    ROOT / "app" / "routes" / "home_ways.py",
    # the trace, tensor and session refusals (errors-traces.ftl); the routes' modules keep their
    # OpenAPI summaries and descriptions (API docs for programs, English) and stay off the rule
    ROOT / "app" / "answers.py",
    ROOT / "app" / "services.py",
    ROOT / "app" / "sessions" / "rules.py",
    ROOT / "app" / "steps" / "slices.py",
    ROOT / "app" / "steps" / "compare.py",
    ROOT / "app" / "traces" / "tensors.py",
    ROOT / "app" / "traces" / "store.py",
]


def test_no_sentence_outside_the_catalogues():
    """A user-facing literal (two or more words: benchmarks/literals.py) in a module on the words layer."""
    from benchmarks.literals import js_literals, python_literals, template_literals

    def literals(path: Path):
        return {".js": js_literals, ".py": python_literals}.get(path.suffix, template_literals)(path)

    found = _offenders(ON_THE_WORDS_LAYER, literals)
    assert not found, f"words outside the catalogues (app/words/locales): {found}"
