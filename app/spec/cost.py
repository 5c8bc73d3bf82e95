"""What a spec costs before anything runs: the seconds of one training step on this class of
machine, and the bytes and seconds of a whole trace build (training steps, then the recorded
step). Admission (app/traces/admission.py) and the train_steps limit read these.
The element counts are the sizes of the recorded tensors' axes (xt_core/names.py), so an op
added to the model adds its cost here without an edit.

One step's seconds are a sum of terms, each a count known from the sizes alone times a
coefficient measured here (benchmarks/cost_model.py fits them to timed steps):

    matmul    multiply-adds of every matmul, forward and backward (3x the forward's), with
              attention's two (B, H, T, T) products: q k^T and probs v
    attention elements of the attention probabilities (B, H, T, T), one map a layer, standing for
              the scores, mask, softmax and their gradients (with hd = 2 these dominate: 16
              heads x 256^2 x 4 rows is 4M cells a layer)
    activation elements of every other recorded tensor, one position axis each: (B, T, C),
              (B, T, F), (B, T, V), (B, H, T, hd), ... (norms, SwiGLU, RoPE, softmax)
    params    the optimizer's passes over every parameter (AdamW: m, v, the update)
    layers    the op-by-op Python of a layer (tens of ops, ~0.1 ms each)
    step      what every step pays once

float64 moves twice the bytes and multiplies at about half the speed: the first four terms
scale with the item size. The fit keeps every coefficient >= 0 and is then scaled so that the
estimate covers every measured step (see CALIBRATION), so a spec accepted at the limit runs
within the limit here and well within twice it on a busier machine of the class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from xt_core.config import Config
from xt_core.model import param_shapes
from xt_core.names import estimate_build_bytes, estimate_trace_bytes, recorded_elements

if TYPE_CHECKING:
    from app.spec.resolve import ResolvedSpec

TERMS = ("matmul", "attention", "activation", "params", "layers", "step")

# Seconds per unit of each term, float32 (float64: x2 for the first four), fit by
# `python benchmarks/cost_model.py` on this class of machine (2 shared cores, one BLAS thread):
# its fit() of these terms to the CALIBRATION steps below, each rounded up.
COEFFICIENTS = {
    "matmul": 8.096e-11,
    "attention": 9.470e-08,
    "activation": 1.852e-08,
    "params": 1.202e-07,
    "layers": 3.449e-03,
    "step": 0.000e00,
}

# The steps the coefficients were fit to: (name, dtype, config fields, n_seq, T, seconds per
# step), each the slower of two runs of benchmarks/cost_model.py on this machine while other
# jobs shared its 2 cores. tests/app/test_cost.py checks that the estimate covers every one.
CALIBRATION = [
    (
        "tiny",
        "float32",
        {"vocab_size": 26, "n_layer": 1, "n_head": 4, "n_kv_head": 2, "n_embd": 16, "ffn_hidden": 24},
        1,
        8,
        0.0016,
    ),
    (
        "tiny",
        "float64",
        {"vocab_size": 26, "n_layer": 1, "n_head": 4, "n_kv_head": 2, "n_embd": 16, "ffn_hidden": 24},
        1,
        8,
        0.0019,
    ),
    (
        "class",
        "float32",
        {"vocab_size": 256, "n_layer": 4, "n_head": 8, "n_kv_head": 8, "n_embd": 256, "ffn_hidden": 688},
        1,
        128,
        0.3527,
    ),
    (
        "class",
        "float64",
        {"vocab_size": 256, "n_layer": 4, "n_head": 8, "n_kv_head": 8, "n_embd": 256, "ffn_hidden": 688},
        1,
        128,
        0.5608,
    ),
    (
        "attention",
        "float32",
        {"vocab_size": 16, "n_layer": 6, "n_head": 16, "n_kv_head": 1, "n_embd": 32, "ffn_hidden": 16},
        4,
        256,
        1.7239,
    ),
    (
        "attention",
        "float64",
        {"vocab_size": 16, "n_layer": 6, "n_head": 16, "n_kv_head": 1, "n_embd": 32, "ffn_hidden": 16},
        4,
        256,
        2.5492,
    ),
    (
        "wide",
        "float32",
        {"vocab_size": 4096, "n_layer": 1, "n_head": 8, "n_kv_head": 8, "n_embd": 512, "ffn_hidden": 2048},
        1,
        32,
        0.5473,
    ),
    (
        "wide",
        "float64",
        {"vocab_size": 4096, "n_layer": 1, "n_head": 8, "n_kv_head": 8, "n_embd": 512, "ffn_hidden": 2048},
        1,
        32,
        0.8190,
    ),
    (
        "deep",
        "float32",
        {"vocab_size": 16, "n_layer": 8, "n_head": 2, "n_kv_head": 2, "n_embd": 16, "ffn_hidden": 16},
        1,
        16,
        0.0183,
    ),
    (
        "deep",
        "float64",
        {"vocab_size": 16, "n_layer": 8, "n_head": 2, "n_kv_head": 2, "n_embd": 16, "ffn_hidden": 16},
        1,
        16,
        0.0249,
    ),
    (
        "rows",
        "float32",
        {"vocab_size": 96, "n_layer": 2, "n_head": 4, "n_kv_head": 2, "n_embd": 64, "ffn_hidden": 172},
        4,
        64,
        0.0188,
    ),
    (
        "rows",
        "float64",
        {"vocab_size": 96, "n_layer": 2, "n_head": 4, "n_kv_head": 2, "n_embd": 64, "ffn_hidden": 172},
        4,
        64,
        0.0575,
    ),
    (
        "vocab",
        "float32",
        {"vocab_size": 4096, "n_layer": 1, "n_head": 2, "n_kv_head": 2, "n_embd": 64, "ffn_hidden": 64},
        2,
        128,
        0.0663,
    ),
    (
        "vocab",
        "float64",
        {"vocab_size": 4096, "n_layer": 1, "n_head": 2, "n_kv_head": 2, "n_embd": 64, "ffn_hidden": 64},
        2,
        128,
        0.1660,
    ),
    (
        "long",
        "float32",
        {"vocab_size": 256, "n_layer": 2, "n_head": 4, "n_kv_head": 4, "n_embd": 128, "ffn_hidden": 256},
        4,
        256,
        0.1952,
    ),
    (
        "long",
        "float64",
        {"vocab_size": 256, "n_layer": 2, "n_head": 4, "n_kv_head": 4, "n_embd": 128, "ffn_hidden": 256},
        4,
        256,
        0.4341,
    ),
    (
        "class-rows",
        "float32",
        {"vocab_size": 256, "n_layer": 4, "n_head": 8, "n_kv_head": 8, "n_embd": 256, "ffn_hidden": 688},
        4,
        128,
        0.5770,
    ),
    (
        "class-rows",
        "float64",
        {"vocab_size": 256, "n_layer": 4, "n_head": 8, "n_kv_head": 8, "n_embd": 256, "ffn_hidden": 688},
        4,
        128,
        1.0051,
    ),
    (
        "wide-rows",
        "float32",
        {"vocab_size": 4096, "n_layer": 1, "n_head": 8, "n_kv_head": 8, "n_embd": 512, "ffn_hidden": 2048},
        4,
        128,
        1.8166,
    ),
    (
        "wide-rows",
        "float64",
        {"vocab_size": 4096, "n_layer": 1, "n_head": 8, "n_kv_head": 8, "n_embd": 512, "ffn_hidden": 2048},
        4,
        128,
        2.0760,
    ),
    (
        "wide-short",
        "float32",
        {"vocab_size": 4096, "n_layer": 1, "n_head": 8, "n_kv_head": 8, "n_embd": 512, "ffn_hidden": 2048},
        1,
        2,
        0.4427,
    ),
    (
        "wide-short",
        "float64",
        {"vocab_size": 4096, "n_layer": 1, "n_head": 8, "n_kv_head": 8, "n_embd": 512, "ffn_hidden": 2048},
        1,
        2,
        0.5743,
    ),
]

# The recorded step is a training step plus the update's second forward (loss after the step).
RECORDED_STEP_FACTOR = 1.5


def step_terms(cfg: Config, n_seq: int, T: int, itemsize: int) -> dict[str, float]:
    """The counts of each term for one training step of `cfg` on (n_seq, T) tokens."""
    B, L, H, K, C, F, V = n_seq, cfg.n_layer, cfg.n_head, cfg.n_kv_head, cfg.n_embd, cfg.ffn_hidden, cfg.vocab_size
    hd = cfg.head_dim
    ffn_matrices = 3 if cfg.activation == "swiglu" else 2  # W1, W3, W2 (SwiGLU); W1, W2 (GELU)
    dense = B * T * (L * (C * (H + 2 * K) * hd + H * hd * C + ffn_matrices * C * F) + V * C)
    attention_products = L * 2 * B * H * T * T * hd
    scale = itemsize / 4
    return {
        "matmul": 3 * (dense + attention_products) * scale,
        "attention": recorded_elements(cfg, n_seq, T, lambda r: r.role == "attention probs") * scale,
        "activation": recorded_elements(cfg, n_seq, T, lambda r: r.axes.count("T") == 1) * scale,
        "params": cfg.n_params() * scale,
        "layers": L,
        "step": 1,
    }


def step_seconds(cfg: Config, n_seq: int, T: int, dtype: str) -> float:
    """Estimated seconds of one training step (forward, backward, optimizer update)."""
    terms = step_terms(cfg, n_seq, T, np.dtype(dtype).itemsize)
    return sum(COEFFICIENTS[name] * terms[name] for name in TERMS)


def recorded_step_seconds(cfg: Config, n_seq: int, T: int, dtype: str) -> float:
    """Estimated seconds of a recorded step without an update: a training step's terms but the
    optimizer's passes over the parameters (SmolLM2 at 32 positions: ~1.2 s, where the params
    term alone said 16 s; measured 0.9 s, benchmarks/recompute.py)."""
    terms = step_terms(cfg, n_seq, T, np.dtype(dtype).itemsize)
    return sum(COEFFICIENTS[name] * terms[name] for name in TERMS if name != "params")


@dataclass(frozen=True)
class Cost:
    """A trace build's estimated peak bytes (held while it runs) and seconds."""

    nbytes: int
    seconds: float


