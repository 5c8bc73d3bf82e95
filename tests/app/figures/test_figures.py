"""The pure figure builders: labels, colour scales, pooling of big heatmaps, NaN safety."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from app import figures
from app.figures import heads as head_figures
from app.figures.serialize import figure_json

POSITIONS = [f"{i} {c}" for i, c in enumerate("the cat")]


def decoded(z: dict) -> np.ndarray:
    """Plotly's base64 typed array back to numpy."""
    values = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
    return values.reshape(tuple(int(s) for s in z["shape"].split(","))) if "shape" in z else values


def as_json(figure) -> dict:
    data, note = figure_json(figure)
    json.dumps(data, allow_nan=False)
    return {**data, "note": note}


def test_heatmap_labels_positions_and_shows_values():
    z = np.arange(7 * 5, dtype=np.float32).reshape(7, 5)
    fig = as_json(figures.heatmap(z, POSITIONS, title="q", value_name="q"))
    trace = fig["data"][0]
    assert trace["y"] == POSITIONS and fig["layout"]["yaxis"]["type"] == "category"
    assert fig["layout"]["yaxis"]["autorange"] == "reversed"
    np.testing.assert_array_equal(decoded(trace["z"]), z)
    assert "%{z:.7g}" in trace["hovertemplate"] and trace["colorscale"][0][1] != "rgb(5,48,97)"
    assert fig["note"] is None


def test_gradient_heatmap_is_diverging_and_centred_on_zero():
    fig = as_json(figures.heatmap(np.linspace(-1, 3, 35).reshape(7, 5), POSITIONS, title="g", value_name="dL/dq",
                                  gradient=True))  # fmt: skip
    trace = fig["data"][0]
    assert trace["zmid"] == 0
    assert trace["colorscale"][0][1] == "rgb(5,48,97)" and trace["colorscale"][-1][1] == "rgb(103,0,31)"


def test_nan_and_inf_become_gaps():
    z = np.array([[1.0, np.nan], [np.inf, -np.inf]])
    fig = as_json(figures.heatmap(z, ["0 a", "1 b"], title="t", value_name="v"))
    values = decoded(fig["data"][0]["z"])
    assert values[0, 0] == 1 and np.isnan(values[0, 1]) and np.isnan(values[1]).all()
    bars = as_json(figures.bars([1.0, np.nan], ["a", "b"], title="t", value_name="v"))
    assert np.isnan(decoded(bars["data"][0]["y"])[1])


def test_big_heatmaps_are_pooled_keeping_positions_and_largest_values():
    z = np.zeros((7, 1000))
    z[3, 517] = -9.0
    fig = as_json(figures.heatmap(z, POSITIONS, title="big", value_name="v", max_cells=700))
    values = decoded(fig["data"][0]["z"])
    assert values.shape[0] == 7 and values.size <= 700  # positions keep their rows
    assert values.min() == -9.0  # the outlier survives pooling
    assert "largest magnitude" in fig["note"] and "7×1000" in fig["note"]


