"""The bug lab's JSON answers, assembled from traces: the catalogue for a config, the
all-steps check chart, the faulty-vs-correct diff of a backward step, the quiz's verdict.
Blocking work (call from a worker thread)."""

from __future__ import annotations

from types import SimpleNamespace
from urllib.parse import urlencode

import numpy as np

from app import words
from app.buglab.catalogue import description, fault_json, fault_words
from app.figures.buglab import check_errors_chart, diff_panels
from app.figures.serialize import figure_json
from app.spec import ResolvedSpec
from app.steps import titles
from app.steps.axes import activation_axes, head_axes, param_axes, value_name
from app.steps.context import TraceContext, in_language
from app.traces.checks import ChecksJob
from xt_core import Config
from xt_core.lab.faults import CATALOGUE

# ---------------------------------------------------------------------- GET /api/faults


def step_title(name: str, layer: int | None, phase: str = "backward", family: str = "llama") -> str:
    return titles.title(SimpleNamespace(name=name, layer=layer, phase=phase, family=family))


def _op_layer(op: str, layer: int) -> int | None:
    return layer if op.startswith("layers.") else None


def catalogue(cfg: Config, layer: int, lang: str = words.DEFAULT) -> dict:
    """Every fault of the catalogue, for this config and fault layer."""
    faults = []
    for fault in CATALOGUE.values():
        op = fault.step_name(layer)
        faults.append(fault_json(fault, cfg, layer, step_title(op, _op_layer(op, layer), family=fault.family), lang))
    return {"fault_layer": layer, "faults": faults}


def picker_options(lang: str = words.DEFAULT) -> list[dict]:
    """The home form's fault choices: the name and the op, without a layer (the form's
    sizes decide that; the page asks GET /api/faults for them)."""
    options = []
    for fault in CATALOGUE.values():
        name = words.t(lang, fault_words(fault.name))
        label = words.t(lang, "buglab-fault-option", fault=name, op=titles.op_words(fault.step, lang, fault.family))
        options.append({"name": fault.name, "label": label, "description": description(fault, lang), "lang": lang})
    return options


def _fault_entries(spec: ResolvedSpec, lang: str) -> list[dict]:
    entries = []
    for name in spec.faults:
        op = CATALOGUE[name].step_name(spec.fault_layer)
        title = step_title(op, _op_layer(op, spec.fault_layer), family=CATALOGUE[name].family)
        entries.append(fault_json(CATALOGUE[name], spec.cfg, spec.fault_layer, title, lang))
    return entries


def revealed_faults(ctx: TraceContext, lang: str = words.DEFAULT) -> list[dict]:
    """The faults a trace runs with and their steps (a quiz's: only once answered)."""
    steps = {(r.name, r.phase): r.index for r in ctx.trace.records}
    return [{**entry, "step": steps.get((entry["op"], "backward"))} for entry in _fault_entries(ctx.spec, lang)]


def page_info(spec: ResolvedSpec, query: dict[str, str], lang: str = words.DEFAULT) -> dict:
    """What the walk page's bug-lab panel needs. A quiz's says nothing of its fault."""
    plain = {k: v for k, v in query.items() if k not in ("faults", "fault_layer", "quiz")}
    links = {"quiz_url": "/quiz?" + urlencode(plain), "correct_url": "/walk?" + urlencode({**plain, "step": "1"})}
    if spec.quiz is not None:
        return {"mode": "quiz", "faults": [], **links}
    if spec.faults:
        return {"mode": "faults", "faults": _fault_entries(spec, lang), **links}
    return {"mode": "off", "faults": [], **links}


# ---------------------------------------------------------------------- GET .../checks


