"""One step's view: its title, explanation, formulas, shapes, figures (drawn by the kind of
step view the registry picks), gradient check and warnings, as JSON within the step budget.
Blocking work (call from a worker thread)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from app.encoding import compact_json, json_safe
from app.steps import formulas
from app.steps.context import TraceContext, in_language
from app.steps.explain import explanation, induction_note
from app.steps.gradcheck import PENDING_CHECK, failure_text, gradcheck_json
from app.steps.kind import StepKind, draw_figures
from app.steps.mathml import formula
from app.steps.nonfinite import nonfinite_warnings
from app.steps.registry import kind_of
from app.steps.titles import step_summary
from app.steps.update import update_check_warning
from xt_core import names
from xt_core.checks.directional import StepCheck


def _jacobian_ref(ctx: TraceContext, record) -> dict | None:
    if record.kind != "softmax" or record.phase != "backward":
        return None
    if names.is_output_softmax(record.name):
        return {"kind": "output", "T": ctx.T}
    return {"kind": "attention", "layer": record.layer, "n_head": ctx.trace.cfg.n_head, "T": ctx.T}


def check_deferred(ctx: TraceContext) -> bool:
    """Whether this trace's step views answer before their gradient check (a real model's:
    settings.view_check_max_params); the check is then GET .../steps/{index}/check."""
    return ctx.trace.cfg.n_params() > ctx.settings.view_check_max_params


def failed_check_warning(ctx: TraceContext, record, check: StepCheck, lang: str = "en") -> str | None:
    """The warning a failed check puts first in its step's warnings (None when it passed)."""
    if check.passed:
        return None
    if record.phase == "update":
        return update_check_warning(ctx, check, lang)
    return failure_text(check, ctx.spec.dtype, lang)


def step_view(
    ctx: TraceContext,
    index: int,
    seq: int,
    pos: int,
    check: StepCheck | None,
    max_cells: int | None = None,
    sealed: bool = False,
    lang: str = "en",
) -> dict:
    """Step `index`'s JSON: the fields every step view has, around what its kind fills in (its
    own view, or its figures drawn within `max_cells` heatmap cells, default settings.max_step_cells).
    `check` None: a view answered before its check (`gradcheck` pending, no failed-check warning).
    `sealed`: a quiz's step before its answer, whose explanation states numbers and judges none."""
    ctx = in_language(ctx, lang)
    record = ctx.trace.records[index]
    kind = kind_of(record)
    cells = ctx.settings.max_step_cells if max_cells is None else max_cells
    if kind.view is not None:
        own = kind.view(ctx, record, lang)
    else:
        own = _figures_view(ctx, record, kind, (seq, pos, cells), sealed, lang)
    failed = None if check is None else failed_check_warning(ctx, record, check, lang)
    warnings = [failed] if failed else []
    warnings += nonfinite_warnings(ctx, record, lang) + own.pop("warnings")
    return {
        **step_summary(record, ctx.lang),
        "kind": record.kind,
        "explanation": own.pop("explanation"),
        "formula": own.pop("formula"),
        "shapes": own.pop("shapes"),
        "figures": own.pop("figures"),
        "gradcheck": PENDING_CHECK if check is None else gradcheck_json(check, ctx.spec.canonical["dtype"]),
        "jacobian": _jacobian_ref(ctx, record),
        "warnings": warnings,
        **own,  # the kind's fields of its own (the update's `update`)
    }


def _figures_view(
    ctx: TraceContext, record, kind: StepKind, where: tuple[int, int, int], sealed: bool, lang: str
) -> dict:
    """The fields a kind drawn from its figure list fills in (`where`: seq, pos and the cell budget)."""
    trace = ctx.trace
    figures, warnings = draw_figures(ctx, kind.figures(ctx, record), *where, lang=lang)
    forward_rule, backward_rule = formulas.rules(record, lang)
    return {
        "explanation": explanation(record, trace, judge=not sealed, lang=lang) + induction_note(ctx, record, lang),
        "formula": {"forward": formula(forward_rule), "backward": formula(backward_rule)},
        "shapes": {name: list(np.shape(trace[name])) for name in (*record.inputs, record.name)},
        "figures": figures,
        "warnings": warnings,
    }


def step_view_json(
    ctx: TraceContext,
    index: int,
    seq: int,
    pos: int,
    check: StepCheck | None,
    seal: Callable[[dict], dict] | None = None,
    lang: str = "en",
    sealed: bool | None = None,
) -> bytes:
    """The step view as compact JSON within settings.max_step_bytes (after `seal`, a quiz's:
    app.buglab.quiz.seal_step; `sealed`, whether its explanation judges nothing, defaults to
    whether there is a seal): the cell budget keeps the usual view well inside; should long
    labels push one over, its heatmaps get half the cells, then a quarter, ... (a few tries:
    the budget bounds the figures, not the text)."""
    cells = ctx.settings.max_step_cells
    for _ in range(4):
        judged = seal is None if sealed is None else not sealed
        answer = step_view(ctx, index, seq, pos, check, max_cells=cells, sealed=not judged, lang=lang)
        body = compact_json(json_safe(seal(answer) if seal is not None else answer))
        if len(body) <= ctx.settings.max_step_bytes:
            break
        cells //= 2
    return body
