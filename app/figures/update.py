"""Figure builders of the update step: pure functions (arrays, labels) -> plotly Figure,
following the conventions of app.figures (no template, float32 data, hover at float32
precision, the note in layout.meta)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from app.figures.style import as_float32, base_layout, reference_line
from app.words import t
from app.words.numbers import with_separator

BAR_COLOUR = "#0b57d0"
AFTER_COLOUR = "#1b7f3b"
FIRST_ORDER_COLOUR = "#a64b00"
EXPECTED_COLOUR = "#a64b00"


def _log_range(values: np.ndarray, *others) -> list[float] | None:
    """A log axis range (in log10 units) around the positive finite values (and the others:
    a reference value, an expected range)."""
    for other in others:
        if other is not None:
            values = np.append(values, np.asarray(other, dtype=np.float64))
    finite = values[np.isfinite(values) & (values > 0)]
    if not finite.size:
        return None
    lo, hi = math.log10(float(finite.min())), math.log10(float(finite.max()))
    return [math.floor(lo) - 0.3, math.ceil(hi) + 0.3]


def expected_range(names: list[str], low, high, label: str, lang: str = "en") -> go.Scatter:
    """Per parameter, the range its value should fall in: a whisker from `low` to a marker
    at `high` (a marker alone where they meet), on the bars' rows."""
    high = np.asarray(high, dtype=np.float64)
    return go.Scatter(
        x=as_float32(high),
        y=names,
        mode="markers",
        name=label,
        marker={"symbol": "line-ns-open", "size": 16, "color": EXPECTED_COLOUR, "line": {"width": 3}},
        error_x={
            "type": "data",
            "symmetric": False,
            "array": np.zeros_like(high, dtype=np.float32),
            "arrayminus": as_float32(high - np.asarray(low, dtype=np.float64)),
            "color": EXPECTED_COLOUR,
            "thickness": 2,
            "width": 0,
        },
        hovertemplate=f"%{{y}}<br>{t(lang, 'names-update-hover-expected', x='%{x:.3g}')}<extra></extra>",
    )


def parameter_bars(
    values,
    names: list[str],
    *,
    title: str,
    value_name: str,
    reference: float | None = None,
    reference_label: str | None = None,
    expected: tuple | None = None,
    expected_label: str = "expected",
    lang: str = "en",
) -> go.Figure:
    """One horizontal bar per parameter, on a log axis (norms and ratios span decades); the
    parameters run down in model order. `reference` draws a dashed line at that value;
    `expected` = (low, high) per parameter, the range each bar should end in."""
    values = as_float32(values)
    traces = [
        go.Bar(
            x=values,
            y=names,
            orientation="h",
            name=value_name,
            marker={"color": BAR_COLOUR},
            hovertemplate=f"%{{y}}<br>{value_name} = %{{x:.4g}}<extra></extra>",
        )
    ]
    if expected is not None:
        traces.append(expected_range(names, *expected, expected_label, lang))
    xaxis = {"type": "log", "title": {"text": t(lang, "names-update-log-axis", value=value_name)}}
    span = _log_range(np.asarray(values, dtype=np.float64), reference, *(expected or ()))
    if span:
        xaxis["range"] = span
    extra = {"legend": {"orientation": "h", "y": -0.3}, "showlegend": True} if expected is not None else {}
    layout = base_layout(
        title,
        int(min(900, 18 * len(names) + 130)) + (40 if expected is not None else 0),
        xaxis=xaxis,
        yaxis={"type": "category", "autorange": "reversed", "title": {"text": t(lang, "names-update-parameter")}},
        **extra,
    )
    if reference is not None:
        layout["shapes"] = [reference_line(reference, vertical=True)]
        layout["annotations"] = [
            {
                "text": reference_label or with_separator(f"{reference:g}", lang),
                "x": math.log10(reference),
                "xref": "x",
                "y": 1,
                "yref": "paper",
                "yanchor": "bottom",
                "showarrow": False,
            }
        ]
    return go.Figure(data=traces, layout=layout)


