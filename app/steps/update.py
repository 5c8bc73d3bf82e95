"""The update step of a training trace (the record with phase "update"): the optimizer's
rule, gradient norms and update/weight ratios per parameter, ΔW of one parameter beside its
gradient, the loss before and after on the same batch (after the training run, if any), and
a line search along −g. Blocking work (call from a worker thread)."""

from __future__ import annotations

import math

import numpy as np

from app.figures import update as update_figures
from app.spec.training import describe_optimizer
from app.steps import update_text
from app.steps.context import TraceContext, in_language
from app.steps.formulas import in_words_of
from app.steps.gradcheck import failure_text
from app.steps.kind import StepKind
from app.steps.mathml import formula
from app.steps.tensors import param_entry
from app.steps.titles import OPTIMIZER_LABELS, tensor_label
from app.steps.wording import num, t
from app.words.numbers import with_separator
from xt_core.checks.directional import StepCheck
from xt_core.training.loop import line_search
from xt_core.training.optim import optimizer_dict

LINE_SEARCH_POINTS = 25
# Each point is a forward pass: a model this costly (parameters × positions) gets fewer points
# (SmolLM2-135M at 32 positions: 4e9, 7 points, ~2 s of the update view instead of ~8 s).
LINE_SEARCH_WORK = 1e9
FEW_LINE_SEARCH_POINTS = 7
# An update moving a parameter by more than this fraction of its RMS in one step is a warning sign.
LARGE_RATIO = 0.1
# AdamW's step per entry is lr·m̂/(√v̂ + ε_adam): exactly lr at its first step (m̂/√v̂ = ±1), less once
# the gradient's sign wavers between steps; this fraction of lr is where "less" becomes "barely moves".
ADAMW_LOW = 0.1
# AdamW's rule on two lines (the record's one-line LaTeX overflows a projector-width page).
_ADAMW_DISPLAY = (
    r"\begin{array}{l} m \leftarrow \beta_1 m + (1-\beta_1)\, g, \quad v \leftarrow \beta_2 v + (1-\beta_2)\, g^2 "
    r"\\ W \leftarrow W - \eta \Big(\frac{m / (1-\beta_1^t)}{\sqrt{v / (1-\beta_2^t)} + \epsilon_{\mathrm{adam}}} "
    r"+ \lambda_W W\Big), \quad \lambda_W = \lambda \text{ (a matrix)},\ 0 \text{ (a norm gain)} \end{array}"
)


def shown_param(ctx: TraceContext) -> str:
    """The parameter whose ΔW the step shows first: the weight matrix the update moved most,
    relative to its size (a matrix: its picture says more than a norm gain's bars)."""
    per_param = ctx.trace.update.per_param
    ratios = {n: p.update_ratio for n, p in per_param.items() if math.isfinite(p.update_ratio)}
    matrices = {n: r for n, r in ratios.items() if per_param[n].ndim == 2}
    pool = matrices or ratios
    return max(pool, key=pool.get) if pool else next(iter(per_param))


def line_search_etas(loss: float, grad_norm_sq: float, lr: float | None = None, points: int = LINE_SEARCH_POINTS):
    """Log-spaced step sizes around η₀ = loss/‖g‖², where the first-order prediction reaches 0
    (from η₀/1000 to 10·η₀), widened to include the SGD learning rate."""
    if not (grad_norm_sq > 0 and math.isfinite(grad_norm_sq) and math.isfinite(loss) and loss > 0):
        return np.array([])
    eta0 = loss / grad_norm_sq
    lo, hi = eta0 * 1e-3, eta0 * 10
    if lr is not None:
        lo, hi = min(lo, lr / 3), max(hi, lr * 3)
    return np.logspace(math.log10(lo), math.log10(hi), points)


