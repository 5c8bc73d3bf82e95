"""GET /api/runs and /api/runs/{name}: the recorded runs of settings.runs_dir, a stretch of a run's
steps at a time, every refusal naming its field and limit (in the request's language); and a run's step
opened as a trace ({"run", "run_step"}, /walk?run=&run_step=): rebuilt from the run's checkpoint to the
recorded bits, its permalink naming the run and step alone, its refusals naming the field."""

import shutil

import numpy as np
import pytest

from tests.helpers.client import make_client, post_trace
from tests.helpers.film import small_plan
from xt_core.film.files import digest, folder_bytes
from xt_core.film.record import record


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    runs_dir = tmp_path_factory.mktemp("runs")
    run = record(small_plan(), runs_dir / "small")
    shutil.copytree(run.folder, runs_dir / "damaged")
    (runs_dir / "damaged" / "steps.npz").write_bytes(b"not a zip")
    shutil.copytree(run.folder, runs_dir / "unlisted")
    (runs_dir / "unlisted" / "run.json").write_text('{"format": "xt-run", "version": 1, "plan": {"steps": -1}}')
    with make_client(runs_dir=runs_dir, max_run_points=10) as client:
        yield client, run


def test_the_runs_are_listed_from_their_run_json_alone(served):
    """A damaged steps.npz is found when the run is opened; a run.json that cannot be read is not listed."""
    client, run = served
    listed = client.get("/api/runs").json()["runs"]
    assert [entry["name"] for entry in listed] == ["damaged", "small"]
    assert listed[1] == {"name": "small", "task": "induction", "steps": 24, "bytes": folder_bytes(run.folder)}


def test_a_run_answers_its_steps_within_the_points_limit(served):
    client, run = served
    answer = client.get("/api/runs/small").json()
    assert answer["shown"] == {"start": 0, "stop": 24, "stride": 3}  # 24 steps in at most 10 points
    assert answer["step"] == list(range(0, 24, 3))
    assert answer["loss"] == run.log.loss[::3].tolist()
    assert np.array_equal(np.float32(answer["previous"]), run.log.previous[::3])
    assert answer["checkpoints"] == run.checkpoints and answer["steepest"] == run.steepest
    assert answer["bytes"] <= answer["max_bytes"] == run.plan.max_bytes
    part = client.get("/api/runs/small", params={"start": 5, "stop": 9, "stride": 1}).json()
    assert part["step"] == [5, 6, 7, 8] and np.array_equal(np.float32(part["grad_norm"]), run.log.grad_norm[5:9])


@pytest.mark.parametrize(
    "query,field,words",
    [
        ({"stride": 1}, "stride", "stride must be at least 3 to show the steps from 0 up to 24, not included"),
        ({"start": 24}, "start", "start must be between 0 and 23, got 24"),
        ({"start": 4, "stop": 4}, "stop", "stop must be between 5 and 24, got 4"),
    ],
)
def test_a_stretch_out_of_bounds_names_its_field_and_limit(served, query, field, words):
    client, _ = served
    response = client.get("/api/runs/small", params=query)
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["loc"] == ["query", field] and words in error["msg"]


def test_unknown_and_damaged_runs_are_404s_in_the_request_language(served):
    client, _ = served
    response = client.get("/api/runs/nothing", params={"lang": "ru"})
    assert (
        response.status_code == 404
        and "нет записанного прогона nothing (есть прогоны: damaged, small)" in response.text
    )
    response = client.get("/api/runs/damaged")
    assert response.status_code == 404 and "cannot be read" in response.json()["detail"]
    assert client.get("/api/runs/..%2Fsmall").status_code in (404, 422)


def test_a_run_step_is_a_trace_with_the_recorded_bits(served):
    client, run = served
    summary = post_trace(client, {"run": "small", "run_step": 13})
    assert summary["spec"]["run"] == "small" and summary["spec"]["run_step"] == 13
    assert summary["spec"]["run_digest"] == f"{int(run.log.digest[13]):016x}"
    store = client.app.state.services.store
    spec = store.spec(summary["id"])
    assert spec.run.replayed == 13 - max(c for c in run.checkpoints if c <= 13)
    trace = store.get(spec)
    assert trace.loss == run.log.loss[13]
    assert digest({n: trace.update.params[n] for n in run.names}) == int(run.log.digest[14])
    assert trace.tokens.shape == (small_plan().batch, run.cfg.seq_len)