def build_cost(
    cfg: Config, n_seq: int, T: int, dtype: str, train_steps: int, optimizer: dict | None, borrowed: bool = False
) -> Cost:
    """The bytes and seconds of building a trace: `train_steps` training steps, then the recorded
    step (xt_core.training.loop.train, train_step). Each step's peak is _step_peak's; its trace then
    keeps only its boundaries (xt_core.recompute), and the recorded step's update holds nothing (its
    new weights, ΔW and state are recomputed when a view asks). borrowed: a float32 trace borrows a
    loaded checkpoint's weights (never once training has changed them)."""
    itemsize = np.dtype(dtype).itemsize
    shared = borrowed and itemsize == 4 and not train_steps
    build = estimate_build_bytes(cfg, n_seq, T, itemsize, shared_params=shared)
    if not train_steps and optimizer is None:  # forward and backward only: no optimizer's passes
        return Cost(build, recorded_step_seconds(cfg, n_seq, T, dtype))
    held = estimate_trace_bytes(cfg, n_seq, T, itemsize, shared_params=shared)
    grads = cfg.n_params() * itemsize  # the weights' gradients, held through the update
    # the optimizer's state, made by the training steps and held through the recorded step's
    # (whose own update holds none: xt_core.training.optim.apply_update(hold=False))
    state = state_slots(optimizer) * grads if train_steps else 0
    temporaries = UPDATE_TEMPORARIES[optimizer["name"]] * largest_param_bytes(cfg, itemsize) if optimizer else 0
    peak = _step_peak(build, held, grads, temporaries, state)
    return Cost(peak, step_seconds(cfg, n_seq, T, dtype) * (train_steps + RECORDED_STEP_FACTOR))


