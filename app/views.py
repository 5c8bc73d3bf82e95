"""The JSON of each API answer, assembled from a trace: the trace summary, one step's view,
a softmax row's Jacobian, a recorded tensor. Blocking work (call from a worker thread)."""

from __future__ import annotations

import io

import numpy as np

import xt_core
from app import figures, step_figures, update_view, walkthrough
from app.mathml import formula
from app.panels import TraceContext
from app.serialize import compact_json, figure_json, json_safe
from app.spec import DEFAULT_CONFIG, spec_to_query
from xt_core.gradcheck import StepCheck

# ---------------------------------------------------------------------- POST /api/traces


def trace_summary(ctx: TraceContext) -> dict:
    spec, trace = ctx.spec, ctx.trace
    return {
        "id": spec.id,
        "loss": trace.loss,
        "spec": spec.canonical,
        "query": spec_to_query(spec.canonical),
        "config": trace.cfg.to_dict(),
        "dtype": spec.dtype,
        "n_seq": ctx.n_seq,
        "T": ctx.T,
        "tokens": {
            "inputs": spec.inputs.tolist(),
            "targets": spec.targets.tolist(),
            "input_labels": [ctx.input_labels(s) for s in range(ctx.n_seq)],
            "target_labels": [ctx.target_labels(s) for s in range(ctx.n_seq)],
        },
        "blocks": walkthrough.blocks(trace.cfg) + ([walkthrough.UPDATE_BLOCK] if trace.update else []),
        "steps": walkthrough.steps(trace),
        "training": update_view.training_summary(ctx),
        # where NaN/inf first appear (the page's divergence banner), or null
        "first_nonfinite": first_nonfinite(ctx),
    }


# ---------------------------------------------------------------------- GET .../steps/{index}


def gradcheck_json(check: StepCheck) -> dict:
    return {
        "passed": check.passed,
        "max_rel_error": check.max_rel_error,
        "tolerance": check.tolerance,
        # float32 traces are checked through their float64 twin; this is how far the float32
        # gradient on screen sits from it (round-off, not a wrong backward)
        "float32_roundoff": check.float32_roundoff,
        # the float64 twin checked fine but the float32 values on screen overflowed: the rule
        # is right, the numbers are not (a diverged run); the badge must not look all green
        "float32_nonfinite": check.float32_nonfinite,
        "checks": [
            {
                "tensor": c.tensor,
                "analytic": c.analytic,
                "numeric": c.numeric,
                "rel_error": c.rel_error,
                "float32_shown": c.shown,
            }
            for c in check.checks
        ],
    }


def _jacobian_ref(ctx: TraceContext, record) -> dict | None:
    if record.kind != "softmax" or record.phase != "backward":
        return None
    if record.name == "probs":
        return {"kind": "output", "T": ctx.T}
    return {"kind": "attention", "layer": record.layer, "n_head": ctx.trace.cfg.n_head, "T": ctx.T}


def _shown_arrays(ctx: TraceContext, record) -> list[tuple[str, np.ndarray]]:
    """The arrays a step shows, labelled: what its NaN/inf warnings and the summary's
    first_nonfinite look at. The update step: the weights it produces (the old ones are
    inputs of earlier forward steps, so a non-finite ΔW shows here first)."""
    trace = ctx.trace
    if record.phase == "update":
        return [(f"the updated {n}", w) for n, w in trace.update.params.items()]
    if record.phase == "backward":
        arrays = [(f"dL/d({record.name})", trace.grad(record.name))]
        return arrays + [(f"the contribution to dL/d({n})", g) for n, g in record.contributions.items()]
    return [(n, trace[n]) for n in (*step_figures.float_inputs(record), record.name)]


def _nonfinite_count(label: str, array) -> int:
    """NaN and ±inf entries; masked attention scores excepted (−∞ is their value)."""
    array = np.asarray(array)
    bad = ~np.isfinite(array)
    if label.endswith(".scores"):
        bad &= ~np.triu(np.ones(array.shape[-2:], dtype=bool), k=1)
    return int(bad.sum())


def _norm_overflow(ctx: TraceContext, record) -> tuple[str, int] | None:
    """(input name, rows) where an RMSNorm's mean square overflows the trace's dtype: 1/rms is
    then 0 and the output 0, with every recorded value finite (a diverged run that would pass
    silently: the loss sits at ln V and every gradient is 0). None if the step is not one."""
    if record.kind != "rmsnorm" or record.phase != "forward":
        return None
    name = step_figures.float_inputs(record)[0]
    x = np.asarray(ctx.trace[name])
    with np.errstate(over="ignore", invalid="ignore"):
        rows = int(np.sum(np.isinf(np.mean(x * x, axis=-1)) & np.all(np.isfinite(x), axis=-1)))
    return (name, rows) if rows else None


def _overflow_warning(ctx: TraceContext, name: str, rows: int) -> str:
    biggest = float(np.max(np.abs(ctx.trace[name])))
    return (
        f"The mean square of {name} overflowed {ctx.trace.dtype} in {rows} row(s) (values up to {biggest:.2g}): "
        "1/rms became 0, so this RMSNorm outputs 0 there and no gradient flows back. The run diverged."
    )


