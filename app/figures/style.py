"""The conventions every figure shares: colour scales, axes, the layout frame, hover text."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from app.figures.pooling import Pooling
from app.words import t

VALUE_SCALE = "Viridis"


GRAD_SCALE = "RdBu_r"


# No template: the default one adds ~10 kB to every figure; the page styles the plots.
NO_TEMPLATE = go.layout.Template()


def as_float32(values) -> np.ndarray:
    """float32 copy with every non-finite entry as NaN (drawn as a gap)."""
    array = np.asarray(values, dtype=np.float64)
    return np.where(np.isfinite(array), array, np.nan).astype(np.float32)


def axis_style(labels, title: str | None = None, reversed_: bool = False) -> dict:
    axis: dict = {"type": "category" if isinstance(labels, list) else "linear"}
    if title:
        axis["title"] = {"text": title}
    if reversed_:
        axis["autorange"] = "reversed"
    return axis


def base_layout(title: str, height: int, note: str | None = None, **extra) -> dict:
    layout = {
        "template": NO_TEMPLATE,
        "title": {"text": title, "x": 0.01, "xanchor": "left"},
        "height": height,
        "margin": {"l": 70, "r": 20, "t": 60, "b": 50},
        **extra,
    }
    if note:
        layout["meta"] = {"note": note}
    return layout


def subplot_domain(start: float, end: float) -> list[float]:
    """A subplot's [start, end] in paper units, clamped (float sums stray below 0 or above 1)."""
    return [min(1.0, max(0.0, round(start, 6))), min(1.0, max(0.0, round(end, 6)))]


def hover_template(row_title: str, col_title: str, value_name: str, pooled: bool | Pooling, lang: str = "en") -> str:
    """Hover text of a heatmap cell. Given the Pooling, a pooled cell says which block it
    stands for (hover must not pass a block's maximum off as one entry's value)."""
    if isinstance(pooled, Pooling):
        if pooled.active:
            return block_hover(row_title, col_title, value_name, pooled, lang)
        pooled = False
    extra = f"<br>{t(lang, 'names-figure-hover-pooled')}" if pooled else ""
    return f"{row_title} %{{y}}<br>{col_title} %{{x}}<br>{value_name} = %{{z:.7g}}{extra}<extra></extra>"


def block_hover(row_title: str, col_title: str, value_name: str, pooling: Pooling, lang: str = "en") -> str:
    def span(title: str, ref: str, step: int) -> str:
        if step > 1:
            return t(lang, "names-figure-hover-span", title=title, ref=f"%{{{ref}}}", more=step - 1)
        return f"{title} %{{{ref}}}"

    r, c = pooling.row_step, pooling.col_step
    block = t(lang, "names-figure-hover-block", rows=r, cols=c)
    value = t(lang, "names-figure-hover-block-value", value=value_name, z="%{z:.7g}")
    return f"{block}<br>{span(row_title, 'y', r)}<br>{span(col_title, 'x', c)}<br>{value}<extra></extra>"


def colour_scale(gradient: bool) -> dict:
    return {"colorscale": GRAD_SCALE, "zmid": 0} if gradient else {"colorscale": VALUE_SCALE}


def reference_line(value: float, *, vertical: bool, color: str = "#444", dash: str = "dash", width: int = 2) -> dict:
    """A line across the whole plot at `value`: x = value when vertical, else y = value."""
    if vertical:
        span = {"yref": "paper", "y0": 0, "y1": 1, "x0": value, "x1": value}
    else:
        span = {"xref": "paper", "x0": 0, "x1": 1, "y0": value, "y1": value}
    return {"type": "line", **span, "line": {"dash": dash, "width": width, "color": color}}
