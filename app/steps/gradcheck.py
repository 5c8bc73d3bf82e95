"""A step's gradient check as the JSON of its badge, and the words of a failed one."""

from __future__ import annotations

from app.steps.wording import num, t
from xt_core.checks.directional import StepCheck
from xt_core.checks.tolerances import FLOOR
from xt_core.precision import FORMATS

# A view answered before its check (settings.view_check_max_params): the page asks
# GET /api/traces/{id}/steps/{index}/check and shows the badge when it comes.
PENDING_CHECK = {"pending": True}


def gradcheck_json(check: StepCheck, dtype: str = "float32") -> dict:
    """The badge's JSON; `dtype`: the canonical spec's (a bfloat16 or float16 step's gradients on
    screen are that format's numbers, and their round-off is reported under its name)."""
    held = dtype if dtype in FORMATS else "float32"
    return {
        "passed": check.passed,
        "max_rel_error": check.max_rel_error,
        "tolerance": check.tolerance,
        # rel error = |analytic − numeric| / max(|analytic|, |numeric|, floor): the page states it
        "floor": FLOOR,
        # float32 traces are checked through their float64 twin; this is how far the float32
        # gradient on screen sits from it (round-off, not a wrong backward)
        f"{held}_roundoff": check.float32_roundoff,
        # the float64 twin checked fine but the float32 values on screen overflowed: the rule
        # is right, the numbers are not (a diverged run); the badge must not look all green
        f"{held}_nonfinite": check.float32_nonfinite,
        # > 0: some check's finite difference was extrapolated and resolves the gradient only to
        # this (relative); error_bound = rel_error + resolution, the most the checks vouch for
        "resolution": check.resolution,
        "error_bound": check.error_bound,
        "checks": [
            {
                "tensor": c.tensor,
                "analytic": c.analytic,
                "numeric": c.numeric,
                "rel_error": c.rel_error,
                "float32_shown": c.shown,
                "resolution": c.resolution,
            }
            for c in check.checks
        ],
    }


def failure_text(check: StepCheck, dtype: str, lang: str = "en") -> str:
    """The warning of a failed check, and why. Every check runs in float64 (a float32 trace is
    checked through its float64 twin: xt_core.checks.gradcheck), so the tolerance is float64's
    whatever the trace's dtype."""
    message = "step-check-failed-twin" if dtype != "float64" else "step-check-failed"
    error, tolerance = num(check.max_rel_error, ".3g", lang), num(check.tolerance, "g", lang)
    return t(lang, message, error=error, tolerance=tolerance)
