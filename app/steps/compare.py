"""The same step of two traces side by side (GET /api/traces/{a}/steps/{index}/compare/{b}):
A | B | B − A for the step's tensor and its gradient (the update step: one parameter's ΔW and
its gradient), with how far B is from A. Blocking work (a worker thread).

Two traces align when their step lists are the same list: the same config, the same number
of sequences and positions, the same steps in the same order (both with an update step, or
neither). What may differ is everything else of the spec: the dtype (float32 against float64
shows float32's round-off), the text (of the same length), the optimizer (SGD against AdamW on
the update step), the training steps before the recorded one. Traces that do not align are a
422 naming what differs.

The difference is taken in float64, slice by slice (B − A of a float32 and a float64 trace is
the float32 round-off, ~1e-7 relative), its bytes reserved in the trace budget while it runs; `rel` is ‖B − A‖₂ / ‖A‖₂ over the whole tensor, `max_rel`
max |B − A| / max |A|."""

from __future__ import annotations

import math

import numpy as np

from app import words
from app.errors import SpecError
from app.spec import spec_to_query
from app.steps.context import TraceContext, in_language
from app.steps.stats import CHUNK, summarize
from app.steps.tensors import param_entry, tensor_entry
from app.steps.titles import step_summary
from app.steps.update import shown_param
from app.traces import tensors
from app.words.said import Said

MAX_DIFFERENCES = 6  # named in a refusal


def misalignment(a: TraceContext, b: TraceContext) -> list[Said]:
    """What keeps the two traces' step lists apart (empty: they align)."""
    found = []
    ca, cb = a.trace.cfg.to_dict(), b.trace.cfg.to_dict()
    found += [Said("error-differs-config", key=k, a=str(ca[k]), b=str(cb.get(k))) for k in ca if ca[k] != cb.get(k)]
    if (a.n_seq, a.T) != (b.n_seq, b.T):
        found.append(Said("error-differs-batch", a_seq=a.n_seq, a_positions=a.T, b_seq=b.n_seq, b_positions=b.T))
    ra, rb = a.trace.records, b.trace.records
    if len(ra) != len(rb):
        has = {True: Said("error-has-update"), False: Said("error-has-no-update")}
        ua, ub = a.trace.update is not None, b.trace.update is not None
        if ua != ub:
            found.append(Said("error-differs-steps-update", a=len(ra), b=len(rb), a_update=has[ua], b_update=has[ub]))
        else:
            found.append(Said("error-differs-steps", a=len(ra), b=len(rb)))
    elif not found:
        for i, (x, y) in enumerate(zip(ra, rb, strict=True)):
            if (x.name, x.phase) != (y.name, y.phase):
                names = {"a_phase": x.phase, "a_name": x.name, "b_phase": y.phase, "b_name": y.name}
                found.append(Said("error-differs-step", index=i, **names))
                break
    return found


class _Listed(tuple):
    """Differences as one value of a sentence: each in the sentence's language, "; " between them."""

    def __str__(self) -> str:
        return self.in_(words.DEFAULT)

    def in_(self, lang: str) -> str:
        return "; ".join(item.in_(lang) for item in self)


def check_aligned(a: TraceContext, b: TraceContext) -> None:
    found = misalignment(a, b)
    if found:
        shown = found[:MAX_DIFFERENCES]
        if len(found) > MAX_DIFFERENCES:
            shown.append(Said("error-more-differences", count=len(found) - MAX_DIFFERENCES))
        raise SpecError(("path", "b"), Said("error-misaligned", b=b.spec.id, a=a.spec.id, differences=_Listed(shown)))


def difference(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, dict]:
    """B − A in float64 and how large it is against A, read in slices of CHUNK entries: B − A is
    the one whole array made (what working_bytes reserves), never a float64 copy of A or B."""
    a_flat, b_flat = np.ascontiguousarray(a).reshape(-1), np.ascontiguousarray(b).reshape(-1)
    diff = np.empty(a_flat.size, dtype=np.float64)
    norm_a2, max_a, max_abs, identical = 0.0, 0.0, None, True
    for start in range(0, a_flat.size, CHUNK):
        a64, b64 = a_flat[start : start + CHUNK].astype(np.float64), b_flat[start : start + CHUNK].astype(np.float64)
        with np.errstate(invalid="ignore"):
            part = np.subtract(b64, a64, out=diff[start : start + CHUNK])
        identical = identical and bool(np.array_equal(a64, b64, equal_nan=True))
        finite = np.isfinite(a64) & np.isfinite(part)
        if finite.any():
            kept = a64[finite]
            norm_a2 += float(kept @ kept)
            max_a = max(max_a, float(np.abs(kept).max()))
            max_abs = max(max_abs or 0.0, float(np.abs(part[finite]).max()))
    diff = diff.reshape(np.shape(a))
    stats = summarize(diff)
    norm_a = math.sqrt(norm_a2)
    return diff, {
        **stats,
        "axes": [],
        "argmax_labels": None,
        "max_abs": max_abs,
        "rel": (stats["norm"] / norm_a) if norm_a and stats["norm"] is not None else None,
        "max_rel": (max_abs / max_a) if max_a and max_abs is not None else None,
        "identical": identical,
    }


