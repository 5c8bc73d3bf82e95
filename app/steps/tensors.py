"""The picture of one recorded tensor as a step-view figure entry (figure, 'numbers' table,
notes), chosen by its shape and meaning: bars for a gain or per-token values, a heatmap for a
matrix, a grid of heads for attention, one head at full resolution when enlarged. Axes come
from app.steps.axes; the pure builders from app.figures.

An entry that draws a recorded tensor or its gradient as it is (not one op's contribution to
it) carries `download`, the URL of the whole tensor as .npy; when its picture is downsampled or
its numbers table cut, its note says so and points there."""

from __future__ import annotations

from urllib.parse import quote

import numpy as np

from app import figures
from app.figures import heads as head_figures
from app.steps.axes import activation_axes, head_axes, param_axes, value_name
from app.steps.context import TraceContext
from app.steps.stats import tensor_stats
from app.steps.titles import one_head_title
from app.steps.wording import t
from xt_core import names


def tensor_url(ctx: TraceContext, name: str, gradient: bool) -> str:
    """Where the whole tensor (or its gradient) is, as .npy (GET .../tensors/{name})."""
    return f"/api/traces/{ctx.spec.id}/tensors/{quote(name)}" + ("?grad=true" if gradient else "")


def _entry(
    ctx, figure_id, title, role, fig, tab, notes=(), heads=None, *, download: str | None, stats: dict, lang: str
) -> dict:
    """ctx.entry plus `download` (None: the figure is not a whole recorded tensor), the whole
    tensor's `stats` (app.steps.stats), and the download note when the picture or the numbers
    leave values out."""
    meta = fig.layout.meta
    partial = tab[1] is not None or (isinstance(meta, dict) and bool(meta.get("note")))
    if download is not None and partial:
        notes = [*notes, t(lang, "step-note-download")]
    return {**ctx.entry(figure_id, title, role, fig, tab, notes, heads), "download": download, "stats": stats}


def _per_token(ctx: TraceContext, a: np.ndarray, seq: int, title: str, values: str, gradient: bool, lang: str):
    """A (T,) tensor (per-token losses, their gradients) as bars over the positions' predictions: (figure, table)."""
    labels = ctx.predictions(seq)
    x_title = t(lang, "names-figure-position-prediction")
    fig = figures.bars(a, labels, title=title, value_name=values, x_title=x_title, gradient=gradient, lang=lang)
    return fig, ctx.table(a, labels, [values], lang)


def tensor_entry(
    ctx: TraceContext,
    name: str,
    array: np.ndarray,
    seq: int,
    *,
    figure_id: str,
    title: str,
    role: str,
    gradient: bool,
    max_cells: int | None = None,
    whole: bool = True,
    lang: str = "en",
) -> dict | None:
    """The picture of one tensor (a value or a gradient of tensor `name`) for sequence
    `seq`; None for a scalar (the loss), whose number the page shows as text. `max_cells`:
    this figure's share of the step's cell budget (default: the per-figure limits). `whole`:
    `array` is the recorded tensor or its gradient (not a contribution): downloadable."""
    s, array = ctx.settings, np.asarray(array)
    values = value_name(name, gradient, lang)
    cells = s.max_heatmap_cells if max_cells is None else min(max_cells, s.max_heatmap_cells)
    download = tensor_url(ctx, name, gradient) if whole else None
    if ctx.is_param(name):
        return param_entry(ctx, name, array, figure_id, title, role, gradient, cells, download=download, lang=lang)
    if array.ndim == 0:
        return None
    stats = tensor_stats(ctx, name, array)  # of every sequence, not the one drawn
    a = array[seq]
    if a.ndim == 1:  # (T,): per-token losses and their gradients
        fig, tab = _per_token(ctx, a, seq, title, values, gradient, lang)
        return _entry(ctx, figure_id, title, role, fig, tab, download=download, stats=stats, lang=lang)
    if a.ndim == 3:  # (H, T, T) scores / probs or (H, T, hd) head outputs: every head
        figure_cells = s.max_figure_cells if max_cells is None else min(max_cells, s.max_figure_cells)
        where = (figure_id, title, gradient, figure_cells, download, stats)
        return _head_grid_entry(ctx, name, a, seq, *where, lang)
    axes = activation_axes(ctx, name, seq, a, gradient)
    a = axes.shown(a)  # a large vocabulary: its tokens that matter (axes.note says which)
    fig = figures.heatmap(
        a,
        axes.rows,
        axes.cols,
        title=title,
        value_name=values,
        row_title=axes.row_title,
        col_title=axes.col_title,
        gradient=gradient,
        max_cells=cells,
        lang=ctx.lang,
    )
    notes = [axes.note] if axes.note else []
    tab = ctx.table(a, axes.rows, axes.cols, lang)
    return _entry(ctx, figure_id, title, role, fig, tab, notes, download=download, stats=stats, lang=lang)