@pytest.mark.parametrize(
    ("rows", "cols", "cells"), [(128, 688, 20_000), (4096, 512, 20_000), (3, 5, 1), (1, 10**6, 10)]
)
def test_plan_pooling_fits_the_budget(rows, cols, cells):
    pooling = figures.plan_pooling(rows, cols, cells)
    assert -(-rows // pooling.row_step) * -(-cols // pooling.col_step) <= max(cells, 1)


def test_max_abs_pool_prefers_finite_values():
    z = np.array([[1.0, -np.inf, -3.0, 2.0], [np.nan, np.nan, 0.5, 0.1]])
    pooled = figures.max_abs_pool(z, figures.Pooling(2, 2))
    assert pooled.tolist() == [[1.0, -3.0]]


def test_head_grid_draws_every_head_with_titles_and_one_colour_axis():
    z = np.random.default_rng(0).random((4, 7, 7))
    fig = as_json(head_figures.head_grid(z, POSITIONS, POSITIONS, title="probs", value_name="p"))
    heatmaps = fig["data"]
    assert len(heatmaps) == 4 and {t["coloraxis"] for t in heatmaps} == {"coloraxis"}
    assert [a["text"] for a in fig["layout"]["annotations"]] == ["head 0", "head 1", "head 2", "head 3"]
    assert [t["meta"]["head"] for t in heatmaps] == [0, 1, 2, 3]
    assert heatmaps[2]["x"] == POSITIONS and heatmaps[2]["y"] == POSITIONS
    assert fig["layout"]["xaxis4"]["domain"][1] <= 1 and fig["layout"]["yaxis4"]["domain"][0] >= 0
    grad = as_json(head_figures.head_grid(z - 0.5, POSITIONS, POSITIONS, title="g", value_name="dL/dp", gradient=True))
    assert grad["layout"]["coloraxis"]["cmid"] == 0


@pytest.mark.parametrize(("n_head", "per_row"), [(4, [4]), (8, [4, 4]), (9, [5, 4]), (6, [3, 3]), (16, [4, 4, 4, 4])])
def test_head_grid_rows_are_few_and_even(n_head, per_row):
    """SmolLM2's 9 heads are two rows of 5 and 4 (not 4 + 4 + 1): a lone last head wastes a row."""
    fig = as_json(head_figures.head_grid(np.zeros((n_head, 3, 3)), None, None, title="t", value_name="v"))
    tops = [fig["layout"][f"yaxis{'' if h == 0 else h + 1}"]["domain"][1] for h in range(n_head)]
    rows = sorted(set(tops), reverse=True)
    assert [tops.count(top) for top in rows] == per_row


def test_head_grid_respects_the_figure_budget():
    z = np.ones((16, 256, 256))
    fig = as_json(head_figures.head_grid(z, None, None, title="t", value_name="v", max_figure_cells=160_000))
    cells = sum(decoded(t["z"]).size for t in fig["data"])
    assert cells <= 160_000 and fig["note"].startswith("Downsampled:")


def test_a_pooled_head_grid_says_so_in_its_note_and_hover():
    z = np.zeros((8, 128, 128))
    z[5, 100, 7] = -4.0
    fig = as_json(head_figures.head_grid(z, None, None, title="t", value_name="p", max_figure_cells=20_000))
    panels = [decoded(t["z"]) for t in fig["data"]]
    assert all(p.shape == (43, 43) for p in panels)  # 3×3 blocks: 8 × 43² ≤ 20 000
    assert panels[5].min() == -4.0 and panels[5][33, 2] == -4.0  # the outlier survives, in its block
    assert "128×128 values are drawn as 43×43 cells" in fig["note"] and "Enlarge" in fig["note"]
    hover = fig["data"][5]["hovertemplate"]
    assert "pooled block of 3×3" in hover and "largest |value|" in hover and "and the next 2" in hover


def test_single_head_keeps_every_value_up_to_its_limit():
    z = np.random.default_rng(1).standard_normal((128, 128))
    fig = as_json(head_figures.single_head(z, 3, None, None, title="t", value_name="p", gradient=True))
    trace = fig["data"][0]
    np.testing.assert_array_equal(decoded(trace["z"]), z.astype(np.float32))
    assert trace["meta"] == {"head": 3} and trace["zmid"] == 0 and fig["note"] is None
    assert "pooled" not in trace["hovertemplate"]
    big = as_json(head_figures.single_head(z, 0, None, None, title="t", value_name="p", max_cells=1024))
    assert decoded(big["data"][0]["z"]).size <= 1024 and "largest magnitude" in big["note"]


def test_loss_bars_label_targets_and_draw_the_mean():
    fig = as_json(figures.loss_bars([1.0, 3.0], ["0 t→h", "1 h→e"], 2.0))
    assert fig["data"][0]["type"] == "bar" and fig["data"][0]["x"] == ["0 t→h", "1 h→e"]
    assert fig["layout"]["shapes"][0]["y0"] == 2.0


def test_jacobian_heatmap_and_vectors():
    p = np.array([0.2, 0.3, 0.5])
    jac = np.diag(p) - np.outer(p, p)
    symbols = ("∂P[m,i,j]/∂S[m,i,j′]", "key j", "key j′")
    fig = as_json(figures.jacobian_heatmap(jac, ["a", "b", "c"], title="J", symbols=symbols))
    assert fig["data"][0]["zmid"] == 0 and fig["data"][0]["x"] == ["a", "b", "c"]
    assert "∂P[m,i,j]/∂S[m,i,j′]" in fig["data"][0]["hovertemplate"] and "key j′" in fig["data"][0]["hovertemplate"]
    np.testing.assert_allclose(decoded(fig["data"][0]["z"]), jac, rtol=1e-6)
    vectors = as_json(figures.series_bars(["a", "b", "c"], {"J·dL/dp": p, "recorded": p}, title="v", value_name="g"))
    assert [t["name"] for t in vectors["data"]] == ["J·dL/dp", "recorded"] and vectors["layout"]["barmode"] == "group"


def test_residual_view_shows_skip_branch_and_sum_on_one_scale():
    skip, branch = np.ones((7, 4)), -np.ones((7, 4)) * 0.5
    fig = as_json(figures.residual_view(skip, branch, skip + branch, POSITIONS, title="r"))
    assert len(fig["data"]) == 3 and fig["layout"]["coloraxis"]["cmid"] == 0
    assert [a["text"] for a in fig["layout"]["annotations"]] == [
        "arriving along the skip",
        "added by the branch",
        "sum",
    ]
    np.testing.assert_array_equal(decoded(fig["data"][2]["z"]), 0.5)
