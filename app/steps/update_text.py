"""The words of the update step: the optimizer's rule, what ΔW looks like beside g (with the
cosine of this trace's shown parameter), bias correction and decoupled decay, the ratio chart
and the line search. Every number comes from the trace or the optimizer it ran."""

from __future__ import annotations

import math

import numpy as np

from app.spec.training import describe_optimizer
from app.steps.wording import num, t


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """cos of the angle between two tensors taken as flat vectors (nan when either is zero)."""
    a, b = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norms if norms > 0 and math.isfinite(norms) else math.nan


def _cos_text(shown: str, cos: float, lang: str) -> str:
    if not math.isfinite(cos):
        return t(lang, "step-cos-undefined", param=shown)
    return t(lang, "step-cos", param=shown, cos=num(cos, ".2f", lang))


def _sgd(optimizer: dict, shown: str, cos: float, lang: str) -> str:
    decay = optimizer.get("weight_decay") or 0.0
    momentum = optimizer.get("momentum") or 0.0
    gradient = t(lang, "step-sgd-decay", decay=num(decay, "g", lang)) if decay else "g"
    cos_text = _cos_text(shown, cos, lang)
    if momentum:
        return t(lang, "step-sgd-momentum", momentum=num(momentum, "g", lang), gradient=gradient, cos=cos_text)
    return t(lang, "step-sgd-plain-decay" if decay else "step-sgd-plain", gradient=gradient, cos=cos_text)


def step_facts(delta: np.ndarray, grad: np.ndarray, lr: float) -> dict:
    """What the shown parameter's step looks like beside its gradient, measured: cos(ΔW, g),
    cos(ΔW, −sign g) and the median |ΔW| in units of η (nan where undefined)."""
    delta = np.asarray(delta, dtype=np.float64)
    median = float(np.median(np.abs(delta))) / lr if delta.size and lr > 0 else math.nan
    return {"cos": cosine(delta, grad), "sign_cos": cosine(delta, -np.sign(grad)), "median": median}


def _adamw_step_text(t_step: int, shown: str, facts: dict, lang: str) -> str:
    """What ΔW is at step t: −η·sign g at the first, at most about η per entry after, with this
    trace's numbers for the shown parameter."""
    if all(math.isfinite(v) for v in facts.values()):
        numbers = {name: num(facts[name], ".2f", lang) for name in ("sign_cos", "cos")}
        median = num(facts["median"], "#.2g", lang)
        measured = t(lang, "step-adamw-measured", param=shown, median=median, **numbers)
    else:
        measured = _cos_text(shown, facts["cos"], lang)
    return t(lang, "step-adamw-first" if t_step == 1 else "step-adamw-later", measured=measured)


def _adamw(optimizer: dict, t_step: int, shown: str, facts: dict, lang: str) -> str:
    b1, b2 = optimizer.get("beta1", 0.9), optimizer.get("beta2", 0.999)
    uncorrected = (1 - b1**t_step) / math.sqrt(1 - b2**t_step)
    return t(
        lang,
        "step-adamw",
        eps=num(optimizer.get("eps", 1e-8), "g", lang),
        t=t_step,
        beta1=num(b1, "g", lang),
        beta2=num(b2, "g", lang),
        uncorrected=num(uncorrected, ".3g", lang),
        step=_adamw_step_text(t_step, shown, facts, lang),
        decay=num(optimizer.get("weight_decay", 0.01), "g", lang),
    )


def _ratio_text(optimizer: dict, t_step: int, lang: str) -> str:
    """How big each parameter's step is relative to its weights, for the optimizer at its lr
    (the ratio chart's whiskers); "" for an optimizer it has no words for."""
    lr = num(optimizer["lr"], "g", lang)
    momentum = optimizer.get("momentum") or 0.0
    if optimizer["name"] == "adamw":
        return t(lang, "step-ratio-adamw", lr=lr)
    if optimizer["name"] != "sgd":
        return ""
    if not momentum:
        return t(lang, "step-ratio-sgd", lr=lr)
    fewest, most = momentum_range(momentum, t_step)
    most, fewest = num(most, ".3g", lang), num(fewest, ".3g", lang)
    return t(lang, "step-ratio-sgd-momentum", lr=lr, t=t_step, most=most, fewest=fewest)


def momentum_range(momentum: float, t: int) -> tuple[float, float]:
    """How much larger than η·g one SGD step is at step t (b starts as g): at most (1 − μᵗ)/(1 − μ)
    when every gradient agrees, as little as (1 − (−μ)ᵗ)/(1 + μ) when they alternate in sign."""
    if not momentum:
        return 1.0, 1.0
    return (1.0 - (-momentum) ** t) / (1.0 + momentum), (1.0 - momentum**t) / (1.0 - momentum)


def explanation(
    optimizer: dict, asked: dict, n_train: int, shown: str, facts: dict, large: float, lang: str = "en"
) -> str:
    """The optimizer's rule and what the figures show, after the training run (if any) before the step.
    `optimizer`: every field of the optimizer that ran; `asked`: the spec's; `shown`: the parameter
    whose ΔW is drawn, `facts`: its step_facts."""
    if optimizer["name"] == "sgd":
        rule = _sgd(optimizer, shown, facts["cos"], lang)
    else:
        rule = _adamw(optimizer, n_train + 1, shown, facts, lang)
    ratio = _ratio_text(optimizer, n_train + 1, lang)
    sentences = [rule, ratio, t(lang, "step-update-common", large=num(large, "g", lang))]
    if n_train:
        sentences.insert(0, t(lang, "step-update-trained", steps=n_train, optimizer=describe_optimizer(asked, lang)))
    return " ".join(sentence for sentence in sentences if sentence)
