"""The tolerances every check reads, named by what they compare: a gradient check, the softmax
chain rule, the softmax + cross-entropy identity, an exercise against xt's own backward.

A comparison made in the trace's own dtype allows that dtype's round-off (ByDtype); one made in
float64 whatever the trace's dtype (finite differences: a float32 trace is checked through its
float64 twin) has one number.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ByDtype:
    """A relative error allowed, by the dtype the compared numbers were computed in."""

    float32: float
    float64: float
    # a bfloat16 or float16 step (xt_core.precision): its gradients rounded to the format, whose unit
    # round-off is 2^-8 and 2^-11
    bfloat16: float = 2e-2
    float16: float = 3e-3

    def of(self, dtype) -> float:
        return getattr(self, dtype if dtype in ("bfloat16", "float16") else np.dtype(dtype).name)


# A gradient against float64 central differences of the true loss (truncation and round-off
# stay near 1e-9, so a wrong backward, many orders above, cannot hide under it).
FINITE_DIFFERENCES = 1e-6
# Below this a derivative counts as zero (masked scores, a lone token's softmax).
FLOOR = 1e-10
# A central difference cannot see below the round-off of the two losses it subtracts: about an
# ulp of L each, divided by 2h. Discrepancies within ROUNDOFF_ULPS of that are not held against
# the gradient (an exactly-zero gradient, e.g. attention over one repeated token, otherwise
# "fails" on 1e-11 of pure noise).
ROUNDOFF_ULPS = 64
# Where no extrapolated difference resolves the truncation below FINITE_DIFFERENCES or the
# round-off: the most truncation a verdict may forgive (relative).
RESOLVED = 1e-4
# J @ dL/dp against the recorded dL/dscores: the same products summed in another order.
CHAIN_RULE = ByDtype(float32=1e-4, float64=1e-9)
# The recorded dL/dlogits against (p - onehot)/N, relative to the row's largest entry.
SOFTMAX_IDENTITY = ByDtype(float32=1e-4, float64=1e-10)
# A backward written by a learner against xt's, in float64 on the same inputs: only round-off
# may differ.
SAME_INPUTS = 1e-8
