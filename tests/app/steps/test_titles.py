"""What the step views say in words: figure titles name tensors the way a person would, notes
describe what is left out of the picture or of its numbers table (and where the rest is), the
update step's bands follow from the optimizer and its lr, step counts are whole numbers, and a
failed gradient check names the float64 tolerance it was held to."""

from __future__ import annotations

import re

import numpy as np
import pytest

from app.figures.serialize import numbers_note
from app.figures.update import integer_ticks
from app.steps.titles import one_head_title, output_title, tensor_label
from tests.helpers.client import make_client
from tests.helpers.specs import SMALL_CONFIG

UNTIED = {"config": {**SMALL_CONFIG, "tie_embeddings": False}, "text": "the cat sat on the mat", "seed": 1}
DOTTED_NAME = re.compile(r"\b(?:layers\.\d+\.)?[a-z_]+\.[a-z_]+\b")  # attention.q, layers.0.ffn_norm.out, …


def post(client, spec: dict) -> dict:
    response = client.post("/api/traces", json=spec)
    assert response.status_code == 200, response.text
    return response.json()


def step(client, trace: dict, index: int, **params) -> dict:
    response = client.get(f"/api/traces/{trace['id']}/steps/{index}", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def index_of(trace: dict, name: str, phase: str) -> int:
    return next(s["index"] for s in trace["steps"] if s["name"] == name and s["phase"] == phase)


# ---------------------------------------------------------------------- titles


def test_every_recorded_tensor_and_parameter_has_a_label(client):
    trace = post(client, UNTIED)
    names = {n for s in trace["steps"] for n in step(client, trace, s["index"])["shapes"]}
    assert {"tokens", "output", "layers.0.attention.wq", "norm"} <= names
    unnamed = sorted(n for n in names if tensor_label(n) == n)
    assert not unnamed, f"no words for {unnamed}: add them to app/steps/titles.py _TENSOR_LABELS"


def test_figure_titles_use_words_not_tensor_names(client):
    trace = post(client, UNTIED)
    for summary in trace["steps"]:
        for figure in step(client, trace, summary["index"])["figures"]:
            assert not DOTTED_NAME.search(figure["title"]), (summary["name"], summary["phase"], figure["title"])
            assert figure["title"][0].isupper() and "dL/d(" not in figure["title"]


def test_titles_of_a_forward_and_a_backward_step(client):
    trace = post(client, UNTIED)
    forward = step(client, trace, index_of(trace, "layers.0.attention.q", "forward"))["figures"]
    assert [f["title"] for f in forward] == [
        "Input: RMSNorm output of layer 0, before attention",
        "Input: layer 0 query weights Wq (a parameter)",
        "Layer 0 queries",
    ]
    backward = step(client, trace, index_of(trace, "layers.0.attention.probs", "backward"))["figures"]
    assert [f["title"] for f in backward] == [
        "Gradient arriving at the layer 0 attention probabilities, all heads",
        "This op's share of the gradient of the layer 0 attention scores, all heads",
    ]


def test_unknown_names_fall_back_to_themselves():
    assert tensor_label("layers.3.attention.probs") == "layer 3 attention probabilities, all heads"
    assert tensor_label("layers.3.mystery.out") == "layers.3.mystery.out"
    assert tensor_label("attention.q") == "attention.q"  # a layer's tensor without its layer
    assert tensor_label("layers.1.logits") == "layers.1.logits"  # not a per-layer tensor
    assert output_title("mystery.out") == "mystery.out"
    assert one_head_title("Layer 0 attention scores, all heads", 3) == "Layer 0 attention scores, head 3"
    assert one_head_title("Something else", 3) == "Something else — head 3"


# ---------------------------------------------------------------------- notes


def test_the_numbers_note_names_only_what_the_table_cuts():
    assert numbers_note((64, 16), (92, 23)) == "Numbers: the first 64 of 92 rows and 16 of 23 columns."
    assert numbers_note((26, 16), (26, 23)) == "Numbers: the first 16 of 23 columns."
    assert numbers_note((64, 5), (92, 5)) == "Numbers: the first 64 of 92 rows."
    assert numbers_note((26, 5), (26, 5)) is None


def test_notes_describe_the_cut_and_point_to_the_whole_tensor():
    with make_client(max_table_rows=4, max_table_cols=3, max_heatmap_cells=40) as small:
        trace = post(small, UNTIED)
        view = step(small, trace, index_of(trace, "layers.0.feed_forward.gate", "forward"))
        gate = next(f for f in view["figures"] if f["id"] == "output.layers.0.feed_forward.gate")
        T, hidden = trace["T"], SMALL_CONFIG["ffn_hidden"]
        assert gate["note"].startswith(f"Drawn: {T}×{hidden} values as ")
        assert f"Numbers: the first 4 of {T} rows and 3 of {hidden} columns." in gate["note"]
        assert gate["note"].endswith("Download the tensor for every value.")
        assert "table shows" not in gate["note"]
        whole = small.get(gate["download"], params={"format": "json"})
        assert whole.status_code == 200 and whole.json()["shape"] == [1, T, hidden]


def test_a_figure_shown_whole_has_no_note_and_a_contribution_no_download(client):
    trace = post(client, UNTIED)
    view = step(client, trace, index_of(trace, "layers.0.attention.q", "backward"))
    arriving, *contributions = view["figures"]
    assert arriving["note"] is None and arriving["download"].endswith("/tensors/layers.0.attention.q?grad=true")
    assert contributions and all(f["download"] is None for f in contributions)


def test_the_residual_note_describes_its_table():
    with make_client(max_table_cols=6) as small:
        trace = post(small, UNTIED)
        view = step(small, trace, index_of(trace, "layers.0.ffn_residual", "backward"))
        residual = next(f for f in view["figures"] if f["id"] == "residual")
        width = SMALL_CONFIG["n_embd"]
        assert residual["note"] == (
            f"Numbers: skip, branch and sum side by side for the first 2 of {width} features "
            "(skip + branch = sum in every row)."
        )
        assert residual["table"]["columns"][:3] == ["skip[0]", "branch[0]", "sum[0]"]


# ---------------------------------------------------------------------- the update step


def update_view(client, spec: dict) -> dict:
    trace = post(client, spec)
    return step(client, trace, trace["steps"][-1]["index"])


@pytest.mark.parametrize(
    ("optimizer", "train_steps", "rule"),
    [
        ({"name": "adamw"}, 0, "AdamW at lr 0.003: 0.1–1 × lr/RMS(W)"),  # the default lr
        ({"name": "adamw", "lr": 0.01}, 3, "AdamW at lr 0.01: 0.1–1 × lr/RMS(W)"),
        ({"name": "sgd", "lr": 0.5}, 0, "SGD at lr 0.5: lr·RMS(g)/RMS(W)"),
        ({"name": "sgd", "lr": 0.2, "momentum": 0.9, "weight_decay": 0.01}, 3, "SGD at lr 0.2: lr·RMS(g)/RMS(W)"),
    ],
)
def test_each_update_ratio_lies_in_the_range_its_optimizer_and_lr_predict(client, optimizer, train_steps, rule):
    view = update_view(client, {**UNTIED, "optimizer": optimizer, "train_steps": train_steps})
    ratio = next(f for f in view["figures"] if f["id"] == "update.ratio")
    assert ratio["table"]["columns"] == ["RMS(ΔW)/RMS(W)", "expected from", "expected to"]
    values, low, high = np.array(ratio["table"]["rows"], dtype=np.float64).T
    assert np.all(low <= values * (1 + 1e-4)) and np.all(values <= high * (1 + 1e-4))
    assert ratio["figure"]["data"][1]["name"] == rule
    annotations = [a["text"] for a in ratio["figure"]["layout"]["annotations"]]
    assert annotations == ["0.1: too large a step"] and "healthy" not in view["explanation"]
    lr = f"lr = {optimizer['lr']:g}" if "lr" in optimizer else "lr = 0.003"
    assert lr in view["explanation"]


def test_adamw_moves_each_parameter_by_lr_over_its_rms_at_the_first_step(client):
    view = update_view(client, {**UNTIED, "optimizer": {"name": "adamw", "weight_decay": 0.0}})
    for p in view["update"]["params"]:
        assert p["update_ratio"] == pytest.approx(0.003 / p["weight_rms"], rel=1e-3), p["name"]
    assert (
        "lr/RMS(W)" in view["explanation"]
        and "moves every entry by at most about η = lr = 0.003" in view["explanation"]
    )


@pytest.mark.parametrize(("last", "dtick"), [(1, 1), (2, 1), (10, 1), (11, 2), (22, 5), (60, 10), (101, 20)])
def test_step_counts_tick_on_whole_numbers(last, dtick):
    ticks = integer_ticks(last)
    assert ticks["dtick"] == dtick and ticks["tickmode"] == "linear" and ticks["tickformat"] == "d"
    assert ticks["range"] == [0.5, last + 0.5]


def test_the_loss_curve_counts_whole_steps(client):
    view = update_view(client, {**UNTIED, "optimizer": {"name": "adamw"}, "train_steps": 2})
    xaxis = next(f for f in view["figures"] if f["id"] == "update.loss")["figure"]["layout"]["xaxis"]
    assert xaxis["dtick"] == 1 and xaxis["tick0"] == 0 and xaxis["range"] == [0.5, 4.5]


# ---------------------------------------------------------------------- the gradient check's words


@pytest.mark.parametrize(("dtype", "twin"), [("float32", True), ("float64", False)])
def test_a_failed_check_names_the_float64_tolerance(client, dtype, twin):
    spec = {**UNTIED, "dtype": dtype, "faults": ["softmax_missing_sum_term"]}
    trace = post(client, spec)
    view = step(client, trace, index_of(trace, "layers.0.attention.probs", "backward"))
    assert not view["gradcheck"]["passed"]
    warning = view["warnings"][0]
    assert "exceeds the float64 tolerance 1e-06" in warning and "float32 tolerance" not in warning
    assert ("float64 twin" in warning) == twin
