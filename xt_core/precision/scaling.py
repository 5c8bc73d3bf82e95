"""Loss scaling and the update in low precision.

A static scale S multiplies the loss before the backward (Precision.loss_scale: its gradients are
rounded at S times their size, the update reads them unscaled). The dynamic scaler is the rule
PyTorch's GradScaler and every mixed-precision trainer use: start high, halve the scale and skip
the update on a step whose gradients hold an inf or NaN, double it after `growth_interval` clean
steps in a row.

The update's own rounding: ΔW added to float32 master weights keeps what a bfloat16 weight would
lose, |ΔW| below half the spacing of the format at W (update_loss says how much).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from xt_core.model import forward_backward
from xt_core.precision.formats import Format
from xt_core.precision.policy import MAX_LOSS_SCALE_EXPONENT, Precision, check_loss_scale
from xt_core.training.loop import train_step
from xt_core.training.optim import PerParam, Update, apply_update

MAX_GROWTH_INTERVAL = 100_000


@dataclass(frozen=True)
class DynamicLossScale:
    """The scaler's state: the scale now and the clean steps since it last changed."""

    scale: float = 2.0**16
    growth_interval: int = 2000
    clean_steps: int = 0

    def __post_init__(self):
        check_loss_scale(self.scale)
        interval = self.growth_interval
        if isinstance(interval, bool) or not isinstance(interval, int) or not 1 <= interval <= MAX_GROWTH_INTERVAL:
            raise ValueError(f"growth_interval must be an integer in [1, {MAX_GROWTH_INTERVAL}], got {interval!r}")

    def after(self, finite: bool) -> DynamicLossScale:
        """The scaler after a step whose gradients were all finite (or not): halved (never below 1)
        on inf/NaN, doubled (never past 2^MAX_LOSS_SCALE_EXPONENT) after growth_interval clean steps."""
        if not finite:
            return dataclasses.replace(self, scale=max(1.0, self.scale / 2), clean_steps=0)
        if self.clean_steps + 1 >= self.growth_interval:
            return dataclasses.replace(self, scale=min(2.0**MAX_LOSS_SCALE_EXPONENT, self.scale * 2), clean_steps=0)
        return dataclasses.replace(self, clean_steps=self.clean_steps + 1)


@dataclass(frozen=True)
class ScaledStep:
    """One step under a dynamic scaler: its trace, whether its update was skipped (a gradient not
    finite), the parameters and optimizer state after it and the scaler for the next step."""

    trace: object
    skipped: bool
    params: dict
    state: dict
    scaler: DynamicLossScale


def scaled_step(cfg, params: dict, inputs, targets, optimizer, state: dict, precision: Precision, scaler) -> ScaledStep:
    """The backward at the scaler's scale; the update (on the unscaled float32 gradients, to the
    float32 master weights) only if every parameter's gradient is finite, else skipped."""
    at_scale = dataclasses.replace(precision, loss_scale=scaler.scale)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is what this step looks for
        trace = forward_backward(cfg, params, inputs, targets, keep_param_grads=True, precision=at_scale)
    grads = {name: trace.grads[name] for name in trace.param_names}
    finite = all(bool(np.isfinite(g).all()) for g in grads.values())
    if finite:
        update = apply_update(optimizer, params, grads, state, trace.loss)
        params, state = dict(update.params), dict(update.state)
    return ScaledStep(trace, not finite, params, state, scaler.after(finite))


def recorded_scaled_step(cfg, params: dict, inputs, targets, optimizer, state: dict, precision: Precision, **kwargs):
    """The recorded training step (xt_core.training.loop.train_step) under the dynamic scaler, at
    precision's scale: if a parameter's gradient overflowed, its update is skipped as scaled_step
    skips it, recorded as such (Update.skipped: ΔW = 0, the weights and optimizer state as they
    were, the loss after = the loss before). kwargs: train_step's (a bug-lab fault)."""
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is what this step looks for
        trace = train_step(cfg, params, inputs, targets, optimizer, state, precision=precision, **kwargs)
    update = trace.update
    if all(math.isfinite(p.grad_norm) for p in update.per_param.values()):
        return trace
    trace.update = skipped_update(update, params, state)
    return trace


def skipped_update(update: Update, params: dict, state: dict) -> Update:
    """`update` as a loss scaler records it when it skips it: nothing moved (its gradient norms kept)."""
    per_param = {
        name: dataclasses.replace(
            p, update_rms=0.0, new_nonfinite=0, _delta=(lambda w: lambda: np.zeros_like(w))(params[name])
        )
        for name, p in update.per_param.items()
    }
    before = PerParam(params, lambda name: dict(state.get(name, {})))
    return dataclasses.replace(
        update,
        params=PerParam(params, params.__getitem__),
        state=before,
        per_param=per_param,
        loss_after=update.loss_before,
        held=False,
        skipped=True,
    )


def update_loss(weight: np.ndarray, delta: np.ndarray, fmt: Format) -> float:
    """The fraction of an update lost to rounding when ΔW is added to weights held in `fmt` (no
    float32 master copy): ||(W_low + ΔW rounded) - W_low - ΔW|| / ||ΔW||, W_low the weights in the
    format. 1: the whole update vanished; 0: none of it."""
    low = fmt.round(weight)
    applied = fmt.round(low + np.asarray(delta, dtype=np.float32)) - low
    size = float(np.linalg.norm(np.asarray(delta, dtype=np.float64)))
    return float(np.linalg.norm(applied.astype(np.float64) - delta)) / size if size else 0.0


def train_in_precision(
    cfg, params: dict, optimizer, batches, steps: int, precision: Precision, growth=None, progress=None
):
    """`steps` updates in `precision` (xt_core.training.loop.train's, each step's backward rounded):
    at its static loss scale, or with `growth` (an interval) under the dynamic scaler starting at
    that scale, a step whose gradients are not all finite skipped. Returns (params, optimizer state,
    losses, the precision at the scale the next step runs at)."""
    scaler = DynamicLossScale(precision.loss_scale, growth) if growth is not None else None
    state: dict = {}
    losses = []
    for step in range(steps):
        inputs, targets = next(batches)
        if scaler is None:
            trace = forward_backward(cfg, params, inputs, targets, keep_param_grads=True, precision=precision)
            update = apply_update(optimizer, params, {n: trace.grads[n] for n in trace.param_names}, state, trace.loss)
            params, state = dict(update.params), dict(update.state)
        else:
            done = scaled_step(cfg, params, inputs, targets, optimizer, state, precision, scaler)
            trace, params, state, scaler = done.trace, done.params, done.state, done.scaler
        losses.append(trace.loss)
        if progress:
            progress(step, trace.loss)
        del trace
    at_scale = precision if scaler is None else dataclasses.replace(precision, loss_scale=scaler.scale)
    return params, state, losses, at_scale
