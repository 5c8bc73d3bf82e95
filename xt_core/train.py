"""The training step's last part, the update, and short training runs.

trace = train_step(cfg, params, inputs, targets, AdamW(lr=3e-3), state)
trace.update.params   # the parameters after the step; trace.update.loss_after on the same batch
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Mapping

import numpy as np

from xt_core.config import Config
from xt_core.model import build_tape, check_params, check_tokens, forward_backward
from xt_core.optim import AdamW, PerParam, apply_update
from xt_core.tape import replay_loss
from xt_core.trace import Trace

SGD_TEX = r"b \leftarrow \mu b + g, \qquad W \leftarrow W - \eta\, b"
ADAMW_TEX = (
    r"m \leftarrow \beta_1 m + (1-\beta_1) g, \quad v \leftarrow \beta_2 v + (1-\beta_2) g^2, \quad "
    r"W \leftarrow W - \eta \Big(\frac{m / (1-\beta_1^t)}{\sqrt{v / (1-\beta_2^t)} + \epsilon} + \lambda W\Big)"
)


def forward_loss(cfg: Config, params: Mapping, inputs, targets) -> float:
    """The loss alone (no backward, nothing kept). `params` may be computed on demand (an
    Update's new weights, weights moved along -g): each is built when an op reads it and
    dropped after, so a real model's forward never holds a second copy of its weights."""
    if isinstance(params, dict):
        check_params(cfg, params)
    tokens, targets = check_tokens(cfg, inputs, targets)
    return replay_loss(build_tape(cfg), {"tokens": tokens, "targets": targets}, 0, replace=params)


def train_step(cfg: Config, params: dict, inputs, targets, optimizer, state: dict | None = None, **kwargs) -> Trace:
    """forward_backward, then one optimizer update, recorded as the trace's last step."""
    trace = forward_backward(cfg, params, inputs, targets, **kwargs)
    # not held: the views recompute ΔW per parameter (a real model's would double the trace)
    update = apply_update(optimizer, params, trace.grads, state, trace.loss, hold=False)
    update.loss_after = forward_loss(cfg, update.params, inputs, targets)
    tex = ADAMW_TEX if isinstance(optimizer, AdamW) else SGD_TEX
    trace.attach_update(update, tex)
    return trace


def lr_schedule(lr: float, steps: int, warmup: int = 0, decay: str = "constant") -> Callable[[int], float]:
    """step -> learning rate: linear warm-up from lr / warmup to lr over the first `warmup` steps,
    then constant or a cosine from lr down to lr / 2 * (1 + cos(pi * (steps - 1) / steps)), never 0."""
    if decay not in ("constant", "cosine"):
        raise ValueError(f'decay must be "constant" or "cosine", got {decay!r}')
    if isinstance(warmup, bool) or not isinstance(warmup, int) or not 0 <= warmup <= steps:
        raise ValueError(f"warmup must be an integer in [0, steps = {steps}], got {warmup!r}")

    def at(step: int) -> float:
        scale = (step + 1) / warmup if step < warmup else 1.0
        if decay == "cosine":
            scale *= 0.5 * (1 + math.cos(math.pi * step / steps))
        return lr * scale

    return at


def train(
    cfg: Config,
    params: dict,
    optimizer,
    batches: Iterator[tuple[np.ndarray, np.ndarray]],
    steps: int,
    progress: Callable[[int, float], None] | None = None,
    lr_at: Callable[[int], float] | None = None,
) -> tuple[dict, dict, list[float]]:
    """`steps` updates on successive batches; returns (params, optimizer state, losses).
    lr_at(step) (e.g. lr_schedule) replaces the optimizer's lr at each step; without it lr is constant.
    Deterministic: the same params, optimizer and batches give the same bits."""
    state: dict = {}
    losses = []
    for step in range(steps):
        inputs, targets = next(batches)
        trace = forward_backward(cfg, params, inputs, targets)
        stepper = optimizer if lr_at is None else dataclasses.replace(optimizer, lr=lr_at(step))
        update = apply_update(stepper, params, trace.grads, state, trace.loss)
        params, state = update.params, update.state
        losses.append(trace.loss)
        if progress:
            progress(step, trace.loss)
    return params, state, losses


def line_search(cfg: Config, trace: Trace, params: dict, etas) -> dict:
    """loss(θ - η g) along the gradient, beside the first-order prediction loss - η ||g||²."""
    grads = trace.grads
    g2 = sum(float(np.sum(np.square(g, dtype=np.float64))) for g in grads.values())
    actual = []
    for eta in etas:
        # every parameter moved by -eta * g, built when an op reads it
        moved = PerParam(params, lambda n, eta=eta: _moved(params[n], grads[n], eta))
        actual.append(forward_loss(cfg, moved, trace.tokens, trace.targets))
    return {
        "eta": [float(e) for e in etas],
        "loss": actual,
        "first_order": [trace.loss - float(e) * g2 for e in etas],
        "grad_norm_sq": g2,
    }


def _moved(p: np.ndarray, g: np.ndarray, eta: float) -> np.ndarray:
    """p - eta g as one new array."""
    moved = np.multiply(g, -p.dtype.type(eta))
    moved += p
    return moved
