"""The numbers' health of a bfloat16 or float16 trace as JSON (GET /api/traces/{id}/precision): its
rounding model (which op runs in which precision, forward and backward), the loss scale, the rule for
losing information, and each recorded tensor's and gradient's health against the float64 twin
(xt_core.precision.health). Structure only: the page words it from app/words/locales/*/precision.ftl."""

from __future__ import annotations

from xt_core.precision import FORMATS, OP_PRECISION
from xt_core.precision.health import (
    LOSES_INFORMATION_FLUSHED,
    LOSES_INFORMATION_ROUNDOFFS,
    first_losing,
    param_health,
    trace_health,
    update_losses,
)

# The parameters' gradients are compared with one float64 step of their own, holding a float64 copy
# of the weights and their gradients: 16 bytes a parameter (SmolLM2-135M: 2.2 GB). Past this many
# parameters (a real model) the answer leaves them out (`params`: null).
PARAM_HEALTH_MAX_PARAMS = 20_000_000


def precision_json(trace) -> dict:
    """The answer for a low-precision trace (the caller refuses any other)."""
    policy = trace.precision
    summary = trace_health(trace)
    first = first_losing(summary)
    kinds = sorted({node.kind for node in trace.nodes})
    lost = update_losses(trace)
    return {
        "dtype": policy.name,
        "loss_scale": policy.loss_scale,
        "flush_to_zero": policy.flush_to_zero,
        "unit_roundoff": policy.format.unit_roundoff,
        # every low format's exponents, for a histogram that marks them side by side
        "formats": {
            fmt.name: {
                "subnormal": fmt.min_exponent - fmt.mantissa,
                "normal": fmt.min_exponent,
                "largest": fmt.max_exponent,
            }
            for fmt in FORMATS.values()
        },
        "rule": {"roundoffs": LOSES_INFORMATION_ROUNDOFFS, "flushed": LOSES_INFORMATION_FLUSHED},
        # "rounded" or "float32", forward and backward alike (docs/precision.md says what each does)
        "ops": [{"kind": kind, "precision": OP_PRECISION[kind]} for kind in kinds],
        "first_losing": None if first is None else {"name": first[0], "which": first[1]},
        "tensors": [
            {"name": name, "value": health["value"].as_json(), "grad": health["grad"].as_json()}
            for name, health in summary.items()
        ],
        "params": _params(trace),
        # a training step's: the share of each parameter's ||ΔW|| weights held in the format would lose
        "update": None if lost is None else [{"name": name, "lost": share} for name, share in lost.items()],
    }


def _params(trace) -> list[dict] | None:
    if trace.cfg.n_params() > PARAM_HEALTH_MAX_PARAMS:
        return None
    return [{"name": name, "grad": health.as_json()} for name, health in param_health(trace).items()]