def test_a_run_steps_canonical_spec_posted_back_is_the_same_trace(served):
    """The walk page posts its canonical spec: every field at the run's own value is accepted."""
    client, _ = served
    summary = post_trace(client, {"run": "small", "run_step": 7})
    again = post_trace(client, summary["spec"])
    assert again["id"] == summary["id"] and again["spec"] == summary["spec"]


def test_the_walkthrough_opens_a_run_step_by_its_permalink(served):
    client, _ = served
    from app.spec.query import spec_to_query

    summary = post_trace(client, {"run": "small", "run_step": 5})
    assert spec_to_query(summary["spec"]) == {"run": "small", "run_step": "5"}
    page = client.get("/walk", params={"run": "small", "run_step": 5})
    assert page.status_code == 200 and summary["id"] in page.text
    assert "step 5 of the recorded run small" in page.text  # not "random init"
    # the run fixes train_steps: no "train more" link (each would be refused), one back to the film
    assert "train-link" not in page.text and 'href="/film?run=small&amp;step=5"' in page.text
    update = client.get(f"/api/traces/{summary['id']}/steps/{summary['steps'][-1]['index']}")
    assert update.status_code == 200 and update.json()["update"]["train_steps"] == 0


@pytest.mark.parametrize(
    "spec,field,words",
    [
        ({"run": "small", "run_step": 24}, "run_step", "run_step must be between 0 and 23, got 24"),
        ({"run": "small"}, "run_step", "run needs run_step: the step to open, from 0 to 23"),
        ({"run_step": 3}, "run", "run_step needs run"),
        (
            {"run": "other", "run_step": 3},
            "run",
            "no recorded run named other on this server (its runs: damaged, small)",
        ),
        ({"run": "small", "run_step": 3, "seed": 2}, "seed", "seed cannot be changed with run"),
        ({"run": "small", "run_step": 3, "dtype": "float64"}, "dtype", "dtype cannot be changed with run"),
        ({"run": "small", "run_step": 3, "run_digest": "0" * 16}, "run_digest", "the run small was recorded again"),
        ({"run": "small", "run_step": 3, "optimizer": {"name": "sgd"}}, "optimizer", "optimizer cannot be changed"),
    ],
)
def test_a_bad_run_step_names_its_field(served, spec, field, words):
    client, _ = served
    response = client.post("/api/traces", json=spec)
    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", field] and words in error["msg"]


def test_two_steps_of_a_run_compare_on_any_op(served):
    client, _ = served
    before, after = (post_trace(client, {"run": "small", "run_step": s}) for s in (2, 20))
    probs = next(s["index"] for s in before["steps"] if s["name"] == "layers.1.attention.probs")
    answer = client.get(f"/api/traces/{before['id']}/steps/{probs}/compare/{after['id']}")
    assert answer.status_code == 200, answer.text[:300]
    sides = answer.json()
    assert sides["a"]["query"] == {"run": "small", "run_step": "2"} and sides["b"]["query"]["run_step"] == "20"


def test_the_film_page_names_its_run_and_lists_the_others(served):
    """GET /film?run=NAME draws the run (film.js reads GET /api/runs/{name}); an unknown run is a
    404 page listing the runs there are, in the page's language; a step past the run's end is its last."""
    client, _ = served
    page = client.get("/film", params={"run": "small", "step": 99})
    assert page.status_code == 200 and 'data-run="small" data-step="23"' in page.text
    assert 'href="/walk?run=small&amp;run_step=23"' in page.text and "/static/js/film.js" in page.text
    unknown = client.get("/film", params={"run": "other", "lang": "ru"})
    assert unknown.status_code == 404 and "нет записанного прогона other" in unknown.text
    assert 'href="/film?run=small"' in unknown.text and "film.js" not in unknown.text


def test_the_shipped_run_is_the_home_pages_film(tmp_path):
    """The shipped run (make demo-models; xt serve --demo offers it) reads within its 5 MB bound and the
    home page links its film; a server without it offers no such link."""
    from app.films.runs import DEMO_RUN, DEMO_RUNS
    from app.routes.home_ways import ways
    from app.settings import Settings
    from xt_core.film.files import read_run

    run = read_run(DEMO_RUNS / DEMO_RUN)
    assert run.plan.max_bytes == 5_000_000 and folder_bytes(run.folder) <= run.plan.max_bytes
    assert run.checkpoints == [0, 500, 769, 1000] and run.steepest["step"] == 769
    assert ways(Settings(runs_dir=DEMO_RUNS), [])["film"] == "/film?run=induction"
    assert ways(Settings(runs_dir=tmp_path), [])["film"] is None
