"""The basic figure builders: heatmap, bars, grouped bars, the softmax Jacobian.

Conventions shared by every builder (app.figures.style; attention-head grids live in app.figures.heads):
* values use a sequential colour-blind-safe scale (Viridis); gradients a diverging one,
  RdBu reversed (blue negative, white zero, red positive) centred on zero, so the sign of a
  gradient reads at a glance and the colour of zero never moves;
* positions run down the y axis, labelled "index token" (the index keeps labels unique:
  a categorical axis would merge two positions holding the same token);
* hover shows the value at float32 precision (%{z:.7g});
* data goes out as float32 (plotly serializes numpy arrays as base64 typed arrays);
  NaN and ±inf become NaN, which Plotly draws as a gap;
* a heatmap with more than `max_cells` cells is pooled: each cell shows the entry of
  largest magnitude in its block (a real value, and outliers survive), with a note in
  `figure.layout.meta["note"]`.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from app.figures.pooling import max_abs_pool, plan_pooling, pool_labels
from app.figures.style import as_float32, axis_style, base_layout, colour_scale, hover_template, reference_line
from app.words import t
from app.words.numbers import with_separator


def heatmap(
    z,
    rows: list[str] | None,
    cols: list[str] | None = None,
    *,
    title: str,
    value_name: str,
    row_title: str = "position",
    col_title: str = "feature",
    gradient: bool = False,
    max_cells: int = 20_000,
    keep_rows: bool = True,
    lang: str = "en",
) -> go.Figure:
    """A 2-D array (rows × cols); rows are positions unless told otherwise (`lang`: of its hover and note)."""
    z = np.asarray(z)
    pooling = plan_pooling(z.shape[0], z.shape[1], max_cells, keep_rows)
    shown = max_abs_pool(z, pooling)
    trace = go.Heatmap(
        z=as_float32(shown),
        x=pool_labels(cols, pooling.col_step, z.shape[1]),
        y=pool_labels(rows, pooling.row_step, z.shape[0]),
        hovertemplate=hover_template(row_title, col_title, value_name, pooling, lang),
        colorbar={"title": {"text": value_name}},
        **colour_scale(gradient),
    )
    height = int(min(640, max(260, 14 * min(shown.shape[0], 40) + 120)))
    layout = base_layout(
        title,
        height,
        pooling.note(z.shape, lang),
        xaxis=axis_style(cols, col_title),
        yaxis=axis_style(rows, row_title, reversed_=True),
    )
    return go.Figure(data=[trace], layout=layout)


def bars(
    values,
    labels: list[str] | None,
    *,
    title: str,
    value_name: str,
    x_title: str = "position",
    gradient: bool = False,
    mean: float | None = None,
    lang: str = "en",
) -> go.Figure:
    """One bar per entry of a 1-D array (per-token losses, a norm's gain, ...); `mean`
    draws a dashed line at that height."""
    values = as_float32(values)
    x = labels if labels is not None else np.arange(values.shape[0])
    colour = None
    if gradient:
        colour = np.where(np.nan_to_num(values) < 0, "#2166ac", "#b2182b").tolist()
    trace = go.Bar(
        x=x,
        y=values,
        marker={"color": colour} if colour else None,
        hovertemplate=f"{x_title} %{{x}}<br>{value_name} = %{{y:.7g}}<extra></extra>",
    )
    layout = base_layout(
        title,
        320,
        xaxis=axis_style(labels if labels is not None else None, x_title),
        yaxis={"title": {"text": value_name}},
    )
    if mean is not None and math.isfinite(mean):
        layout["shapes"] = [reference_line(mean, vertical=False)]
        layout["annotations"] = [
            {
                "text": t(lang, "names-figure-mean", mean=with_separator(f"{mean:.6g}", lang)),
                "xref": "paper",
                "x": 1,
                "xanchor": "right",
                "y": mean,
                "showarrow": False,
                "yanchor": "bottom",
            }
        ]
    return go.Figure(data=[trace], layout=layout)


def loss_bars(token_loss, labels: list[str], mean: float, *, title: str | None = None, lang: str = "en") -> go.Figure:
    """Per-token loss −log p(target), one bar per position labelled "i input→target", and
    the mean (the training loss) as a dashed line."""
    return bars(
        token_loss,
        labels,
        title=title or t(lang, "names-figure-loss-title"),
        value_name=t(lang, "names-figure-loss-value"),
        x_title=t(lang, "names-figure-position-prediction"),
        mean=mean,
        lang=lang,
    )


def series_bars(
    labels: list[str], series: dict[str, np.ndarray], *, title: str, value_name: str, x_title: str = "key"
) -> go.Figure:
    """Several vectors over the same entries as grouped bars: J·dL/dp against the recorded
    dL/dscores, or the recorded dL/dlogits against (p − onehot)/N."""
    traces = [
        go.Bar(
            name=name,
            x=labels,
            y=as_float32(values),
            hovertemplate=f"{x_title} %{{x}}<br>{name} = %{{y:.7g}}<extra></extra>",
        )
        for name, values in series.items()
    ]
    layout = base_layout(
        title,
        340,
        barmode="group",
        xaxis=axis_style(labels, x_title),
        yaxis={"title": {"text": value_name}},
        legend={"orientation": "h", "y": -0.25},
    )
    return go.Figure(data=traces, layout=layout)


def jacobian_heatmap(
    jacobian,
    labels: list[str],
    *,
    title: str,
    symbols: tuple[str, str, str],
    max_cells: int = 20_000,
    lang: str = "en",
) -> go.Figure:
    """J = diag(p) − p pᵀ of one softmax row (diverging: the diagonal is positive, everything off
    it negative). `symbols`: (entry, row, column) in the notation of the softmax drawn, e.g.
    ("∂P[m,i,j]/∂S[m,i,j′]", "key j", "key j′")."""
    value_name, row_title, col_title = symbols
    return heatmap(
        jacobian,
        labels,
        labels,
        title=title,
        value_name=value_name,
        row_title=row_title,
        col_title=col_title,
        gradient=True,
        max_cells=max_cells,
        keep_rows=False,
        lang=lang,
    )
