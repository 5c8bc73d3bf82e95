"""Fixtures for the whole suite; the helpers the test modules import live in tests/helpers/."""

import collections
from pathlib import Path

import pytest
from _pytest.nodeid import NodeId

import xt_core
from tests.helpers.env import long_run
from tests.helpers.export import film_export, quiz_export, run_lesson_export, russian_export, small_export  # noqa: F401  (session fixtures: one export a run)
from tests.helpers.real_model import link_smollm2
from tests.helpers.server import LIVE_QUIZ_SECRET, Server, running_server

# The groups (below) that take longest, longest first: scheduled first (`make test` keeps this
# order with --no-loadscope-reorder; xdist would otherwise start the groups with the most tests
# first, and the few long ones last), so that under `pytest -n 2` each worker takes the next
# longest group as it comes free, the last groups to start are short ones and both workers finish
# together. An entry ending in "/" stands for every module under it. The order comes from
# `pytest --durations=0` summed by group (docs/performance.md, "The test suite").
SLOW_FIRST = (
    "server",
    "reference",
    "export",
    "tests/browser/test_present.py",
    "tests/browser/test_walk.py",
    "tests/browser/test_class.py",
    "tests/app/test_fuzz.py",
    "tests/browser/test_buglab.py",
    "tests/app/test_guessing.py",
    "tests/browser/test_film.py",
    "tests/browser/test_bench.py",
    "tests/app/test_guard.py",
    "tests/app/steps/test_snapshot.py",
    "tests/app/sessions/test_honest_class.py",
    "tests/browser/test_timeline.py",
    "tests/test_code_shape.py",
    "tests/app/steps/test_titles.py",
    "tests/app/sessions/test_api.py",
    "tests/core/test_model.py",
    "tests/browser/",
)
# Modules that share a worker (an xdist group) beyond their own: the ones that load torch and
# transformers (seconds of imports, once per worker that runs any of them), and the modules that
# read, step or view the real SmolLM2, which reuse the reference test's import of it and its header
# (the app caches both by path: smollm2_models_dir).
SHARED_GROUPS = dict.fromkeys(
    (
        "tests/core/test_smollm2_reference.py",
        "tests/app/steps/test_smollm2_views.py",
        "tests/app/spec/test_real_model_training.py",
        "tests/app/routes/test_tokenize.py",
        "tests/core/test_smollm2_tokenizer.py",
        "tests/core/checkpoint/test_hf_reference.py",
        "tests/app/checkpoints/test_served.py",
        "tests/core/test_gguf_import.py",
        "tests/core/test_bpe.py",
        "tests/core/test_torch_parity.py",
        # and every other module that builds torch or transformers models (4.4 CPU-s of imports a worker)
        "tests/app/checkpoints/test_served_gpt2.py",
        "tests/app/test_qwen_walk.py",
        "tests/core/test_gpt2_reference.py",
        "tests/core/precision/test_against_torch.py",
        "tests/core/test_qwen_parity.py",
        "tests/core/checkpoint/test_gguf_gpt2.py",
        "tests/core/checkpoint/test_gpt2_files.py",
        "tests/core/checkpoint/test_hf_qwen.py",
        "tests/core/test_gpt2_ops.py",
    ),
    "reference",
)
# The export's tests share the exports made once a run (tests/helpers/export.py) and one browser.
SHARED_GROUPS |= dict.fromkeys(
    (
        "tests/browser/test_export.py",
        "tests/browser/test_notebook.py",
        "tests/app/export/test_export.py",
        "tests/app/export/test_film_export.py",
        "tests/app/export/test_run_lesson_export.py",
    ),
    "export",
)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under `pytest -n 2 --dist loadgroup`: the tests of one module run in one worker, so a
    module-scoped fixture (a trace, transformers' model) is built once; the tests marked
    `server` (they measure a real server's latency or RSS) form one group, so no two of them
    run side by side. Each worker starts its own `live_server` when its tests need one."""
    name_operations_in_node_ids(items)
    for item in items:
        if in_long_tier(item):
            item.add_marker(pytest.mark.long)
    if not long_run():
        skip = pytest.mark.skip(
            reason="past make test's budget (tests/conftest.py in_long_tier): make test-long runs it"
        )
        for item in items:
            if item.get_closest_marker("long"):
                item.add_marker(skip)
    items.sort(key=lambda item: slow_first(group_of(item)))  # stable: the order within a group is kept
    if getattr(config.option, "loadgroup", False):  # an xdist worker (xdist sets it there only)
        for item in items:
            join_group(item, group_of(item))


# Beside the sweeps (marked long), `make test` leaves to `make test-long` (.ci/run runs both) the two
# kinds of test that cost the most for what they add to every run's check: the system tests that start
# processes of their own beside the run's live server and browser (marked server when they measure a
# server: admission, memory, load, connections, guessing, reserve, the Redis fan-out; marked long: a
# second server for determinism or deferred checks, a Redis restarted, a Jupyter kernel), and the tests
# of the fetched real model (SmolLM2: `make real-model`; its fixtures below), each of which reads or
# steps a 135M-parameter model. The random-init GPT-2, Qwen and Llama models checked against
# transformers stay in `make test`, through the same importers.
REAL_MODEL_FIXTURES = ("smollm2_models_dir", "smollm2_server")
# The browser is half of the suite's CPU (chromium drawing the pages about 220 CPU-s of 600, measured
# with benchmarks/suite_profile.py and a /proc sampler: docs/performance.md "The test suite"). `make
# test` drives it in the tests marked every_run: each page once (home, walk, bug lab, film, bench,
# update, export, glossary) and each guarantee only a browser can check (no CSP violation, axe,
# offline, the keyboard, hostile text inert, the first figure on screen, a follower's page back
# when the class ends); the scenarios built on them (a class in two browsers, lessons played stop by
# stop, the exports walked, the pages in Russian, on a phone, in presenter mode) run in `make
# test-long`, each over server answers `make test` checks without a browser.
BROWSER_TESTS = "tests/browser/"


def in_long_tier(item) -> bool:
    """Whether `make test-long` runs the item rather than `make test` (the reasons above and below)."""
    if item.get_closest_marker("long") or item.get_closest_marker("server"):
        return True
    if item.nodeid.startswith(BROWSER_TESTS) and not item.get_closest_marker("every_run"):
        return True
    return any(name in getattr(item, "fixturenames", ()) for name in REAL_MODEL_FIXTURES)


def group_of(item) -> str:
    """The item's xdist group: `server`, a shared group, or its module."""
    module = item.nodeid.split("::")[0]
    return "server" if item.get_closest_marker("server") else SHARED_GROUPS.get(module, module)


def slow_first(group: str) -> int:
    """The index of the group (or of the folder holding it) in SLOW_FIRST, or past its end."""
    within = (i for i, entry in enumerate(SLOW_FIRST) if group == entry or group.startswith(entry) and entry[-1] == "/")
    return next(within, len(SLOW_FIRST))


def join_group(item, group: str) -> None:
    """xdist's loadgroup scheduler reads a test's group from the end of its node id
    (`path::test@group`). xdist 3.8 appends it to `item._nodeid`, which pytest 9 no longer
    reads (the id is `item._id`): without this every test was scheduled on its own."""
    item._id = NodeId.parse(f"{item.nodeid}@{group}")  # pytest has no public setter


def name_operations_in_node_ids(items) -> None:
    """schemathesis names an item per API operation (test_api_never_fails[GET /healthz]), but
    under pytest 9 every one of them gets the function's node id; xdist schedules by node id
    and would run only one operation of tests/app/test_fuzz.py. The operation joins the id."""
    for item in items:
        suffix = item.name.removeprefix(getattr(item, "originalname", item.name))
        if suffix.startswith("[") and not item.nodeid.endswith(suffix):
            item._id = item._id.with_params(suffix[1:-1])  # pytest has no public setter
    repeated = sorted(nodeid for nodeid, n in collections.Counter(item.nodeid for item in items).items() if n > 1)
    if repeated:
        raise pytest.UsageError(f"test node ids must be unique (xdist runs one of each): {repeated[:3]}")


@pytest.fixture
def tiny():
    return xt_core.PRESETS["tiny"]


@pytest.fixture(scope="session")
def smollm2_models_dir(tmp_path_factory) -> Path:
    """A models directory holding the fetched SmolLM2-135M (linked, as `xt models fetch` names it):
    one per process, so the app's import of it (cached by path) serves every test that uses it."""
    directory = tmp_path_factory.mktemp("smollm2-models")
    link_smollm2(directory)
    return directory


@pytest.fixture(scope="session")
def live_models_dir(tmp_path_factory) -> Path:
    """The live server's models directory (uploads; a test may link a fetched real model in)."""
    return tmp_path_factory.mktemp("uploaded-models")


@pytest.fixture(scope="session")
def live_runs_dir() -> Path:
    """The live server's recorded runs: the shipped demo run (xt_core/checkpoint/demos/runs, docs/film.md),
    read only: a test opens its checkpoint steps, which rebuild at once."""
    from app.films.runs import DEMO_RUNS

    return DEMO_RUNS


@pytest.fixture(scope="session")
def live_recorded_runs_dir(tmp_path_factory) -> Path:
    """Where the live server keeps the runs recorded from the page (POST /api/runs): never the repo's data/."""
    return tmp_path_factory.mktemp("page-runs")


@pytest.fixture(scope="session")
def live_server(live_models_dir, live_runs_dir, live_recorded_runs_dir) -> Server:
    """One `uvicorn app.main:app` on 127.0.0.1 with default settings for the run (browser,
    load and determinism tests), always stopped. Uploads made by the tests go to a fresh
    directory, never to the repo's data/models. Its quiz secret is known (LIVE_QUIZ_SECRET):
    a test picks the fault its quiz hides. Every browser test is a learner of its own at one
    address, 127.0.0.1, so the address's share of a quiz's probes is lifted (a class behind one
    router does the same: XT_QUIZ_PROBES_PER_ADDRESS); tests/app/sessions/test_quiz_probes.py holds it."""
    env = {
        "XT_MODELS_DIR": str(live_models_dir),
        "XT_RUNS_DIR": str(live_runs_dir),
        "XT_RECORDED_RUNS_DIR": str(live_recorded_runs_dir),
        "XT_QUIZ_SECRET": LIVE_QUIZ_SECRET,
        "XT_QUIZ_PROBES_PER_ADDRESS": "1000",
    }
    with running_server(env) as server:
        yield server
