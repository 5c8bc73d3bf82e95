"""Where the numbers broke: NaN or ±inf in what a step shows (or an RMSNorm whose mean square
overflowed, which leaves every value finite), as step warnings and as the summary's
`first_nonfinite` that the page's divergence banner points at."""

from __future__ import annotations

import numpy as np

import xt_core
from app.steps.context import TraceContext
from app.steps.kind import float_inputs
from app.steps.titles import title
from app.steps.wording import num, t
from xt_core.training.optim import ParamUpdate


def _shown_arrays(ctx: TraceContext, record, lang: str) -> list[tuple[str, str, np.ndarray]]:
    """The arrays a step shows, as (tensor name, label in `lang`, array): what its NaN/inf
    warnings and the summary's first_nonfinite look at. The update step: the weights it produces
    (the old ones are inputs of earlier forward steps, so a non-finite ΔW shows here first)."""
    trace = ctx.trace
    if record.phase == "update":  # counted when the update ran (its new weights are not held)
        return [(n, t(lang, "step-nonfinite-updated-tensor", tensor=n), u) for n, u in trace.update.per_param.items()]
    if record.phase == "backward":
        arrays = [(record.name, t(lang, "step-nonfinite-gradient", tensor=record.name), trace.grad(record.name))]
        return arrays + [
            (n, t(lang, "step-nonfinite-contribution", tensor=n), g) for n, g in record.contributions.items()
        ]
    return [(n, n, trace[n]) for n in (*float_inputs(record), record.name)]


def _masked(name: str, label: str) -> bool:
    """Attention scores as they are (not a gradient of them): their masked cells hold −∞."""
    return name == label and name.endswith(".scores")


def _nonfinite_count(masked: bool, array) -> int:
    """NaN and ±inf entries; masked attention scores excepted (−∞ is their value)."""
    if isinstance(array, ParamUpdate):
        return array.new_nonfinite
    array = np.asarray(array)
    if array.dtype.kind == "f" and not masked:
        with np.errstate(all="ignore"):
            if np.isfinite(np.sum(array)):  # one pass, no temporaries: NaN or ±inf anywhere makes it so
                return 0  # (a sum that overflows a finite array is counted below)
    bad = ~np.isfinite(array)
    if masked:
        bad &= ~np.triu(np.ones(array.shape[-2:], dtype=bool), k=1)
    return int(bad.sum())


def _norm_overflow(ctx: TraceContext, record) -> tuple[str, int] | None:
    """(input name, rows) where an RMSNorm's mean square overflows the trace's dtype: 1/rms is
    then 0 and the output 0, with every recorded value finite (a diverged run that would pass
    silently: the loss sits at ln V and every gradient is 0). None if the step is not one."""
    if record.kind != "rmsnorm" or record.phase != "forward":
        return None
    name = float_inputs(record)[0]
    x = np.asarray(ctx.trace[name])
    with np.errstate(over="ignore", invalid="ignore"):
        rows = int(np.sum(np.isinf(np.mean(x * x, axis=-1)) & np.all(np.isfinite(x), axis=-1)))
    return (name, rows) if rows else None


def _overflow_warning(ctx: TraceContext, name: str, rows: int, lang: str) -> str:
    biggest = num(float(np.max(np.abs(ctx.trace[name]))), ".2g", lang)
    return t(lang, "step-nonfinite-overflow", tensor=name, dtype=str(ctx.trace.dtype), rows=rows, biggest=biggest)


def nonfinite_warnings(ctx: TraceContext, record, lang: str = "en") -> list[str]:
    """NaN or ±inf in what this step shows, or inside it (an RMSNorm's overflowed mean square)."""
    overflow = _norm_overflow(ctx, record)
    if overflow is not None:
        return [_overflow_warning(ctx, *overflow, lang)]
    shown = _shown_arrays(ctx, record, lang)
    found = [(name, label, n) for name, label, a in shown if (n := _nonfinite_count(_masked(name, label), a))]
    if record.phase == "update" and found:  # one line, not one per parameter
        names = ", ".join(name for name, _, _ in found[:3])
        if len(found) > 3:
            return [t(lang, "step-nonfinite-updated-more", names=names, more=len(found) - 3)]
        return [t(lang, "step-nonfinite-updated", names=names)]
    return [t(lang, "step-nonfinite-values", tensor=label, count=n) for _, label, n in found]


def first_nonfinite(ctx: TraceContext, lang: str = "en") -> dict | None:
    """The first step (in walkthrough order) whose values hold NaN or ±inf (or whose RMSNorm's
    mean square overflowed), or None: where the page's divergence banner points. Every later
    step is computed from it, so this is where the numbers broke, not merely one place they are.
    A step whose build found every value and activation gradient finite (Trace.all_finite) and
    that has no update has none: its layers are not replayed to scan them again."""
    trace, seen = ctx.trace, {}
    if trace.all_finite and trace.update is None:
        return None
    for record in trace.records:
        overflow = _norm_overflow(ctx, record)
        if overflow is not None:
            tensor = t(lang, "step-overflowed-tensor", tensor=overflow[0])
            return _broken_at(trace, record, tensor, overflow[1], lang, "step-unit-rows")
        for name, label, array in _shown_arrays(ctx, record, lang):
            masked = _masked(name, label)
            key = (id(array), masked)  # a step's inputs are earlier steps' outputs
            if key not in seen:
                seen[key] = _nonfinite_count(masked, array)
            if seen[key]:
                return _broken_at(trace, record, label, seen[key], lang)
    return None


def _broken_at(
    trace: xt_core.Trace, record, tensor: str, count: int, lang: str, unit: str = "step-unit-values"
) -> dict:
    return {
        "index": record.index,
        "name": record.name,
        "phase": record.phase,
        "title": title(record),
        "tensor": tensor,
        "count": count,
        "unit": t(lang, unit),  # what count counts
        "advice": _divergence_advice(trace, record, lang),
    }


def _divergence_advice(trace: xt_core.Trace, record, lang: str) -> str:
    """Why the numbers broke, as far as the spec tells: training with too large a step, or
    weights too large for the dtype (a checkpoint's, with no training)."""
    losses = np.asarray(trace.train_losses, dtype=np.float64)
    broken = np.flatnonzero(~np.isfinite(losses))
    if broken.size:
        return t(lang, "step-diverged-training", step=int(broken[0]) + 1, steps=int(losses.size))
    if losses.size or record.phase == "update":
        return t(lang, "step-diverged")
    return t(lang, "step-overflowed", dtype=str(trace.dtype))
