"""The demo tasks' batch streams and the learning-rate schedule that `xt train` uses."""

import itertools

import numpy as np
import pytest

from xt_core.lab.tasks import INDUCTION_DISTINCT_BATCHES, INDUCTION_PERIODS, induction_batches
from xt_core.training.loop import lr_schedule


def periodic_tail(row: np.ndarray) -> int | None:
    """The period p in INDUCTION_PERIODS that most of the row's last 14 tokens copy from p back."""
    low, high = INDUCTION_PERIODS
    matches = {p: np.mean(row[-14:] == row[-14 - p : len(row) - p]) for p in range(low, high + 1)}
    best = max(matches, key=matches.get)
    return best if matches[best] >= 0.7 else None


def test_induction_rows_repeat_with_varying_periods_and_the_stream_is_seeded():
    inputs, targets = next(induction_batches(26, 32, 64, seed=1))
    assert inputs.shape == targets.shape == (64, 32)
    np.testing.assert_array_equal(inputs[:, 1:], targets[:, :-1])
    rows = np.concatenate([inputs, targets[:, -1:]], axis=1)
    periods = [periodic_tail(row) for row in rows]
    assert sum(p is not None for p in periods) >= 48 and len(set(periods)) > 6  # a long period copies less
    np.testing.assert_array_equal(next(induction_batches(26, 32, 64, seed=1))[0], inputs)


def test_induction_segments_draw_with_replacement_after_the_curriculum():
    stream = induction_batches(26, 32, 64, seed=2)
    early = np.concatenate(next(stream), axis=1)
    late_inputs, _ = next(itertools.islice(stream, INDUCTION_DISTINCT_BATCHES - 1, None))
    # 3-letter windows inside a segment: distinct letters early; repeated letters happen late
    early_repeats = sum(len(set(row[i : i + 3])) < 3 for row in early[:, :32] for i in range(0, 3))
    late_repeats = sum(len(set(row[i : i + 3])) < 3 for row in late_inputs for i in range(3, 6))
    assert late_repeats > early_repeats


def test_lr_schedule_warms_up_then_decays_by_a_cosine_and_never_reaches_zero():
    at = lr_schedule(1e-2, 100, warmup=10, decay="cosine")
    assert at(0) == pytest.approx(1e-3 * 0.5 * (1 + np.cos(0)))
    assert at(9) == pytest.approx(1e-2 * 0.5 * (1 + np.cos(np.pi * 9 / 100)))
    lrs = [at(s) for s in range(10, 100)]
    assert all(a > b for a, b in itertools.pairwise(lrs)) and lrs[-1] > 0
    assert lr_schedule(3e-3, 50)(49) == 3e-3
    with pytest.raises(ValueError, match="warmup must be an integer in"):
        lr_schedule(1e-3, 10, warmup=11)
    with pytest.raises(ValueError, match='decay must be "constant" or "cosine"'):
        lr_schedule(1e-3, 10, decay="linear")