def _nonfinite_warnings(ctx: TraceContext, record) -> list[str]:
    """NaN or ±inf in what this step shows, or inside it (an RMSNorm's overflowed mean square)."""
    overflow = _norm_overflow(ctx, record)
    if overflow is not None:
        return [_overflow_warning(ctx, *overflow)]
    found = [(label, n) for label, a in _shown_arrays(ctx, record) if (n := _nonfinite_count(label, a))]
    if record.phase == "update" and found:  # one line, not one per parameter
        names = [label.removeprefix("the updated ") for label, _ in found]
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        return [f"The updated weights hold NaN or infinite values ({shown}): the step diverged."]
    return [f"{label} holds {n} NaN or infinite value(s), drawn as gaps and sent as null." for label, n in found]


def first_nonfinite(ctx: TraceContext) -> dict | None:
    """The first step (in walkthrough order) whose values hold NaN or ±inf (or whose RMSNorm's
    mean square overflowed), or None: where the page's divergence banner points. Every later
    step is computed from it, so this is where the numbers broke, not merely one place they are."""
    trace, seen = ctx.trace, {}
    for record in trace.records:
        overflow = _norm_overflow(ctx, record)
        if overflow is not None:
            return _broken_at(trace, record, f"{overflow[0]} (its mean square)", overflow[1], "row(s) overflowed")
        for label, array in _shown_arrays(ctx, record):
            key = (id(array), label.endswith(".scores"))  # a step's inputs are earlier steps' outputs
            if key not in seen:
                seen[key] = _nonfinite_count(label, array)
            if seen[key]:
                return _broken_at(trace, record, label, seen[key])
    return None


def _broken_at(trace: xt_core.Trace, record, tensor: str, count: int, unit: str = "value(s)") -> dict:
    return {
        "index": record.index,
        "name": record.name,
        "phase": record.phase,
        "title": walkthrough.title(record),
        "tensor": tensor,
        "count": count,
        "unit": unit,  # what count counts
        "advice": _divergence_advice(trace, record),
    }


def _divergence_advice(trace: xt_core.Trace, record) -> str:
    """Why the numbers broke, as far as the spec tells: training with too large a step, or
    weights too large for the dtype (a checkpoint's, with no training)."""
    losses = np.asarray(trace.train_losses, dtype=np.float64)
    broken = np.flatnonzero(~np.isfinite(losses))
    if broken.size:
        return (
            f"the run diverged during training (its loss is NaN/inf from training step {broken[0] + 1} of "
            f"{losses.size} on) — try a smaller learning rate"
        )
    if losses.size or record.phase == "update":
        return "the run diverged — try a smaller learning rate"
    return f"the values overflowed the {trace.dtype} range — try float64, or smaller weights"


def step_view(
    ctx: TraceContext, index: int, seq: int, pos: int, check: StepCheck, max_cells: int | None = None
) -> dict:
    """`max_cells`: heatmap cells of the whole view (default settings.max_step_cells)."""
    record = ctx.trace.records[index]
    if record.phase == "update":  # the optimizer step: a view of its own
        view = update_view.step_view(ctx, record, check, walkthrough.step_summary(record), gradcheck_json(check))
        view["warnings"] = _nonfinite_warnings(ctx, record) + view["warnings"]
        return view
    trace = ctx.trace
    cells = ctx.settings.max_step_cells if max_cells is None else max_cells
    figs, warnings = step_figures.step_figures(ctx, record, seq, pos, cells)
    warnings = _nonfinite_warnings(ctx, record) + warnings
    if not check.passed:
        warnings.insert(
            0,
            f"The gradient check failed: relative error {check.max_rel_error:.3g} exceeds the "
            f"{ctx.spec.dtype} tolerance {check.tolerance:g}.",
        )
    shapes = {name: list(np.shape(trace[name])) for name in (*record.inputs, record.name)}
    return {
        **walkthrough.step_summary(record),
        "kind": record.kind,
        "explanation": walkthrough.explanation(record, trace.cfg),
        "formula": {"forward": formula(record.forward_latex), "backward": formula(record.backward_latex)},
        "shapes": shapes,
        "figures": figs,
        "gradcheck": gradcheck_json(check),
        "jacobian": _jacobian_ref(ctx, record),
        "warnings": warnings,
    }


def step_view_json(ctx: TraceContext, index: int, seq: int, pos: int, check: StepCheck) -> bytes:
    """The step view as compact JSON within settings.max_step_bytes: the cell budget keeps
    the usual view well inside; should long labels push one over, its heatmaps get half the
    cells, then a quarter, ... (a few tries: the budget bounds the figures, not the text)."""
    cells = ctx.settings.max_step_cells
    for _ in range(4):
        body = compact_json(json_safe(step_view(ctx, index, seq, pos, check, max_cells=cells)))
        if len(body) <= ctx.settings.max_step_bytes:
            break
        cells //= 2
    return body


# ---------------------------------------------------------------------- GET .../steps/{index}/head


