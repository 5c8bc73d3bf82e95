"""The error measure every gradient check shares (xt_core/directional.py: measured)."""

import math

import pytest

from xt_core.directional import TOLERANCE, measured

T0 = 1e-3  # L(t) = -log t near a small t: a loss that curves strongly, as -log p of a rare token
STEP = 2e-4  # the plain central difference is then off by ~1.3%


def losses(h: float) -> tuple[float, float]:
    return -math.log(T0 + h), -math.log(T0 - h)


def test_a_curved_loss_is_extrapolated_and_the_resolution_reported():
    exact = -1 / T0
    plain = (losses(STEP)[0] - losses(STEP)[1]) / (2 * STEP)
    assert abs(plain - exact) / abs(exact) > 1e-2  # the case: one difference cannot check it
    check = measured("t", STEP, losses, exact, None)
    assert check.rel_error == 0.0
    assert 0 < check.resolution < 2e-3, check.resolution
    assert abs(check.numeric - exact) / abs(exact) <= check.resolution  # the extrapolated value


@pytest.mark.parametrize("wrong_by", [0.03, 0.005])
def test_a_wrong_gradient_fails_where_one_difference_could_not_tell(wrong_by):
    """A 3% or 0.5% error hides in the plain difference's 1.3% (and its spread at twice the step,
    5%); the extrapolated difference resolves it."""
    check = measured("t", STEP, losses, -(1 + wrong_by) / T0, None)
    assert check.rel_error > TOLERANCE["float64"]


def test_a_smooth_loss_is_compared_plainly():
    check = measured("t", 1e-6, lambda h: (math.sin(1 + h), math.sin(1 - h)), math.cos(1), None)
    assert check.resolution == 0.0 and check.rel_error < 1e-9