def loss_curve(
    train_losses, loss_before: float, loss_after: float | None, *, title: str, lang: str = "en"
) -> go.Figure:
    """The loss on this batch: the N training steps run before this one (a line), this
    step's loss and the loss after its update (markers), on a log axis."""
    n = len(train_losses)
    traces = []
    if n:
        traces.append(
            go.Scatter(
                x=np.arange(1, n + 1),
                y=as_float32(train_losses),
                mode="lines",
                name=t(lang, "names-update-steps-before", n=n),
                line={"color": BAR_COLOUR, "width": 2},
                hovertemplate=f"{t(lang, 'names-update-hover-step', x='%{x}', y='%{y:.5g}')}<extra></extra>",
            )
        )
    traces.append(
        go.Scatter(
            x=[n + 1],
            y=as_float32([loss_before]),
            mode="markers",
            name=t(lang, "names-update-this-step", step=n + 1, loss=with_separator(f"{loss_before:.4g}", lang)),
            marker={"size": 13, "color": "#d93025", "symbol": "circle"},
            hovertemplate=f"{t(lang, 'names-update-hover-this', y='%{y:.5g}')}<extra></extra>",
        )
    )
    if loss_after is not None:
        traces.append(
            go.Scatter(
                x=[n + 2],
                y=as_float32([loss_after]),
                mode="markers",
                name=t(lang, "names-update-after", loss=with_separator(f"{loss_after:.4g}", lang)),
                marker={"size": 13, "color": AFTER_COLOUR, "symbol": "diamond"},
                hovertemplate=f"{t(lang, 'names-update-hover-after', y='%{y:.5g}')}<extra></extra>",
            )
        )
    layout = base_layout(
        title,
        340,
        xaxis={"title": {"text": t(lang, "names-update-steps-axis")}, **integer_ticks(n + 2)},
        yaxis={"type": "log", "title": {"text": t(lang, "names-update-loss-log-axis")}},
        legend={"orientation": "h", "y": -0.3},
    )
    return go.Figure(data=traces, layout=layout)


def integer_ticks(last: int, max_ticks: int = 10) -> dict:
    """An x axis counting steps 1..last: ticks on whole numbers only (1, 2 or 5 times a power
    of ten apart, at most max_ticks of them), never at 0.5 or 1.5."""
    steps = (m * 10**e for e in range(9) for m in (1, 2, 5))
    step = next(s for s in steps if last / s <= max_ticks)
    return {"tickmode": "linear", "tick0": 0, "dtick": step, "tickformat": "d", "range": [0.5, last + 0.5]}


def _line_search_traces(eta: np.ndarray, actual: np.ndarray, first_order, lang: str) -> list[go.Scatter]:
    """The measured loss along −g, the first-order prediction, and the lowest measured point
    (when any loss is finite)."""
    traces = [
        go.Scatter(
            x=eta,
            y=as_float32(actual),
            mode="lines+markers",
            name=t(lang, "names-update-measured"),
            line={"color": BAR_COLOUR, "width": 3},
            hovertemplate=f"{t(lang, 'names-update-hover-eta-loss', x='%{x:.3g}', y='%{y:.5g}')}<extra></extra>",
        ),
        go.Scatter(
            x=eta,
            y=as_float32(first_order),
            mode="lines",
            name=t(lang, "names-update-first-order"),
            line={"color": FIRST_ORDER_COLOUR, "width": 2, "dash": "dash"},
            hovertemplate=f"{t(lang, 'names-update-hover-eta-predicted', x='%{x:.3g}', y='%{y:.5g}')}<extra></extra>",
        ),
    ]
    finite = np.isfinite(actual)
    if finite.any():
        best = int(np.argmin(np.where(finite, actual, np.inf)))
        traces.append(
            go.Scatter(
                x=[eta[best]],
                y=as_float32([actual[best]]),
                mode="markers",
                name=t(lang, "names-update-lowest", eta=with_separator(f"{eta[best]:.3g}", lang)),
                marker={"size": 12, "color": AFTER_COLOUR, "symbol": "diamond"},
                hovertemplate=f"{t(lang, 'names-update-hover-eta-loss', x='%{x:.3g}', y='%{y:.5g}')}<extra></extra>",
            )
        )
    return traces


def line_search(
    eta,
    loss,
    first_order,
    loss0: float,
    *,
    title: str,
    lr: float | None = None,
    lang: str = "en",
) -> go.Figure:
    """loss(W − η·g) against the step size η (log axis) beside the first-order prediction
    loss − η‖g‖², which is exact for small η and drifts away where curvature takes over.
    `lr`: the SGD learning rate of this step, drawn as a dashed line."""
    eta = np.asarray(eta, dtype=np.float64)
    actual = np.asarray(loss, dtype=np.float64)
    traces = _line_search_traces(eta, actual, first_order, lang)
    finite = np.isfinite(actual)
    # Loss is never negative and blows up for large η: show 0 .. a little above where it started.
    top = float(np.max(actual[finite])) if finite.any() else loss0
    top = max(loss0 * 1.15, min(top, 2 * loss0) * 1.05) if loss0 > 0 else top
    layout = base_layout(
        title,
        380,
        xaxis={"type": "log", "title": {"text": t(lang, "names-update-eta-axis")}},
        yaxis={"title": {"text": t(lang, "names-update-loss-axis")}, "range": [0, top]},
        legend={"orientation": "h", "y": -0.3},
    )
    shapes = [reference_line(loss0, vertical=False, dash="dot", width=1)]
    if lr is not None:
        shapes.append(reference_line(lr, vertical=True, color="#d93025"))
        layout["annotations"] = [
            {
                "text": f"SGD lr = {with_separator(f'{lr:g}', lang)}",
                "x": math.log10(lr),
                "xref": "x",
                "y": 1,
                "yref": "paper",
                "yanchor": "bottom",
                "showarrow": False,
            }
        ]
    layout["shapes"] = shapes
    return go.Figure(data=traces, layout=layout)