def _line_search(ctx: TraceContext, lr: float | None) -> dict | None:
    trace = ctx.trace
    g2 = sum(p.grad_norm**2 for p in trace.update.per_param.values())  # ||g||², as the update summed it
    work = trace.cfg.n_params() * trace.tokens.size
    etas = line_search_etas(
        trace.loss, g2, lr, LINE_SEARCH_POINTS if work <= LINE_SEARCH_WORK else FEW_LINE_SEARCH_POINTS
    )
    if not etas.size:
        return None
    params = {name: trace[name] for name in trace.param_names}  # the weights before the update
    with np.errstate(all="ignore"):  # a huge η overflows: that loss is drawn as a gap
        return line_search(trace.cfg, trace, params, etas, grad_norm_sq=g2)


def param_figures(ctx: TraceContext, name: str, lang: str = "en") -> list[dict]:
    """ΔW of one parameter beside its gradient (same layout: positions of the matrix)."""
    ctx = in_language(ctx, lang)
    delta = ctx.trace.update.per_param[name].delta
    grad = ctx.trace.grads[name]
    cells = ctx.settings.max_heatmap_cells
    label = tensor_label(name, ctx.lang, ctx.trace.cfg.family)
    return [
        param_entry(ctx, name, array, figure_id, t(lang, title, label=label), "update", True, cells, values, lang=lang)
        for figure_id, array, title, values in (
            ("update.delta", delta, "names-figure-update-delta-title", "ΔW"),
            ("update.grad", grad, "names-figure-update-grad-title", "g = dL/dW"),
        )
    ]


