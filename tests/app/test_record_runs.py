"""POST /api/runs: a run of a demo task recorded from the page. Every limit of the settings refused
before any work (a 422 naming the field and the limit, nothing written, nothing queued); a small run
recorded through the API is the run `xt train --record` writes, listed, read and rebuilt bit for bit;
the recording goes through the build queue a slice at a time, so a tiny build is admitted while it
runs and another client's build takes its turn between two slices (by event order: fake slices wait
on events); the page runs kept within their bound, the oldest removed first."""

from __future__ import annotations

import asyncio
import os
import threading
import time

import numpy as np
import pytest
from fastapi import HTTPException

from app.recording.limits import NoRoom, make_room
from app.recording.recordings import Recordings
from app.services import Services
from app.settings import Settings
from app.spec import TraceSpec, resolve
from app.spec.cost import Cost
from app.traces import admission as admission_module
from app.traces import store as store_module
from app.traces.pool import BUILDS
from tests.helpers.aio import run_async
from tests.helpers.client import make_client
from tests.helpers.specs import SMALL_SPEC
from xt_core.film.files import digest, read_run
from xt_core.film.plan import RunPlan
from xt_core.film.rebuild import rebuild_step
from xt_core.film.record import record

TINY_RUN = {"task": "induction", "steps": 6, "every": 3, "dense": 0}  # 2 checkpoints, about a second


def wait_done(client, name: str) -> dict:
    """Polls the recording's progress until it ends (the test's only wait: no time is asserted)."""
    for _ in range(2000):
        progress = client.get(f"/api/runs/{name}/progress").json()
        if progress["state"] in ("done", "failed"):
            return progress
        time.sleep(0.02)
    raise AssertionError(f"{name}: still {progress}")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    with make_client(recorded_runs_dir=tmp_path_factory.mktemp("page-runs")) as client:
        answer = client.post("/api/runs", json=TINY_RUN)
        assert answer.status_code == 202, answer.text
        yield client, answer.json(), wait_done(client, answer.json()["name"])


def test_a_run_recorded_from_the_page_is_xt_trains_run_and_rebuilds_bit_for_bit(recorded, tmp_path):
    client, started, progress = recorded
    name = started["name"]
    assert progress == {**progress, "state": "done", "done": 6, "total": 6, "error": None}
    assert started["every"] == 3 and started["film"] == f"/film?run={name}"
    folder = client.app.state.settings.recorded_runs_dir / name
    run = read_run(folder)
    plan = RunPlan(task="induction", steps=6, batch=16, every=3, dense=0, max_bytes=5_000_000)
    assert run.plan == plan  # warmup steps / 15: 0
    cli = record(plan, tmp_path / "cli")  # what `xt train --record` writes for the same plan
    assert (folder / "steps.npz").read_bytes() == (cli.folder / "steps.npz").read_bytes()
    answer = client.get(f"/api/runs/{name}").json()
    assert answer["loss"] == run.log.loss.tolist() and answer["checkpoints"] == [0, 3]
    trace = rebuild_step(run, 4)  # a step replayed from checkpoint 3
    assert trace.loss == run.log.loss[4]
    norms = [np.sqrt(np.sum(np.square(trace.grads[n], dtype=np.float64))) for n in run.names]
    assert np.array_equal(np.float32(norms), run.log.grad_norm[4])
    assert digest({n: trace.update.params[n] for n in run.names}) == int(run.log.digest[5])


def test_a_page_run_is_listed_and_played_like_any_run(recorded):
    client, started, _ = recorded
    name = started["name"]
    assert name in [entry["name"] for entry in client.get("/api/runs").json()["runs"]]
    page = client.get("/film", params={"run": name})
    assert page.status_code == 200 and f'data-run="{name}"' in page.text
    assert client.get("/api/runs/nothing-here/progress").status_code == 404


@pytest.mark.parametrize(
    "body,field,words",
    [
        ({"task": "../runs", "steps": 6}, "task", "task must be one of the demo tasks (induction, text, gpt2-text)"),
        ({"task": "induction", "steps": 1501}, "steps", "between 1 and 1,500 (max_record_steps"),
        ({"task": "text", "steps": 1500}, "steps", "over max_record_seconds = 180 s: record at most"),
        ({"task": "induction", "steps": 1500, "every": 100}, "every", "over max_record_bytes = 5,000,000"),
        ({"task": "induction", "steps": 600, "every": 1}, "every", "every must be between 3 and 600, got 1"),
        ({"task": "induction", "steps": 6, "warmup": 7}, "warmup", "warmup must be between 0 and 6, got 7"),
        ({"task": "induction", "steps": 6, "dense": 99}, "dense", "less than or equal to 16"),
        ({"task": "induction", "steps": 6, "name": "mine"}, "name", "Extra inputs are not permitted"),
    ],
)
def test_a_limit_is_refused_before_any_work_naming_its_field(recorded, body, field, words):
    client, _, _ = recorded
    folder = client.app.state.settings.recorded_runs_dir
    before = sorted(p.name for p in folder.iterdir())
    response = client.post("/api/runs", json=body)
    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", field] and words in error["msg"]
    assert sorted(p.name for p in folder.iterdir()) == before  # nothing written
    assert not client.app.state.recordings.under_way() and client.app.state.services.admission.waiting == 0


