"""The JSON of each API answer, assembled from a trace: the trace summary, one step's view,
a softmax row's Jacobian, a recorded tensor. Blocking work (call from a worker thread)."""

from __future__ import annotations

import io

import numpy as np

import xt_core
from app import figures, update_view, walkthrough
from app.mathml import formula
from app.panels import TraceContext, identity_entry, loss_entry, residual_entry, tensor_entry
from app.serialize import figure_json
from app.spec import DEFAULT_CONFIG, spec_to_query
from xt_core.gradcheck import StepCheck

# Relative deviation from (p − onehot)/N beyond which the step shows a warning.
IDENTITY_TOLERANCE = {"float32": 1e-4, "float64": 1e-10}


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


def _float_inputs(record) -> list[str]:
    return [name for name in record.inputs if name not in ("tokens", "targets")]


def _forward_figures(ctx: TraceContext, record, seq: int) -> list[dict]:
    trace, out = ctx.trace, []
    for name in _float_inputs(record):
        if name == "token_loss":  # the mean's input: the per-token loss chart
            out.append(loss_entry(ctx, seq))
            continue
        title = f"Input {name}" + (" (parameter)" if ctx.is_param(name) else "")
        out.append(
            tensor_entry(
                ctx, name, trace[name], seq, figure_id=f"input.{name}", title=title, role="input", gradient=False
            )
        )
    if record.kind == "token_loss":
        out.append(loss_entry(ctx, seq))
    elif record.name != "loss":
        out.append(
            tensor_entry(
                ctx,
                record.name,
                trace[record.name],
                seq,
                figure_id=f"output.{record.name}",
                title=f"Output {record.name}",
                role="output",
                gradient=False,
            )
        )
    return [entry for entry in out if entry is not None]


def _backward_figures(ctx: TraceContext, record, seq: int, pos: int) -> tuple[list[dict], list[str]]:
    trace, out, warnings = ctx.trace, [], []
    out.append(
        tensor_entry(
            ctx,
            record.name,
            trace.grad(record.name),
            seq,
            figure_id=f"arriving.{record.name}",
            title=f"dL/d({record.name}): the gradient arriving",
            role="grad",
            gradient=True,
        )
    )
    if record.kind == "residual":
        out.append(residual_entry(ctx, record, seq))
    else:
        for name in _float_inputs(record):
            if name not in record.contributions:
                continue
            title = (
                f"dL/d({name}): the weight gradient from this op"
                if ctx.is_param(name)
                else f"Contribution of this op to dL/d({name})"
            )
            out.append(
                tensor_entry(
                    ctx,
                    name,
                    record.contributions[name],
                    seq,
                    figure_id=f"contribution.{name}",
                    title=title,
                    role="grad",
                    gradient=True,
                )
            )
    if record.name == "probs":
        entry, error = identity_entry(ctx, seq, pos)
        out.append(entry)
        scale = float(np.max(np.abs(trace["probs"]))) / trace.targets.size
        if not np.isfinite(error):
            warnings.append("p or dL/dlogits holds NaN or infinite values: the identity cannot be checked.")
        elif not error <= IDENTITY_TOLERANCE[ctx.spec.dtype] * max(scale, 1e-30):
            warnings.append(f"dL/dlogits deviates from (p − onehot)/N by up to {error:.3g}.")
    if record.kind in ("token_loss", "mean"):
        out.append(loss_entry(ctx, seq))
    return [entry for entry in out if entry is not None], warnings


def _jacobian_ref(ctx: TraceContext, record) -> dict | None:
    if record.kind != "softmax" or record.phase != "backward":
        return None
    if record.name == "probs":
        return {"kind": "output", "T": ctx.T}
    return {"kind": "attention", "layer": record.layer, "n_head": ctx.trace.cfg.n_head, "T": ctx.T}


def _nonfinite_warnings(ctx: TraceContext, record) -> list[str]:
    """NaN or ±inf in what this step shows (masked attention scores excepted: −∞ is their value)."""
    trace = ctx.trace
    if record.phase == "backward":
        arrays = [(f"dL/d({record.name})", trace.grad(record.name))]
        arrays += [(f"the contribution to dL/d({n})", g) for n, g in record.contributions.items()]
    else:
        arrays = [(n, trace[n]) for n in (*_float_inputs(record), record.name)]
    warnings = []
    for label, array in arrays:
        array = np.asarray(array)
        bad = ~np.isfinite(array)
        if label.endswith(".scores"):
            bad &= ~np.triu(np.ones(array.shape[-2:], dtype=bool), k=1)
        count = int(bad.sum())
        if count:
            warnings.append(f"{label} holds {count} NaN or infinite value(s), drawn as gaps and sent as null.")
    return warnings


def step_view(ctx: TraceContext, index: int, seq: int, pos: int, check: StepCheck) -> dict:
    record = ctx.trace.records[index]
    if record.phase == "update":  # the optimizer step: a view of its own
        return update_view.step_view(ctx, record, check, walkthrough.step_summary(record), gradcheck_json(check))
    trace = ctx.trace
    if record.phase == "backward":
        figs, warnings = _backward_figures(ctx, record, seq, pos)
    else:
        figs, warnings = _forward_figures(ctx, record, seq), []
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
