"""The words of the update step: the optimizer's rule, what ΔW looks like beside g (with the
cosine of this trace's shown parameter), bias correction and decoupled decay, the ratio chart
and the line search. Every number comes from the trace or the optimizer it ran."""

from __future__ import annotations

import math

import numpy as np

from app.spec.training import describe_optimizer


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """cos of the angle between two tensors taken as flat vectors (nan when either is zero)."""
    a, b = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norms if norms > 0 and math.isfinite(norms) else math.nan


def _cos_text(shown: str, cos: float) -> str:
    if not math.isfinite(cos):
        return f"for {shown} cos(ΔW, g) is undefined (a zero or non-finite tensor)"
    return f"for {shown} cos(ΔW, g) = {cos:.2f}"


def _sgd(optimizer: dict, shown: str, cos: float) -> str:
    decay = optimizer.get("weight_decay") or 0.0
    momentum = optimizer.get("momentum") or 0.0
    g = f"g + λW (weight decay λ = {decay:g})" if decay else "g"
    if momentum:
        return (
            f"SGD with momentum μ = {momentum:g} steps against a running buffer b = μ·b_prev + {g}: ΔW = −η·b. "
            "ΔW is −η·g on the first step (b starts as g) and without momentum; later b also carries the "
            "gradients of earlier steps, so ΔW need not "
            f"look like −g ({_cos_text(shown, cos)}; −1 would be g with its colours inverted, 0 unrelated). "
        )
    picture = (
        "close to the picture of g with its colours inverted while λW is small"
        if decay
        else ("the picture of g with its colours inverted")
    )
    return (
        f"SGD steps against its buffer b: ΔW = −η·b, and without momentum b = {g}, so ΔW is {picture} "
        f"({_cos_text(shown, cos)}; −1 is exactly inverted). A parameter with a large gradient takes a large step. "
    )


def step_facts(delta: np.ndarray, grad: np.ndarray, lr: float) -> dict:
    """What the shown parameter's step looks like beside its gradient, measured: cos(ΔW, g),
    cos(ΔW, −sign g) and the median |ΔW| in units of η (nan where undefined)."""
    delta = np.asarray(delta, dtype=np.float64)
    median = float(np.median(np.abs(delta))) / lr if delta.size and lr > 0 else math.nan
    return {"cos": cosine(delta, grad), "sign_cos": cosine(delta, -np.sign(grad)), "median": median}


def _adamw_step_text(t: int, shown: str, facts: dict) -> str:
    """What ΔW is at step t: −η·sign g at the first, at most about η per entry after, with this
    trace's numbers for the shown parameter."""
    measured = (
        f"for {shown} the median |ΔW| is {facts['median']:#.2g}·η, cos(ΔW, −sign g) = {facts['sign_cos']:.2f} and "
        f"cos(ΔW, g) = {facts['cos']:.2f}"
        if all(math.isfinite(v) for v in facts.values())
        else _cos_text(shown, facts["cos"])
    )
    if t == 1:
        return (
            "At this first step m̂ = g and v̂ = g², so, the decay below aside, ΔW = −η·g/(|g| + ε_adam) = −η·sign g "
            "wherever |g| is well above ε_adam: every entry moves by η whatever the size of its gradient, and ΔW is the sign of −g "
            f"rather than −g ({measured}). "
        )
    return (
        "At t = 1 ΔW was −η·sign g, every entry moving by η. Since then m̂ averages the past gradients and v̂ "
        "their squares, so |m̂|/√v̂ is 1 for an entry whose gradient stayed the same and mostly less for one "
        "whose gradient changed size or sign: |ΔW| ≲ η, often much less, and ΔW need not look like the sign of −g "
        f"any more ({measured}). "
    )