def head_grids(ctx: TraceContext, index: int) -> list[str]:
    """Figure ids of step `index`'s grids of attention heads (what the head route enlarges)."""
    return list(step_figures.head_grids(ctx, ctx.trace.records[index]))


def head_view(ctx: TraceContext, index: int, figure_id: str, head: int, seq: int) -> dict:
    """One head of step `index`'s grid `figure_id` at full resolution (validated by the route)."""
    source = step_figures.head_grids(ctx, ctx.trace.records[index])[figure_id]
    return step_figures.head_view(ctx, index, source, head, seq)


# ---------------------------------------------------------------------- GET .../jacobian


def jacobian_view(ctx: TraceContext, layer: int | None, head: int, seq: int, pos: int, top_k: int) -> dict:
    """One softmax row's Jacobian J = diag(p) − p pᵀ and the chain-rule check
    J·dL/dp == recorded dL/dscores (attention, layer given) or dL/dlogits (layer None)."""
    trace, max_cells = ctx.trace, ctx.settings.max_heatmap_cells
    if layer is None:
        check = trace.output_jacobian(seq, pos, top_k=top_k)
        target = int(trace.targets[seq, pos])
        labels = [f"{ctx.vocab[i]}{' (target)' if i == target else ''}" for i in check.indices]
        where = f"output softmax, position {pos} ({ctx.positions(seq)[pos]})"
        recorded_name, x_title = "dL/dlogits recorded", "token"
        extra = {
            "indices": check.indices.tolist(),
            "target": target,
            "note": f"Shown: the {top_k} most probable tokens and the target; the check covers the whole row.",
        }
    else:
        check = trace.attention_jacobian(layer, head, seq, pos)
        labels = ctx.positions(seq)[: pos + 1]
        where = f"layer {layer}, head {head}, query {ctx.positions(seq)[pos]}"
        recorded_name, x_title = "dL/dscores recorded", "key"
        extra = {"note": f"Keys 0..{pos}: later keys are masked, their p is 0 and they take no part."}
    figure = figures.jacobian_heatmap(
        check.jacobian, labels, title=f"Softmax Jacobian J = diag(p) − ppᵀ: {where}", max_cells=max_cells
    )
    vectors = figures.series_bars(
        labels,
        {"J·dL/dp (chain rule)": check.chain, recorded_name: check.recorded},
        title=f"J·dL/dp against the recorded gradient: {where}",
        value_name="gradient",
        x_title=x_title,
    )
    return {
        "kind": "output" if layer is None else "attention",
        "layer": "output" if layer is None else layer,
        "head": None if layer is None else head,
        "seq": seq,
        "pos": pos,
        "labels": labels,
        "p": check.p,
        "dprobs": check.dprobs,
        "chain": check.chain,
        "recorded": check.recorded,
        "max_abs_error": check.max_abs_error,
        "max_rel_error": check.max_rel_error,
        "ok": check.ok,
        "figure": figure_json(figure)[0],
        "vectors_figure": figure_json(vectors)[0],
        **extra,
    }


# ---------------------------------------------------------------------- GET .../tensors/{name}


def tensor_array(trace: xt_core.Trace, name: str, grad: bool) -> np.ndarray:
    """The recorded tensor or its gradient; KeyError (with a message) for any other name."""
    if grad:
        if name in ("tokens", "targets"):
            raise KeyError(f"{name} are integer token ids: they have no gradient")
        if name not in trace.all_grads:
            raise KeyError(f"no recorded gradient for {name!r}")
        return np.asarray(trace.all_grads[name])
    if name not in trace.values:
        raise KeyError(f"no recorded tensor named {name!r}")
    return np.asarray(trace.values[name])


def tensor_npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


def tensor_json(name: str, array: np.ndarray, grad: bool) -> dict:
    return {"name": name, "grad": grad, "shape": list(array.shape), "dtype": str(array.dtype), "data": array}


# ---------------------------------------------------------------------- GET /api/models

_CLASS_TEXT = "Attention is all you need, they said. So the model looked back at every token it had seen, and learned."


def presets() -> list[dict]:
    """The random-init presets the home page offers. Char-tokenizer presets leave
    vocab_size null: it is then the text's alphabet size."""
    tiny = {**DEFAULT_CONFIG, "vocab_size": None}
    class_cfg = xt_core.PRESETS["class"].to_dict()
    return [
        {
            "name": "tiny-1",
            "label": "tiny, 1 layer",
            "tokenizer": "char",
            "config": {**tiny, "n_layer": 1},
            "description": "1 layer, 4 heads (2 kv heads), width 64: every picture small enough to read number by number.",
        },
        {
            "name": "tiny-2",
            "label": "tiny, 2 layers",
            "tokenizer": "char",
            "config": tiny,
            "description": "2 layers, 4 heads (2 kv heads), width 64: the default.",
        },
        {
            "name": "class",
            "label": "class: 4 layers, width 256",
            "tokenizer": "byte",
            "config": class_cfg,
            "text": _CLASS_TEXT,
            "description": "4 layers, 8 heads, width 256, byte tokenizer, up to 128 positions: the classroom demo.",
        },
    ]
