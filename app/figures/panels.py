"""Figures of side-by-side heatmap panels on one colour axis: the residual split here; the head
grid (app.figures.heads) and the bug lab's diff (app.figures.buglab) use the same pieces."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from app.figures.pooling import Pooling, max_abs_pool, plan_pooling, pool_labels
from app.figures.style import GRAD_SCALE, as_float32, axis_style, base_layout, hover_template, subplot_domain
from app.words import t


def panel_suffix(k: int) -> str:
    """Plotly's name of panel k's axes: x, y for the first, x2, y2 for the second, …"""
    return "" if k == 0 else str(k + 1)


def panel_heatmap(k: int, panel, pooling: Pooling, x, y, *, name: str, hovertemplate: str, **extra) -> go.Heatmap:
    """Panel k of a figure of side-by-side heatmaps: `panel` pooled, on its own axes, on the
    shared colour axis unless `extra` names another."""
    suffix = panel_suffix(k)
    return go.Heatmap(
        z=as_float32(max_abs_pool(panel, pooling)),
        x=x,
        y=y,
        xaxis=f"x{suffix}",
        yaxis=f"y{suffix}",
        name=name,
        hovertemplate=hovertemplate,
        **{"coloraxis": "coloraxis", **extra},
    )


def panel_caption(text: str, x: float, y: float = 1) -> dict:
    """A panel's title, centred above it (paper coordinates)."""
    return {
        "text": text,
        "x": x,
        "y": y,
        "xref": "paper",
        "yref": "paper",
        "xanchor": "center",
        "yanchor": "bottom",
        "showarrow": False,
    }


def residual_view(
    skip,
    branch,
    total,
    rows: list[str],
    *,
    title: str,
    names: tuple[str, str, str] | None = None,
    max_cells: int = 20_000,
    lang: str = "en",
) -> go.Figure:
    """Residual gradients add: three (T, C) panels side by side on one diverging colour
    axis — the gradient arriving along the skip, the part the branch adds, and their sum."""
    panels = [np.asarray(a) for a in (skip, branch, total)]
    parts = ("names-figure-residual-skip", "names-figure-residual-branch", "names-figure-residual-sum-short")
    names = names or tuple(t(lang, part) for part in parts)
    pooling = plan_pooling(*panels[0].shape, max_cells // 3 or 1)
    x = pool_labels(None, pooling.col_step, panels[0].shape[1])
    y = pool_labels(rows, pooling.row_step, panels[0].shape[0])
    width, gap = 0.3, 0.05
    layout: dict = {}
    traces, annotations = [], []
    feature = t(lang, "names-axis-feature")
    hover = hover_template(t(lang, "names-axis-position"), feature, t(lang, "names-figure-value"), pooling, lang)
    for k, (name, panel) in enumerate(zip(names, panels, strict=True)):
        suffix = panel_suffix(k)
        x0 = k * (width + gap)
        layout[f"xaxis{suffix}"] = {
            **axis_style(x, feature),
            "domain": subplot_domain(x0, x0 + width),
            "anchor": f"y{suffix}",
        }
        layout[f"yaxis{suffix}"] = {
            **axis_style(rows, reversed_=True),
            "anchor": f"x{suffix}",
            "showticklabels": k == 0,
        }
        traces.append(panel_heatmap(k, panel, pooling, x, y, name=name, hovertemplate=f"{name}<br>{hover}"))
        annotations.append(panel_caption(name, x0 + width / 2))
    layout.update(
        base_layout(title, 420, pooling.note(panels[0].shape, lang), annotations=annotations),
        coloraxis={"colorscale": GRAD_SCALE, "cmid": 0, "colorbar": {"title": {"text": "dL/d·"}}},
    )
    return go.Figure(data=traces, layout=layout)