def expected_ratios(optimizer, rows: list[dict], t: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) per parameter: where RMS(ΔW)/RMS(W) falls for this optimizer at its lr.
    AdamW moves each entry by about lr (ADAMW_LOW of that when the gradient's sign wavers),
    plus lr·weight_decay of the weight on matrices. SGD moves by lr·(g + weight_decay·W), exactly
    lr·RMS(g)/RMS(W) without decay and momentum; at step t momentum scales that by
    update_text.momentum_range."""
    weight_rms = np.array([r["weight_rms"] for r in rows], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if optimizer.name == "adamw":
            decay = np.array([optimizer.weight_decay if len(r["shape"]) >= 2 else 0.0 for r in rows])
            high = optimizer.lr / weight_rms + optimizer.lr * decay
            return ADAMW_LOW * high, high
        grad_rms = np.array([r["grad_norm"] / math.sqrt(max(1, math.prod(r["shape"]))) for r in rows])
        step = optimizer.lr * grad_rms / weight_rms
        decay = optimizer.lr * optimizer.weight_decay  # ‖g + λW‖ lies within ‖g‖ ± λ‖W‖
        fewest, most = update_text.momentum_range(optimizer.momentum, t)
        return np.maximum(step - decay, 0.0) * fewest, (step + decay) * most


def _param_rows(ctx: TraceContext) -> list[dict]:
    return [
        {
            "name": name,
            "shape": list(p.shape),
            "grad_norm": p.grad_norm,
            "weight_rms": p.weight_rms,
            "update_rms": p.update_rms,
            "update_ratio": p.update_ratio,
        }
        for name, p in ctx.trace.update.per_param.items()
    ]


def _skipped(ctx: TraceContext, lang: str) -> list[str]:
    """The dynamic loss scaler skipped this update (xt_core.precision.scaling.recorded_scaled_step)."""
    if not ctx.trace.update.skipped:
        return []
    policy = ctx.trace.precision
    exponent = round(math.log2(policy.loss_scale))
    return [t(lang, "precision-update-skipped", dtype=policy.name, exponent=exponent, next=max(0, exponent - 1))]


def _warnings(ctx: TraceContext, rows: list[dict], lang: str) -> list[str]:
    update, out = ctx.trace.update, _skipped(ctx, lang)
    after = update.loss_after
    if after is not None and not math.isfinite(after):
        out.append(t(lang, "step-update-diverged"))
    elif after is not None and after > update.loss_before:
        before, after = num(update.loss_before, ".4g", lang), num(after, ".4g", lang)
        out.append(t(lang, "step-update-overshot", before=before, after=after))
    big = [r for r in rows if math.isfinite(r["update_ratio"]) and r["update_ratio"] > LARGE_RATIO]
    if big:
        worst = max(big, key=lambda r: r["update_ratio"])
        largest, ratio = num(worst["update_ratio"], ".3g", lang), num(LARGE_RATIO, "g", lang)
        out.append(t(lang, "step-update-large", count=len(big), ratio=ratio, param=worst["name"], largest=largest))
    return out


def _loss_entry(ctx: TraceContext, lang: str) -> dict:
    """The loss on this batch: along the training run before the step (if any), before and after the update."""
    trace, update = ctx.trace, ctx.trace.update
    n_train = len(trace.train_losses)
    after = update.loss_after
    lang = ctx.lang
    losses = {
        "before": with_separator(f"{update.loss_before:.4g}", lang),
        "after": with_separator(f"{after:.4g}", lang),
    }
    if n_train:
        loss_title = t(lang, "names-update-loss-trained-title", n=n_train, **losses)
    else:
        loss_title = t(lang, "names-update-loss-title", **losses)
    return ctx.entry(
        "update.loss",
        loss_title,
        "loss",
        update_figures.loss_curve(trace.train_losses, update.loss_before, after, title=loss_title, lang=lang),
        ctx.table(
            np.array([*trace.train_losses, update.loss_before, after]),
            _loss_index(n_train, lang),
            [t(lang, "names-update-loss-column")],
            lang,
        ),
    )


def _line_search_entry(ctx: TraceContext, search: dict, sgd_lr: float | None, lang: str) -> dict:
    """The measured loss along −g beside the first-order prediction (`search` from `_line_search`)."""
    lang = ctx.lang
    title = t(lang, "names-update-line-search-title")
    fig = update_figures.line_search(
        search["eta"], search["loss"], search["first_order"], ctx.trace.loss, title=title, lr=sgd_lr, lang=lang
    )
    matrix = np.stack([search["loss"], search["first_order"]], axis=1)
    etas = [with_separator(f"{e:.3g}", lang) for e in search["eta"]]
    columns = [t(lang, "names-update-measured-column"), t(lang, "names-update-first-order-column")]
    tab = ctx.table(matrix, etas, columns, lang)
    return ctx.entry("update.line_search", title, "check", fig, tab)


def _explanation(ctx: TraceContext, asked: dict, shown: str, lang: str) -> str:
    update = ctx.trace.update
    ran = {**optimizer_dict(update.optimizer), "name": update.optimizer.name}
    facts = update_text.step_facts(update.per_param[shown].delta, ctx.trace.grads[shown], update.optimizer.lr)
    return update_text.explanation(ran, asked, len(ctx.trace.train_losses), shown, facts, LARGE_RATIO, lang)


def update_check_warning(ctx: TraceContext, check: StepCheck, lang: str = "en") -> str:
    """The failed gradient check of the update step (a bug-lab fault named as the likely cause)."""
    hint = t(lang, "step-check-fault-hint") if ctx.spec.faults else ""
    return failure_text(check, ctx.spec.dtype, lang) + hint


def step_view(ctx: TraceContext, record, lang: str = "en") -> dict:
    """The update record's own fields of its step JSON (app.steps.view writes the rest)."""
    trace, spec = ctx.trace, ctx.spec
    update = trace.update
    optimizer = spec.optimizer or {"name": update.optimizer.name, "lr": update.optimizer.lr}
    sgd_lr = optimizer["lr"] if optimizer["name"] == "sgd" else None
    rows = _param_rows(ctx)
    n_train = len(trace.train_losses)
    entries = [_loss_entry(ctx, lang), _grad_norm_entry(ctx, rows, lang), _ratio_entry(ctx, rows, lang)]
    shown = shown_param(ctx)
    entries += param_figures(ctx, shown, lang)
    search = _line_search(ctx, sgd_lr)
    if search is not None:
        entries.append(_line_search_entry(ctx, search, sgd_lr, lang))
    return {
        "explanation": _explanation(ctx, optimizer, shown, lang),
        "formula": {"forward": None, "backward": None, "update": formula(in_words_of(_display_latex(record), lang))},
        "shapes": {},  # every parameter: the `update.params` rows (and the chooser) list them
        "figures": entries,
        "warnings": _warnings(ctx, rows, lang),
        "update": {
            "optimizer": optimizer,
            "optimizer_label": describe_optimizer(optimizer, lang),
            "loss_before": update.loss_before,
            "loss_after": update.loss_after,
            "grad_norm": update.grad_norm,
            "train_steps": n_train,
            "params": rows,
            "shown": shown,
            "line_search": search,
            **({"skipped": True} if update.skipped else {}),  # by the loss scaler: ΔW = 0
        },
    }


def _display_latex(record) -> str:
    return _ADAMW_DISPLAY if record.kind == "adamw" else record.forward_latex


def _loss_index(n_train: int, lang: str) -> list[str]:
    """The loss table's rows: each training step, this one, and the loss after the update."""
    trained = [t(lang, "step-table-train-step", step=i + 1) for i in range(n_train)]
    return [*trained, t(lang, "step-table-this-step", step=n_train + 1), t(lang, "step-table-after-update")]


def _grad_norm_entry(ctx: TraceContext, rows: list[dict], lang: str) -> dict:
    names, values = [r["name"] for r in rows], np.array([r["grad_norm"] for r in rows], dtype=np.float64)
    title = t(lang, "names-update-grad-norm-title")
    fig = update_figures.parameter_bars(values, names, title=title, value_name="‖g‖", lang=lang)
    return ctx.entry("update.grad_norm", title, "update", fig, ctx.table(values, names, ["‖g‖"], lang))


def _ratio_entry(ctx: TraceContext, rows: list[dict], lang: str) -> dict:
    """RMS(ΔW)/RMS(W) per parameter beside the range the optimizer's rule predicts at its lr,
    and the line beyond which a step is too large."""
    optimizer = ctx.trace.update.optimizer
    names = [r["name"] for r in rows]
    values = np.array([r["update_ratio"] for r in rows], dtype=np.float64)
    low, high = expected_ratios(optimizer, rows, len(ctx.trace.train_losses) + 1)
    label = OPTIMIZER_LABELS[optimizer.name]
    rule = "0.1–1 × lr/RMS(W)" if optimizer.name == "adamw" else "lr·RMS(g)/RMS(W)"
    lang = ctx.lang
    title = t(lang, "names-update-ratio-title")
    fig = update_figures.parameter_bars(
        values,
        names,
        title=title,
        value_name="RMS(ΔW)/RMS(W)",
        reference=LARGE_RATIO,
        reference_label=t(lang, "names-update-too-large", ratio=with_separator(f"{LARGE_RATIO:g}", lang)),
        expected=(low, high),
        expected_label=t(
            lang,
            "names-update-expected-label",
            optimizer=label,
            lr=with_separator(f"{optimizer.lr:g}", lang),
            rule=rule,
        ),
        lang=lang,
    )
    matrix = np.stack([values, low, high], axis=1)
    columns = ["RMS(ΔW)/RMS(W)", t(lang, "step-table-expected-from"), t(lang, "step-table-expected-to")]
    tab = ctx.table(matrix, names, columns, lang)
    return ctx.entry("update.ratio", title, "update", fig, tab)


def training_summary(ctx: TraceContext, lang: str = "en") -> dict | None:
    """POST /api/traces' `training`: the optimizer and the training run before the step
    (null for a trace without an update step)."""
    trace = ctx.trace
    if trace.update is None:
        return None
    losses = trace.train_losses
    optimizer = ctx.spec.optimizer
    return {
        "optimizer": optimizer,
        "optimizer_label": describe_optimizer(optimizer, lang),
        "steps": len(losses),
        "first_loss": losses[0] if losses else None,
        "last_loss": losses[-1] if losses else None,
        "loss_after": trace.update.loss_after,
    }


KIND = StepKind("the optimizer update", lambda r: r.phase == "update", view=step_view)