def _mask_notes(name: str, gradient: bool, lang: str) -> list[str]:
    return [t(lang, "step-note-masked")] if names.is_attention_scores(name) and not gradient else []


def _head_grid_entry(ctx, name, a, seq, figure_id, title, gradient, figure_cells, download, stats, lang) -> dict:
    s, axes = ctx.settings, head_axes(ctx, a.shape, seq)
    fig = head_figures.head_grid(
        a,
        axes.rows,
        axes.cols,
        title=title,
        value_name=value_name(name, gradient, lang),
        row_title=axes.row_title,
        col_title=axes.col_title,
        gradient=gradient,
        max_cells=s.max_heatmap_cells,
        max_figure_cells=figure_cells,
        lang=ctx.lang,
    )
    n_head, R, C = a.shape
    pooling = head_figures.grid_pooling(n_head, R, C, s.max_heatmap_cells, figure_cells)
    heads = {
        "count": n_head,
        "shape": [R, C],
        "shown": list(head_figures.pooled_shape((R, C), pooling)),
        "pooled": pooling.active,
    }
    index = [f"h{h} {label}" for h in range(n_head) for label in axes.rows]
    tab = ctx.table(a.reshape(-1, a.shape[-1]), index, axes.cols, lang)
    notes = _mask_notes(name, gradient, lang)
    return _entry(ctx, figure_id, title, "attention", fig, tab, notes, heads, download=download, stats=stats, lang=lang)


def head_entry(
    ctx: TraceContext,
    name: str,
    array: np.ndarray,
    seq: int,
    head: int,
    *,
    figure_id: str,
    title: str,
    gradient: bool,
    whole: bool = True,
    lang: str = "en",
) -> dict:
    """One head of a grid (sequence `seq`), every value up to settings.max_head_cells: the
    enlarged view. Same entry shape as a step's figures, `heads` naming the head."""
    stats = tensor_stats(ctx, name, np.asarray(array))  # the whole tensor's, every head
    a = np.asarray(array)[seq, head]
    axes = head_axes(ctx, np.shape(array)[1:], seq)
    title = one_head_title(title, head, ctx.lang)
    fig = head_figures.single_head(
        a,
        head,
        axes.rows,
        axes.cols,
        title=title,
        value_name=value_name(name, gradient, lang),
        row_title=axes.row_title,
        col_title=axes.col_title,
        gradient=gradient,
        max_cells=ctx.settings.max_head_cells,
        lang=ctx.lang,
    )
    heads = {"count": int(np.shape(array)[1]), "shape": list(a.shape), "head": head}
    tab = ctx.table(a, axes.rows, axes.cols, lang)
    download = tensor_url(ctx, name, gradient) if whole else None
    notes = _mask_notes(name, gradient, lang)
    figure_id = f"{figure_id}.head{head}"
    return _entry(ctx, figure_id, title, "attention", fig, tab, notes, heads, download=download, stats=stats, lang=lang)


def param_entry(
    ctx,
    name,
    array,
    figure_id,
    title,
    role,
    gradient,
    cells,
    values: str | None = None,
    download: str | None = None,
    lang: str = "en",
) -> dict:
    """A parameter (or its gradient, or its update): bars for an RMSNorm gain, else a heatmap
    of the whole matrix. `values` names the entries (default from the name); `download`: the
    URL of the whole tensor drawn, if it is one."""
    values = values or value_name(name, gradient, lang)
    stats = tensor_stats(ctx, name, array)
    if array.ndim == 1:  # an RMSNorm gain
        feature = t(lang, "names-axis-feature")
        fig = figures.bars(array, None, title=title, value_name=values, x_title=feature, gradient=gradient, lang=lang)
        tab = ctx.table(array, None, [values], lang)
        return _entry(ctx, figure_id, title, role, fig, tab, download=download, stats=stats, lang=lang)
    axes = param_axes(ctx, name, array, gradient)
    array = axes.shown(array)  # a large vocabulary: its rows that matter (axes.note says which)
    fig = figures.heatmap(
        array,
        axes.rows,
        None,
        title=title,
        value_name=values,
        row_title=axes.row_title,
        col_title=axes.col_title,
        gradient=gradient,
        max_cells=cells,
        keep_rows=axes.row_ids is not None,
        lang=ctx.lang,
    )
    notes = [axes.note] if axes.note else []
    tab = ctx.table(array, axes.rows, None, lang)
    return _entry(ctx, figure_id, title, role, fig, tab, notes, download=download, stats=stats, lang=lang)