def test_a_refusal_reads_in_the_requests_language(recorded):
    client, _, _ = recorded
    response = client.post("/api/runs", params={"lang": "ru"}, json={"task": "induction", "steps": 0})
    assert "steps должно быть от 1 до" in response.json()["detail"][0]["msg"]


def test_a_recording_is_a_slice_at_a_time_in_the_build_queue_never_in_the_small_lane(monkeypatch, tmp_path):
    """Fake slices, each waiting on its event: while slice 1 runs (in the builds pool), a tiny build
    is answered in the small lane, a second recording is refused (429 for the same client, 503 for
    another: one at a time), and another client's heavy build, queued meanwhile, starts before slice 2."""
    settings = Settings(recorded_runs_dir=tmp_path, worker_threads=1)
    tiny = resolve(TraceSpec.model_validate({**SMALL_SPEC, "seed": 21}), settings)
    heavy = resolve(TraceSpec.model_validate({**SMALL_SPEC, "seed": 22}), settings)
    events, gates = [], [threading.Event() for _ in range(3)]
    real_cost, real_build = admission_module.spec_cost, store_module.build_trace
    monkeypatch.setattr(
        admission_module, "spec_cost", lambda s: Cost(1 << 20, 10.0) if s.id == heavy.id else real_cost(s)
    )

    def build(spec, progress=None):
        events.append("tiny" if spec.id == tiny.id else "heavy")
        return real_build(spec, progress)

    def fake_slice(self, recorder):
        events.append(f"slice {recorder.slices}")
        gates[recorder.slices].wait()
        return recorder.slices == 2  # the run is written after two slices

    monkeypatch.setattr(store_module, "build_trace", build)
    monkeypatch.setattr(Recordings, "_advance", fake_slice)

    async def scenario():
        services = Services(settings)
        recordings = Recordings(settings, services)
        plan = RunPlan(task="induction", steps=6, batch=16, every=3, dense=0)
        try:
            recorder = recordings.start(plan, "voter:teacher")
            while "slice 1" not in events:
                await asyncio.sleep(0.01)
            assert services.admission.running[recorder.slice_id].pool == BUILDS
            assert recordings.progress(recorder.name)["state"] == "queued" and not recorder.waiting
            built = await services.build(tiny)  # the small lane: answered while slice 1 still runs
            assert built is not None and events == ["slice 1", "tiny"]
            for client, status in (("voter:teacher", 429), ("voter:student", 503)):
                with pytest.raises(HTTPException) as refused:
                    recordings.start(plan, client)
                assert refused.value.status_code == status and "Retry-After" in refused.value.headers
            queued = asyncio.ensure_future(services.build(heavy))  # another client's, behind slice 1
            while services.admission.where(heavy.id)["state"] != "queued":
                await asyncio.sleep(0.01)
            gates[1].set()
            gates[2].set()
            await asyncio.gather(queued, recorder.task)
            assert events == ["slice 1", "tiny", "heavy", "slice 2"] and recorder.state == "done"
            assert services.admission.builds == services.admission.small_builds == 0
            assert sorted(p.name for p in tmp_path.iterdir()) == []  # the fake slices wrote nothing; no refusal did
        finally:
            for gate in gates:
                gate.set()
            services.shutdown()

    run_async(scenario())


def _page_run(folder, name: str, size: int, written: float) -> None:
    (folder / name).mkdir()
    (folder / name / "run.json").write_bytes(b"x" * size)
    os.utime(folder / name / "run.json", (written, written))


def test_the_page_runs_are_kept_within_their_bound_the_oldest_removed_first(tmp_path):
    settings = Settings(
        recorded_runs_dir=tmp_path, max_recorded_runs=3, max_recorded_bytes=1000, min_recorded_run_seconds=100
    )
    now = 10_000.0
    for name, written in (("a", now - 500), ("b", now - 400), ("c", now - 50)):
        _page_run(tmp_path, name, 200, written)
    (tmp_path / "failed").mkdir()  # a recording that never wrote its run.json
    assert make_room(settings, 100, busy=set(), now=now) == ["a"]  # 3 runs: one goes to make a fourth
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b", "c"]
    assert make_room(settings, 700, busy=set(), now=now) == ["b"]  # 400 + 700 bytes: b goes, c is new
    with pytest.raises(NoRoom) as full:
        make_room(settings, 900, busy=set(), now=now)  # c would have to go: it is 50 s old
    assert full.value.seconds == 50 and sorted(p.name for p in tmp_path.iterdir()) == ["c"]
    assert make_room(settings, 300, busy={"c"}, now=now) == []  # a recording under way is never removed
