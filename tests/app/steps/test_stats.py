"""The numbers beside every figure (app/steps/stats.py) are NumPy's on the whole tensor: the
summary alone (chunks, NaN, ±inf, an all-masked tensor), and each figure of step views against
the .npy its download link serves."""

from __future__ import annotations

import io

import numpy as np
import pytest

from app.steps.stats import CHUNK, summarize


def numpy_stats(a: np.ndarray) -> dict:
    kept = a[np.isfinite(a)].astype(np.float64)
    masked = np.where(np.isfinite(a), a, -np.inf)
    return {
        "min": kept.min(),
        "max": kept.max(),
        "mean": np.mean(kept),
        "std": np.std(kept),
        "norm": np.linalg.norm(kept),
        "nan": int(np.isnan(a).sum()),
        "inf": int(np.isinf(a).sum()),
        "argmax": list(np.unravel_index(np.argmax(masked), a.shape)),
    }


def assert_same(ours: dict, a: np.ndarray) -> None:
    expected = numpy_stats(a)
    assert ours["shape"] == list(a.shape) and ours["dtype"] == str(a.dtype) and ours["count"] == a.size
    for key in ("min", "max", "mean", "std", "norm"):
        assert ours[key] == pytest.approx(expected[key], rel=1e-12, abs=1e-300), key
    assert (ours["nan"], ours["inf"], ours["argmax"]) == (expected["nan"], expected["inf"], expected["argmax"])


def test_summary_is_numpys_across_chunks_with_nan_and_inf():
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, CHUNK // 2 + 7)) * 5 + 2).astype(np.float32)  # 3 chunks, a ragged last
    assert_same(summarize(a), a)
    a[0, 5], a[1, 9], a[2, -1] = np.nan, np.inf, -np.inf
    a[2, 3] = 1e4  # the argmax, past the first chunk
    ours = summarize(a)
    assert_same(ours, a)
    assert ours["argmax"] == [2, 3] and ours["finite"] == a.size - 3


def test_no_finite_entry_has_no_numbers():
    ours = summarize(np.full((2, 3), -np.inf))
    assert ours["inf"] == 6 and ours["finite"] == 0 and ours["min"] is None and ours["argmax"] is None


def test_every_figure_of_some_steps_matches_its_tensor(client, trace):
    """Forward (masked −∞ scores), loss and backward steps: each figure that downloads a tensor
    carries that whole tensor's numbers (both sequences of a batch, not the one drawn)."""
    checked = 0
    wanted = ("attention.scores", "attention.probs", "logits", "tok_embeddings", "feed_forward.w2")
    for step in trace["steps"]:
        if not step["name"].endswith(wanted):
            continue
        view = client.get(f"/api/traces/{trace['id']}/steps/{step['index']}").json()
        for figure in view["figures"]:
            if figure["download"] is None:
                continue
            a = np.load(io.BytesIO(client.get(figure["download"]).content))
            assert_same(figure["stats"], a)
            checked += 1
            if figure["id"].endswith("attention.probs"):  # its tokens: the query's and the key's
                b, h, q, k = figure["stats"]["argmax"]
                tokens = trace["tokens"]["input_labels"][b]
                labels = [f"sequence {b}", f"head {h}", f"{q} {tokens[q]}", f"{k} {tokens[k]}"]
                assert figure["stats"]["argmax_labels"] == labels
    assert checked >= 8
