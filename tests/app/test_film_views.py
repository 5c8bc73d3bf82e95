"""The film's own answers (app/routes/film.py's api_router, docs/film.md): the attention frames on the
probe sequence (a stretch of the recorded steps; none for a version 1 run) and which gradients build
the head at a step (composition_at's numbers, cached, each bad field named with its limit)."""

import json
import shutil

import numpy as np
import pytest

from tests.helpers.client import make_client
from tests.helpers.film import small_plan
from xt_core.film.attention import read_frames
from xt_core.film.composition import composition_at
from xt_core.film.files import read_run
from xt_core.film.record import record


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    runs_dir = tmp_path_factory.mktemp("runs")
    run = record(small_plan(attention_frames=8), runs_dir / "small")
    old = runs_dir / "old"  # as version 1 wrote it: no attention frames, no attention_frames in its plan
    shutil.copytree(run.folder, old)
    (old / "attention.npz").unlink()
    meta = json.loads((old / "run.json").read_text())
    del meta["plan"]["attention_frames"]
    (old / "run.json").write_text(json.dumps(meta | {"version": 1}))
    with make_client(runs_dir=runs_dir) as client:
        yield client, read_run(run.folder)


def test_the_frames_are_the_recorded_ones_in_a_stretch(served):
    client, run = served
    frames = read_frames(run.folder, run.plan, run.cfg)
    answer = client.get("/api/runs/small/attention").json()
    assert answer["step"] == frames.step.tolist() == [0, 1, 2, 8, 15, 23]  # 4 spread, 2 in the steepest [0, 2]
    assert np.array_equal(np.uint8(answer["probs"]), frames.probs)
    assert answer["probe"]["tokens"] == frames.tokens.tolist() and len(answer["probe"]["labels"]) == run.cfg.seq_len
    assert (answer["levels"], answer["seq_len"], answer["probe"]["period"]) == (255, run.cfg.seq_len, 8)
    part = client.get("/api/runs/small/attention", params={"start": 5, "stop": 12}).json()
    assert part["step"] == [s for s in frames.step.tolist() if 5 <= s < 12]
    refused = client.get("/api/runs/small/attention", params={"stop": 99})
    assert refused.status_code == 422 and refused.json()["detail"][0]["loc"] == ["query", "stop"]
    assert "stop must be between 1 and 24, got 99" in refused.json()["detail"][0]["msg"]


def test_a_version_1_run_is_read_and_keeps_no_frames(served):
    client, run = served
    old = client.get("/api/runs/old").json()
    assert old["loss"] == client.get("/api/runs/small").json()["loss"] and old["plan"]["attention_frames"] == 0
    missing = client.get("/api/runs/old/attention", headers={"Accept-Language": "ru"})
    assert missing.status_code == 404 and "не хранит кадров внимания" in missing.json()["detail"]


def test_the_split_at_a_step_is_composition_at_and_cached(served):
    client, run = served
    first = client.get("/api/runs/small/composition", params={"step": 9, "ahead": 3}).json()
    again = client.get("/api/runs/small/composition", params={"step": 9, "ahead": 3}).json()
    assert (first["cached"], again["cached"]) == (False, True)
    assert first["projections"] == composition_at(run, 9, 1, 3)["projections"] == again["projections"]
    assert first["replayed"] == 1 and first["previous"] == run.log.previous[9, :1].tolist()


def test_a_second_measure_while_one_replays_is_told_to_retry(served):
    from app.films import views

    client, _ = served
    assert views._measuring.acquire(blocking=False)  # as a replay under way holds it
    try:
        busy = client.get("/api/runs/small/composition", params={"step": 4, "ahead": 2})
    finally:
        views._measuring.release()
    assert busy.status_code == 503 and busy.headers["Retry-After"] == "5"
    assert "is replaying its run (one at a time)" in busy.json()["detail"]
    assert client.get("/api/runs/small/composition", params={"step": 4, "ahead": 2}).status_code == 200


@pytest.mark.parametrize(
    "query,field,words",
    [
        ({"step": 23}, "step", "step must be between 0 and 22, got 23"),
        ({"step": 3, "layer": 0}, "layer", "layer must be between 1 and 1, got 0"),
        ({"step": 20, "ahead": 4}, "ahead", "ahead must be between 1 and 3 (the steps after step 20"),
        ({"step": 0, "ahead": 101}, "ahead", "ahead must be between 1 and 23"),
    ],
)
def test_a_bad_composition_question_names_its_field_and_limit(served, query, field, words):
    client, _ = served
    response = client.get("/api/runs/small/composition", params=query)
    assert response.status_code == 422 and response.json()["detail"][0]["loc"] == ["query", field]
    assert words in response.json()["detail"][0]["msg"]
