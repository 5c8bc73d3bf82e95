"""Low-precision steps: bfloat16 and float16 over float32 master weights (formats.py: rounding;
policy.py: which op runs in which precision; scaling.py: loss scaling; health.py: how much each
tensor lost against the float64 twin). docs/precision.md states the model."""

from xt_core.precision.formats import BFLOAT16, FLOAT16, FORMATS, Format
from xt_core.precision.policy import FLOAT32, OP_PRECISION, ROUNDED, Precision, check_loss_scale

__all__ = [
    "BFLOAT16",
    "FLOAT16",
    "FLOAT32",
    "FORMATS",
    "OP_PRECISION",
    "ROUNDED",
    "Format",
    "Precision",
    "check_loss_scale",
]