def checks_view(job: ChecksJob, lang: str = "en") -> dict:
    """Every step's check done so far, the first failing backward step and the chart, in `lang`."""
    results = job.results()
    first, final = job.first_failing()
    n = job.total
    errors = np.full(n, np.nan)
    passed: list[bool | None] = [None] * n
    for r in results:
        errors[r.index], passed[r.index] = r.max_rel_error, r.passed
    phases = [phase for _, _, phase in job.records]
    names = [
        titles.title(SimpleNamespace(name=name, phase=phase, layer=layer, kind=kind), lang)
        for (_, name, phase), (layer, kind) in zip(job.records, job.labels, strict=True)
    ]
    figure = check_errors_chart(
        errors, passed, names, phases, tolerance=job.tolerance, first_failing=first if final else None, lang=lang
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


def _pictures(ctx: TraceContext, name: str, bad, good, seq: int, lang: str):
    """(faulty z, correct z, rows, cols, row_title, col_title, note) of a tensor as 2-D
    pictures of sequence `seq`; None for a scalar. A tensor with a head axis shows the head
    where the two differ most (every head stacked would squeeze each to a sliver)."""
    bad, good = np.asarray(bad), np.asarray(good)
    if ctx.is_param(name):
        if bad.ndim == 1:  # an RMSNorm gain
            return bad[None, :], good[None, :], ["gain"], None, "", "feature", None
        axes = param_axes(ctx, name, bad, gradient=True)  # a large vocabulary: the rows that matter
        return axes.shown(bad), axes.shown(good), axes.rows, None, axes.row_title, axes.col_title, axes.note
    if bad.ndim == 0:
        return None
    bad, good = bad[seq], good[seq]
    if bad.ndim == 1:  # (T,): per-token losses
        return bad[None, :], good[None, :], ["dL/dℓ"], ctx.predictions(seq), "", "position: input→target", None
    if bad.ndim == 3:  # (H, T, X)
        spread = np.nan_to_num(np.abs(bad.astype(np.float64) - good), nan=np.inf).reshape(bad.shape[0], -1)
        head = int(np.argmax(spread.max(axis=1)))
        axes = head_axes(ctx, bad.shape, seq)
        if np.any(spread[head]):
            note = words.t(lang, "buglab-diff-head", head=head, heads=bad.shape[0])
        else:
            note = words.t(lang, "buglab-diff-head-same", heads=bad.shape[0])
        return bad[head], good[head], axes.rows, axes.cols, axes.row_title, axes.col_title, note
    axes = activation_axes(ctx, name, seq, bad, gradient=True)  # a large vocabulary: the tokens that matter
    return axes.shown(bad), axes.shown(good), axes.rows, axes.cols, axes.row_title, axes.col_title, axes.note


# _compare reads this many entries at a time in float64: a real model's embedding gradient (49,152
# × 576) is never converted whole (0.9 GB of float64 temporaries per request before).
COMPARE_BLOCK = 1 << 16
DIFF_TITLES = {"arriving": "buglab-diff-title-arriving", "contribution": "buglab-diff-title-contribution"}


def _compare(faulty, correct) -> dict:
    """max |faulty − correct| and max |correct| in float64 (NaN propagates), a block at a time."""
    faulty, correct = np.ravel(faulty), np.ravel(correct)
    diffs, scales = [0.0], [0.0]
    for start in range(0, faulty.size, COMPARE_BLOCK):
        bad = faulty[start : start + COMPARE_BLOCK].astype(np.float64)
        good = correct[start : start + COMPARE_BLOCK].astype(np.float64)
        diffs.append(np.max(np.abs(bad - good)))
        scales.append(np.max(np.abs(good)))
    diff, scale = float(np.max(diffs)), float(np.max(scales))
    return {
        "max_abs_diff": diff,
        "max_abs_correct": scale,
        "rel_diff": diff / scale if scale else diff,
        "identical": diff == 0.0,
    }


def _verdict(arriving: dict | None, contributions: list[dict], lang: str) -> str:
    wrong = [c["tensor"] for c in contributions if not c["identical"]]
    if arriving is not None and not arriving["identical"]:
        return words.t(lang, "buglab-diff-arriving-wrong")
    if wrong:
        return words.t(lang, "buglab-diff-this-op", tensors=", ".join(wrong))
    return words.t(lang, "buglab-diff-all-right")


def diff_view(faulty: TraceContext, correct: TraceContext, index: int, seq: int, lang: str = words.DEFAULT) -> dict:
    """A backward step of a faulty trace against the same step of the correct trace: the
    gradient arriving and each contribution, faulty | correct | difference."""
    faulty = in_language(faulty, lang)
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
        picture = _pictures(faulty, name, bad, good, seq, lang)
        if picture is None:
            continue
        z_bad, z_good, rows, cols, row_title, col_title, head_note = picture
        title = words.t(lang, DIFF_TITLES[kind], name=name)
        fig = diff_panels(
            z_bad, z_good, rows, cols, title=title, value_name=value_name(name, True, lang),
            row_title=row_title, col_title=col_title, max_cells=faulty.settings.max_heatmap_cells,
        )  # fmt: skip
        if comparison["identical"]:
            headline = words.t(lang, "buglab-diff-identical")
        else:
            differ = {"diff": comparison["max_abs_diff"], "largest": comparison["max_abs_correct"]}
            headline = words.t(lang, "buglab-diff-differ", **differ)
        entry = faulty.entry(f"diff.{kind}.{name}", title, "diff", fig, faulty.table(z_bad - z_good, rows, cols))
        notes = (headline, head_note, entry["note"], words.t(lang, "buglab-diff-numbers"))
        entry["note"] = " ".join(n for n in notes if n)
        figures.append(entry)
    arriving = summary[0]
    return {
        "index": index,
        "name": record.name,
        "title": titles.title(record),
        "correct_id": None if correct.spec.hidden_weights is not None else correct.spec.id,  # a quiz's twin: secret
        "verdict": _verdict(arriving, summary[1:], lang),
        "tensors": summary,
        "figures": figures,
    }


# ---------------------------------------------------------------------- POST .../quiz/answer


def quiz_answer(ctx: TraceContext, index: int, lang: str = words.DEFAULT) -> dict:
    """Right or wrong, and the hidden fault revealed: its description and the two lines."""
    trace = ctx.trace
    revealed = revealed_faults(ctx, lang)
    broken = revealed[0]
    chosen = trace.records[index]
    return {
        "correct": chosen.name == broken["op"],
        "chosen": {"index": index, "name": chosen.name, "title": titles.title(chosen)},
        "broken": {"index": broken["step"], "name": broken["op"], "title": broken["op_title"]},
        "fault": broken,
    }
