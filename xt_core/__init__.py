"""xt_core: one training step of a small Llama-style transformer, by hand, in NumPy.

cfg = Config(...); params = init_params(cfg, seed=0)
trace = forward_backward(cfg, params, inputs, targets)
trace.loss, trace.grads, trace.records, trace["layers.0.attention.probs"], trace.grad(name)
"""

from xt_core import names
from xt_core.checks.gradcheck import check_record, gradcheck
from xt_core.checks.jacobian import softmax_jacobian
from xt_core.config import PRESETS, Config
from xt_core.lab import faults
from xt_core.model import build_tape, forward_backward, init_params, param_shapes
from xt_core.trace import Record, Trace
from xt_core.training import optim
from xt_core.training.loop import train, train_step
from xt_core.training.optim import SGD, AdamW

__all__ = [
    "PRESETS",
    "SGD",
    "AdamW",
    "check_record",
    "faults",
    "gradcheck",
    "names",
    "optim",
    "train",
    "train_step",
    "Config",
    "Record",
    "Trace",
    "build_tape",
    "forward_backward",
    "init_params",
    "param_shapes",
    "softmax_jacobian",
]
