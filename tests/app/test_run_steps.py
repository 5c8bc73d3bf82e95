"""A recorded run's step opened as a trace ({"run", "run_step"}, /walk?run=&run_step=): rebuilt from the
run's checkpoint to the recorded bits, its permalink naming the run and step alone, its refusals naming
the field."""

import pytest

from tests.helpers.client import make_client, post_trace
from tests.helpers.film import small_plan
from xt_core.film.files import digest
from xt_core.film.record import record


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    runs_dir = tmp_path_factory.mktemp("runs")
    run = record(small_plan(), runs_dir / "small")
    with make_client(runs_dir=runs_dir) as client:
        yield client, run


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


def test_the_walkthrough_opens_a_run_step_by_its_permalink(served):
    client, _ = served
    from app.spec.query import spec_to_query

    summary = post_trace(client, {"run": "small", "run_step": 5})
    assert spec_to_query(summary["spec"]) == {"run": "small", "run_step": "5"}
    page = client.get("/walk", params={"run": "small", "run_step": 5})
    assert page.status_code == 200 and summary["id"] in page.text
    update = client.get(f"/api/traces/{summary['id']}/steps/{summary['steps'][-1]['index']}")
    assert update.status_code == 200 and update.json()["update"]["train_steps"] == 0


@pytest.mark.parametrize(
    "spec,field,words",
    [
        ({"run": "small", "run_step": 24}, "run_step", "run_step must be between 0 and 23, got 24"),
        ({"run": "small"}, "run_step", "run needs run_step: the step to open, from 0 to 23"),
        ({"run_step": 3}, "run", "run_step needs run"),
        ({"run": "other", "run_step": 3}, "run", "no recorded run named other on this server (its runs: small)"),
        ({"run": "small", "run_step": 3, "seed": 2}, "seed", "seed cannot be given with run"),
        ({"run": "small", "run_step": 3, "dtype": "float64"}, "dtype", "dtype cannot be given with run"),
    ],
)
def test_a_bad_run_step_names_its_field(served, spec, field, words):
    client, _ = served
    response = client.post("/api/traces", json=spec)
    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", field] and words in error["msg"]