def working_bytes(a: TraceContext, index: int, param: str | None) -> int:
    """The bytes compare_view holds beyond the two traces: B − A in float64 for the larger of the
    compared tensors (one at a time) and a few slices; reserved in the trace budget before it runs."""
    record = a.trace.records[index]
    if record.phase == "update":
        name = param or shown_param(a)
        entries = math.prod(a.trace[name].shape) if name in a.trace.update.per_param else 0
    else:
        entries = math.prod(record.shape)
    return 8 * entries + 4 * 8 * min(entries, CHUNK)  # a slice: A and B in float64, a mask, |B − A|


def _pairs(
    a: TraceContext, b: TraceContext, index: int, param: str | None
) -> list[tuple[str, str, bool, object, object]]:
    """(label, tensor name, gradient?, A's array, B's array) compared on step `index`."""
    record = a.trace.records[index]
    if record.phase == "update":
        name = param or shown_param(a)
        if name not in a.trace.update.per_param:
            names = ", ".join(a.trace.update.per_param)
            raise SpecError(("query", "param"), Said("error-no-parameter", name=repr(name), names=names))
        return [
            ("ΔW", name, True, a.trace.update.per_param[name].delta, b.trace.update.per_param[name].delta),
            ("gradient", name, True, a.trace.grads[name], b.trace.grads[name]),
        ]
    name = record.name
    return [
        ("value", name, False, tensors.tensor_array(a.trace, name, False), tensors.tensor_array(b.trace, name, False)),
        ("gradient", name, True, tensors.tensor_array(a.trace, name, True), tensors.tensor_array(b.trace, name, True)),
    ]


def _figures(a, b, label, name, gradient, va, vb, diff, seq, cells, lang) -> list[dict]:
    """A, B and B − A drawn alike (the figure of one sequence; the stats of the whole tensor)."""
    out = []
    for ctx, array, side, role in ((a, va, "A", "input"), (b, vb, "B", "output"), (a, diff, "B − A", "diff")):
        figure_id, title = f"compare.{side}.{label}.{name}", f"{side}: {label}"
        if label == "ΔW":  # not a recorded tensor: its colour bar says ΔW, not the gradient's name
            values = "ΔW" if side != "B − A" else "ΔW_B − ΔW_A"
            entry = param_entry(ctx, name, np.asarray(array), figure_id, title, role, True, cells, values, lang=lang)
            out.append(entry)
            continue
        entry = tensor_entry(
            ctx,
            name,
            array,
            seq,
            figure_id=figure_id,
            title=title,
            role=role,
            gradient=gradient or side == "B − A",
            max_cells=cells,
            whole=side != "B − A",
            lang=lang,
        )
        if entry is not None:
            out.append(_colour_bar_says(entry, "B − A") if side == "B − A" else entry)
    return out


def _colour_bar_says(entry: dict, text: str) -> dict:
    """The difference is drawn as a gradient is (symmetric about 0): its colour bar names it."""
    figure = entry["figure"]
    for trace in figure.get("data", []):
        if isinstance(trace.get("colorbar"), dict):
            trace["colorbar"]["title"] = {"text": text}
    axis = figure.get("layout", {}).get("coloraxis")
    if isinstance(axis, dict) and isinstance(axis.get("colorbar"), dict):
        axis["colorbar"]["title"] = {"text": text}
    return entry


def compare_view(a: TraceContext, b: TraceContext, index: int, seq: int, param: str | None, lang: str = "en") -> dict:
    """Step `index` of the aligned traces a and b: their specs, and per compared tensor the
    figures A | B | B − A and the difference's numbers."""
    a, b = in_language(a, lang), in_language(b, lang)
    pairs = _pairs(a, b, index, param)
    cells = max(1, a.settings.max_step_cells // (3 * len(pairs)))
    compared = []
    for label, name, gradient, va, vb in pairs:
        diff, numbers = difference(va, vb)
        compared.append(
            {
                "label": label,
                "name": name,
                "gradient": gradient,
                "dtype_a": str(np.asarray(va).dtype),
                "dtype_b": str(np.asarray(vb).dtype),
                "difference": numbers,
                "figures": _figures(a, b, label, name, gradient, va, vb, diff, seq, cells, lang),
            }
        )
    return {
        **step_summary(a.trace.records[index]),
        "a": _side(a),
        "b": _side(b),
        "seq": seq,
        "tensors": compared,
    }


def _side(ctx: TraceContext) -> dict:
    loss = ctx.trace.loss
    return {
        "id": ctx.spec.id,
        "query": spec_to_query(ctx.spec.canonical),
        "dtype": ctx.spec.canonical["dtype"],  # a low precision's name (its arrays: float32)
        "loss": loss if math.isfinite(loss) else None,
        "optimizer": ctx.spec.optimizer,
        "train_steps": ctx.spec.train_steps,
    }
