"""The bug lab's JSON answers, assembled from traces: the catalogue for a config, the
all-steps check chart, the faulty-vs-correct diff of a backward step, the quiz's verdict.
Blocking work (call from a worker thread)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from app import walkthrough
from app.buglab import fault_json
from app.buglab_figures import check_errors_chart, diff_panels
from app.checks import ChecksJob
from app.panels import TraceContext
from app.serialize import figure_json
from xt_core import Config
from xt_core.faults import CATALOGUE

# ---------------------------------------------------------------------- GET /api/faults


def step_title(name: str, layer: int | None, phase: str = "backward") -> str:
    return walkthrough.title(SimpleNamespace(name=name, layer=layer, phase=phase))


def _op_layer(op: str, layer: int) -> int | None:
    return layer if op.startswith("layers.") else None


def catalogue(cfg: Config, layer: int) -> dict:
    """Every fault of the catalogue, for this config and fault layer."""
    faults = []
    for fault in CATALOGUE.values():
        op = fault.step_name(layer)
        faults.append(fault_json(fault, cfg, layer, step_title(op, _op_layer(op, layer))))
    return {"fault_layer": layer, "faults": faults}


def revealed_faults(ctx: TraceContext) -> list[dict]:
    """The faults a trace runs with, as the page reveals them (a quiz's only after an answer)."""
    spec = ctx.spec
    if not spec.faults:
        return []
    steps = {(r.name, r.phase): r.index for r in ctx.trace.records}
    out = []
    for name in spec.faults:
        entry = fault_json(CATALOGUE[name], spec.cfg, spec.fault_layer, None)
        entry["op_title"] = step_title(entry["op"], _op_layer(entry["op"], spec.fault_layer))
        entry["step"] = steps.get((entry["op"], "backward"))
        out.append(entry)
    return out


# ---------------------------------------------------------------------- GET .../checks


def checks_view(job: ChecksJob) -> dict:
    """Every step's check done so far, the first failing backward step and the chart."""
    results = job.results()
    first, final = job.first_failing()
    n = job.total
    errors = np.full(n, np.nan)
    passed: list[bool | None] = [None] * n
    for r in results:
        errors[r.index], passed[r.index] = r.max_rel_error, r.passed
    phases = [phase for _, _, phase in job.records]
    figure = check_errors_chart(
        errors, passed, job.titles, phases, tolerance=job.tolerance, first_failing=first if final else None
    )
    return {
        "id": job.trace_id,
        "tolerance": job.tolerance,
        "total": n,
        "done": len(results),
        "complete": len(results) == n,
        "steps": [
            {"index": r.index, "name": r.name, "phase": r.phase, "max_rel_error": r.max_rel_error, "passed": r.passed}
            for r in results
        ],
        "first_failing": first,
        "first_failing_final": final,
        "figure": figure_json(figure)[0],
    }


# ---------------------------------------------------------------------- GET .../steps/{index}/diff


def _matrix(ctx: TraceContext, name: str, array, seq: int):
    """(z, rows, cols, row_title, col_title) of a tensor as a 2-D picture; None for a scalar."""
    array = np.asarray(array)
    if ctx.is_param(name):
        if array.ndim == 1:  # an RMSNorm gain
            return array[None, :], ["gain"], None, "", "feature"
        if name in ("tok_embeddings", "output"):
            return array, ctx.vocab, None, "token", "feature"
        return array, None, None, "input feature", "output feature"
    if array.ndim == 0:
        return None
    a = array[seq]
    if a.ndim == 1:  # (T,): per-token losses
        return a[None, :], ["dL/dℓ"], ctx.predictions(seq), "", "position: input→target"
    rows = ctx.positions(seq)
    if a.ndim == 3:  # (H, T, X): heads stacked
        cols = rows if a.shape[-1] == a.shape[-2] == ctx.T else None
        index = [f"h{h} {label}" for h in range(a.shape[0]) for label in rows]
        return a.reshape(-1, a.shape[-1]), index, cols, "head, query", "key" if cols else "feature"
    cols = ctx.vocab if name in ("logits", "probs") else None
    return a, rows, cols, "position", "token" if cols else "feature"


def _compare(faulty, correct) -> dict:
    faulty, correct = np.asarray(faulty, dtype=np.float64), np.asarray(correct, dtype=np.float64)
    diff = float(np.max(np.abs(faulty - correct), initial=0.0))
    scale = float(np.max(np.abs(correct), initial=0.0))
    return {
        "max_abs_diff": diff,
        "max_abs_correct": scale,
        "rel_diff": diff / scale if scale else diff,
        "identical": diff == 0.0,
    }


def _verdict(arriving: dict | None, contributions: list[dict]) -> str:
    wrong = [c["tensor"] for c in contributions if not c["identical"]]
    if arriving is not None and not arriving["identical"]:
        return (
            "The gradient arriving at this op is already wrong: the mistake happened earlier in the backward "
            "pass (in a step that ran before this one), and this op passes it on."
        )
    if wrong:
        return (
            f"The gradient arriving here is exactly right, but what this op computes from it ({', '.join(wrong)}) "
            "is not: this op's backward is the broken one."
        )
    return (
        "Every gradient of this step is exactly the correct one: the mistake, if any, comes later in the backward pass."
    )


def diff_view(faulty: TraceContext, correct: TraceContext, index: int, seq: int) -> dict:
    """A backward step of a faulty trace against the same step of the correct trace: the
    gradient arriving and each contribution, faulty | correct | difference."""
    record, reference = faulty.trace.records[index], correct.trace.records[index]
    pairs = [("arriving", record.name, faulty.trace.grad(record.name), correct.trace.grad(record.name))]
    pairs += [
        ("contribution", name, record.contributions[name], reference.contributions[name])
        for name in record.inputs
        if name in record.contributions
    ]
    figures, summary = [], []
    for kind, name, bad, good in pairs:
        comparison = {"kind": kind, "tensor": name, **_compare(bad, good)}
        summary.append(comparison)
        picture = _matrix(faulty, name, bad, seq)
        if picture is None:
            continue
        z_bad, rows, cols, row_title, col_title = picture
        z_good = _matrix(faulty, name, good, seq)[0]
        what = "the gradient arriving" if kind == "arriving" else "this op's contribution"
        title = f"dL/d({name}), {what}: faulty vs correct"
        fig = diff_panels(
            z_bad, z_good, rows, cols, title=title, value_name=f"dL/d{name.rsplit('.', 1)[-1]}",
            row_title=row_title, col_title=col_title, max_cells=faulty.settings.max_heatmap_cells,
        )  # fmt: skip
        same = (
            "identical, bit for bit"
            if comparison["identical"]
            else f"max |difference| {comparison['max_abs_diff']:.3g}"
        )
        note = f"{same} (largest |correct value| {comparison['max_abs_correct']:.3g})."
        tab = faulty.table(z_bad - z_good, rows, cols)
        figures.append(faulty.entry(f"diff.{kind}.{name}", title, "diff", fig, tab, [note]))
    arriving = summary[0]
    return {
        "index": index,
        "name": record.name,
        "title": walkthrough.title(record),
        "correct_id": correct.spec.id,
        "verdict": _verdict(arriving, summary[1:]),
        "tensors": summary,
        "figures": figures,
    }


# ---------------------------------------------------------------------- POST .../quiz/answer


def quiz_answer(ctx: TraceContext, index: int) -> dict:
    """Right or wrong, and the hidden fault revealed: its description and the two lines."""
    trace = ctx.trace
    revealed = revealed_faults(ctx)
    broken = revealed[0]
    chosen = trace.records[index]
    return {
        "correct": chosen.name == broken["op"],
        "chosen": {"index": index, "name": chosen.name, "title": walkthrough.title(chosen)},
        "broken": {"index": broken["step"], "name": broken["op"], "title": broken["op_title"]},
        "fault": broken,
    }
