"""The error measure every gradient check shares (xt_core/checks/directional.py: measured)."""

import math

import pytest

from xt_core.checks.directional import DirectionCheck, StepCheck, measured
from xt_core.checks.tolerances import FINITE_DIFFERENCES

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


@pytest.mark.parametrize("step", [STEP, 4.9e-4])
@pytest.mark.parametrize("wrong_by", [0.3, 0.03, 0.005, 0.001, -0.001])
def test_a_wrong_gradient_fails_where_one_difference_could_not_tell(step, wrong_by):
    """An error of 0.1% to 30% hides in the plain difference's 1.3% (8% at the larger step) and in
    the spread of two extrapolations there; smaller steps are taken until they resolve it."""
    assert measured("t", step, losses, -1 / T0, None).rel_error <= FINITE_DIFFERENCES
    check = measured("t", step, losses, -(1 + wrong_by) / T0, None)
    assert check.rel_error > FINITE_DIFFERENCES, check


def test_a_loss_not_finite_at_twice_the_step_is_taken_again_smaller():
    """L(x + 2h u) = inf (the step crosses t = 0): that extrapolation is no measurement at all."""
    step = 0.6 * T0  # T0 - 2h < 0: -log of a negative number
    curved = lambda h: (-math.log(T0 + h) if T0 + h > 0 else math.inf, -math.log(T0 - h) if T0 - h > 0 else math.inf)  # noqa: E731
    assert measured("t", step, curved, -1 / T0, None).rel_error <= FINITE_DIFFERENCES
    assert measured("t", step, curved, -5 / T0, None).rel_error > FINITE_DIFFERENCES


def test_a_nan_error_fails_the_step_wherever_it_comes():
    checks = [DirectionCheck("a", 1.0, 1.0, 1e-12), DirectionCheck("b", 1.0, math.nan, math.nan)]
    assert not StepCheck(0, checks, 1e-6).passed and not StepCheck(0, checks[::-1], 1e-6).passed


def test_a_smooth_loss_is_compared_plainly():
    check = measured("t", 1e-6, lambda h: (math.sin(1 + h), math.sin(1 - h)), math.cos(1), None)
    assert check.resolution == 0.0 and check.rel_error < 1e-9


def curved_anywhere(h: float) -> tuple[float, float]:
    """-log(T0 + t) at t = ±h, inf where t crosses the pole."""
    return tuple(-math.log(T0 + t) if T0 + t > 0 else math.inf for t in (h, -h))


@pytest.mark.parametrize("step", [100 * T0, 30 * T0])
def test_a_step_far_past_the_curvature_still_checks_a_right_gradient(step):
    """The steps shrink until the extrapolations agree: a step 100 times the loss's scale of
    curvature (a target probability far below the step) must not fail a right gradient."""
    assert measured("t", step, curved_anywhere, -1 / T0, None).rel_error <= FINITE_DIFFERENCES
    assert measured("t", step, curved_anywhere, -1.001 / T0, None).rel_error > FINITE_DIFFERENCES


def test_an_error_below_the_first_extrapolations_resolution_is_still_found():
    """At h = T0 / 10 the first extrapolation resolves the derivative to ~1e-4; an error of 3e-5
    must not hide in that: a smaller step resolves it."""
    check = measured("t", T0 / 10, curved_anywhere, -(1 + 3e-5) / T0, None)
    assert check.rel_error > FINITE_DIFFERENCES, check


def test_a_zero_gradient_in_round_off_is_zero_not_a_resolution_of_50():
    """Attention over one repeated token: the derivative is exactly 0 and the differences are
    round-off of a loss ~10 (the badge said "max rel err <= 5.0e+1")."""

    def flat(h: float) -> tuple[float, float]:
        return 10 + 3e-15 * math.sin(1e12 * h), 10 - 2e-15 * math.cos(3e11 * h)

    check = measured("t", 1e-7, flat, 0.0, None)
    assert check.rel_error == 0.0 and check.resolution == 0.0, check