# Arrays the size of the parameter being stepped that an update holds at once: its new weight and
# ΔW, and the optimizer's own temporaries (SGD: one; AdamW: its bias-corrected denominator and step,
# and the decay term). Measured on the wide-vocabulary model of tests/app/spec/test_training_bytes.py.
UPDATE_TEMPORARIES = {"sgd": 3, "adamw": 5}


def _step_peak(build: int, held: int, grads: int, temporaries: int, state: int) -> int:
    """A step with an update at its peak: its backward (the build's peak, the gradients, the
    state), or the update after it, the activations gone (the trace's boundaries, the gradients,
    the state before and after, and the largest parameter's temporaries: a training step makes
    them one parameter at a time, letting each old weight and gradient go; the recorded step's
    loss after the update makes each new weight as an op reads it, xt_core.training.update_blocks).
    SmolLM2, SGD, float32, one training step (tracemalloc peak, this estimate): 8 positions 1,244
    and 1,353 MiB; 64 positions 1,252 and 1,376 MiB."""
    return max(build + grads + state, held + grads + 2 * state + temporaries)


def spec_cost(spec: ResolvedSpec) -> Cost:
    """What building a resolved spec's trace costs (a float32 trace borrows a checkpoint's weights
    unless training steps replace them, as app.spec.resolve.check_trace_bytes counts them)."""
    (n_seq, T), (steps, borrowed) = spec.inputs.shape, steps_and_borrowed(spec)
    return build_cost(spec.cfg, n_seq, T, spec.dtype, steps, spec.optimizer, borrowed)


def steps_and_borrowed(spec: ResolvedSpec) -> tuple[int, bool]:  # a run's step replays from its checkpoint
    steps = spec.train_steps + (spec.run.replayed if spec.run is not None else 0)
    return steps, spec.checkpoint is not None and not spec.train_steps and spec.hidden_weights is None


def largest_param_bytes(cfg: Config, itemsize: int) -> int:
    """The bytes of the model's largest parameter (the embedding, or the LM head's when untied)."""
    return max(int(np.prod(shape)) for shape in param_shapes(cfg).values()) * itemsize


def state_slots(optimizer: dict | None) -> int:
    """Arrays the size of the weights an optimizer keeps between steps: AdamW's m and v, SGD's
    momentum buffer (none without momentum)."""
    if optimizer is None:
        return 0
    if optimizer["name"] == "adamw":
        return 2
    return 1 if optimizer.get("momentum") else 0


def max_steps_within(cfg: Config, n_seq: int, T: int, dtype: str, seconds: float) -> int:
    """The most training steps whose estimate stays within `seconds`."""
    return max(0, int(seconds / step_seconds(cfg, n_seq, T, dtype)))
