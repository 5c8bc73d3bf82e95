"""xt_core: one training step of a small Llama-style transformer, by hand, in NumPy.

cfg = Config(...); params = init_params(cfg, seed=0)
trace = forward_backward(cfg, params, inputs, targets)
trace.loss, trace.grads, trace.records, trace["layers.0.attention.probs"], trace.grad(name)
"""

from xt_core import faults, names, optim
from xt_core.config import PRESETS, Config
from xt_core.gradcheck import check_record, gradcheck
from xt_core.jacobian import softmax_jacobian
from xt_core.model import build_tape, forward_backward, init_params, param_shapes
from xt_core.optim import SGD, AdamW
from xt_core.trace import Record, Trace
from xt_core.train import train, train_step

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