def _adamw(optimizer: dict, t: int, shown: str, facts: dict) -> str:
    b1, b2 = optimizer.get("beta1", 0.9), optimizer.get("beta2", 0.999)
    uncorrected = (1 - b1**t) / math.sqrt(1 - b2**t)
    decay = optimizer.get("weight_decay", 0.01)
    return (
        "AdamW keeps, per entry, a running mean m of the gradient and a running mean v of its square, and moves "
        "by η·m̂/(√v̂ + ε_adam) with the bias-corrected m̂ = m/(1 − β₁ᵗ) and v̂ = v/(1 − β₂ᵗ) (ε_adam = "
        f"{optimizer.get('eps', 1e-8):g} only keeps the division finite). m and v start at 0, so "
        f"early on they are too small; the correction divides that out. At this step, t = {t} (β₁ = {b1:g}, "
        f"β₂ = {b2:g}), a steady gradient would give m̂/√v̂ = ±1 but an uncorrected m/√v = (1 − β₁ᵗ)/√(1 − β₂ᵗ) "
        f"= {uncorrected:.3g}. "
        + _adamw_step_text(t, shown, facts)
        + f"Its weight decay is decoupled: every matrix (not the norm gains) also shrinks by η·λ·W (λ = {decay:g}) "
        "apart from the gradient. Adding λW to g instead (L2 regularization) would send the decay through "
        "m̂/√v̂, which rescales it entry by entry, so entries with large gradients would barely decay. "
    )


# How big each parameter's step is relative to its weights, for each optimizer at its lr (the
# ratio chart's whiskers); {lr}: the learning rate.
_RATIO_TEXT = {
    "sgd": (
        "The ratio chart shows RMS(ΔW)/RMS(W), how far each parameter moved relative to its size. For SGD it is "
        "lr·RMS(b)/RMS(W) with η = lr = {lr} (the whiskers: lr·RMS(g)/RMS(W){momentum}): it follows the "
        "gradient, and the classic rule of thumb of about 1e-3 per step is a guide for choosing lr. "
    ),
    "adamw": (
        "The ratio chart shows RMS(ΔW)/RMS(W), how far each parameter moved relative to its size. AdamW moves "
        "every entry by at most about η = lr = {lr}, so its ratio is about lr/RMS(W), set by lr and the size of the "
        "weights rather than by the gradient: the whiskers run from a tenth of lr/RMS(W) (an entry whose "
        "gradient keeps changing sign) to lr/RMS(W) (a steady gradient, and every first step). "
    ),
}
_COMMON = (
    "Beyond {large} (the dashed line) a single step moves a parameter by a tenth of its size: training is "
    "likely unstable. The gradient check covers the gradient the optimizer used, all parameters at once, along "
    "one random direction. The line search moves all parameters along −g by η and measures the loss: for "
    "small η it follows the first-order prediction loss − η‖g‖² (the gradient's promise, the tangent line); "
    "for larger η the curvature (how fast the slope itself changes) bends it back up. Its lowest point is the "
    "best plain-SGD step for this one batch."
)


def momentum_range(momentum: float, t: int) -> tuple[float, float]:
    """How much larger than η·g one SGD step is at step t (b starts as g): at most (1 − μᵗ)/(1 − μ)
    when every gradient agrees, as little as (1 − (−μ)ᵗ)/(1 + μ) when they alternate in sign."""
    if not momentum:
        return 1.0, 1.0
    return (1.0 - (-momentum) ** t) / (1.0 + momentum), (1.0 - momentum**t) / (1.0 - momentum)


def _momentum_range_text(momentum: float, t: int) -> str:
    fewest, most = momentum_range(momentum, t)
    return (
        f"; at this step, t = {t} counting this one, momentum makes it at most (1 − μᵗ)/(1 − μ) = {most:.3g} times "
        f"that when the gradient keeps its direction, and (1 − (−μ)ᵗ)/(1 + μ) = {fewest:.3g} times when it "
        "alternates in sign"
    )


def explanation(optimizer: dict, asked: dict, n_train: int, shown: str, facts: dict, large: float) -> str:
    """The optimizer's rule and what the figures show, after the training run (if any) before the step.
    `optimizer`: every field of the optimizer that ran; `asked`: the spec's; `shown`: the parameter
    whose ΔW is drawn, `facts`: its step_facts."""
    name = optimizer["name"]
    momentum = optimizer.get("momentum") or 0.0
    between = _momentum_range_text(momentum, n_train + 1) if momentum else ""
    sgd = name == "sgd"
    rule = _sgd(optimizer, shown, facts["cos"]) if sgd else _adamw(optimizer, n_train + 1, shown, facts)
    ratio = _RATIO_TEXT.get(name, "").format(lr=f"{optimizer['lr']:g}", momentum=between)
    text = rule + ratio + _COMMON.format(large=f"{large:g}")
    if n_train:
        text = (
            f"Before this step the model took {n_train} training step{'s' if n_train != 1 else ''} on this same "
            f"batch ({describe_optimizer(asked)}; the loss curve); this is the next one. " + text
        )
    return text
