"""Figure builders of the bug lab: pure functions (arrays, labels) -> plotly Figure.

* `check_errors_chart`: every step's gradient-check error on a log scale, the tolerance
  line, the first failing backward step marked: where the gradients go wrong.
* `diff_panels`: a gradient as the faulty backward computed it, as the correct backward
  computes it, and their difference.

Conventions as in app.figures (diverging RdBu centred on zero for gradients, positions down
the y axis, float32 data, pooling of large heatmaps).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from app.figures.panels import panel_caption, panel_heatmap, panel_suffix
from app.figures.pooling import plan_pooling, pool_labels
from app.figures.style import (
    GRAD_SCALE,
    axis_style,
    base_layout,
    hover_template,
    reference_line,
    subplot_domain,
)
from app.words import t
from app.words.numbers import with_separator

PASSED_COLOUR = "#1a6b21"
FAILED_COLOUR = "#b3261e"
# |a − b| / max(|a|, |b|) lies in [0, 2]: exact agreement (0) is drawn at the floor, a check
# that could not run (NaN) at the top.
ERROR_FLOOR = 1e-16
ERROR_CEILING = 2.0
PHASE_BANDS = {"forward": "#d6e4fb", "loss": "#fde2c8", "backward": "#ecd8f4", "update": "#d2efea"}


def _runs(phases: list[str]) -> list[tuple[str, int, int]]:
    """(phase, first, last) of each contiguous run of one phase."""
    runs: list[tuple[str, int, int]] = []
    for i, phase in enumerate(phases):
        if runs and runs[-1][0] == phase:
            runs[-1] = (phase, runs[-1][1], i)
        else:
            runs.append((phase, i, i))
    return runs


def _error_bars(
    errors: np.ndarray, passed: list[bool | None], labels: list[str], lang: str
) -> tuple[go.Bar, np.ndarray]:
    """(bars, heights): one bar per checked step, its height the error clipped to [floor,
    ceiling] (NaN at the ceiling), coloured passed/failed, the exact value in the hover."""
    checked = [i for i, p in enumerate(passed) if p is not None]
    shown = np.array([errors[i] for i in checked], dtype=np.float64)
    heights = np.where(np.isnan(shown), ERROR_CEILING, np.clip(shown, ERROR_FLOOR, ERROR_CEILING))
    exact = [(t(lang, "names-buglab-not-run") if math.isnan(e) else with_separator(f"{e:.3g}", lang)) for e in shown]
    verdicts = {True: t(lang, "names-buglab-passed"), False: t(lang, "names-buglab-failed")}
    bars = go.Bar(
        x=checked,
        y=heights,
        base=ERROR_FLOOR,
        marker={"color": [PASSED_COLOUR if passed[i] else FAILED_COLOUR for i in checked]},
        customdata=[[labels[i], exact[k], verdicts[bool(passed[i])]] for k, i in enumerate(checked)],
        hovertemplate=_hover(lang),
        name=t(lang, "names-buglab-error-name"),
    )
    return bars, heights


def _hover(lang: str) -> str:
    """A bar's hover: its step and op, its error and verdict (Plotly's placeholders as values)."""
    step, error = "%{x}", ("%{customdata[0]}", "%{customdata[1]}", "%{customdata[2]}")
    return f"{t(lang, 'names-buglab-hover', step=step, op=error[0], error=error[1], verdict=error[2])}<extra></extra>"


# The caption of each phase's band, by phase.
_PHASES = {
    "forward": "names-buglab-phase-forward",
    "loss": "names-buglab-phase-loss",
    "backward": "names-buglab-phase-backward",
    "update": "names-buglab-phase-update",
}


def _phase_bands(phases: list[str], lang: str) -> tuple[list[dict], list[dict]]:
    """(shapes, annotations): a coloured background band and a caption per run of one phase."""
    shapes, annotations = [], []
    for phase, first, last in _runs(phases):
        shapes.append(
            {"type": "rect", "xref": "x", "yref": "paper", "x0": first - 0.5, "x1": last + 0.5, "y0": 0, "y1": 1,
             "fillcolor": PHASE_BANDS.get(phase, "#eeeeee"), "opacity": 0.6, "line": {"width": 0}, "layer": "below"}
        )  # fmt: skip
        annotations.append(
            {"text": t(lang, _PHASES[phase]) if phase in _PHASES else phase, "x": (first + last) / 2, "xref": "x", "y": 1, "yref": "paper", "yanchor": "bottom",
             "showarrow": False}
        )  # fmt: skip
    return shapes, annotations


def _check_marks(tolerance: float, first_failing: int | None, lang: str) -> tuple[dict, list[dict]]:
    """(tolerance line, annotations): the line's caption and the first failing step's arrow."""
    annotations = [
        {"text": t(lang, "names-buglab-tolerance", tolerance=with_separator(f"{tolerance:g}", lang)), "xref": "paper", "x": 0, "xanchor": "left", "y": math.log10(tolerance),
         "yanchor": "bottom", "showarrow": False, "bgcolor": "rgba(255,255,255,0.8)"}
    ]  # fmt: skip
    if first_failing is not None:
        annotations.append(
            {"text": t(lang, "names-buglab-first-failing", step=first_failing), "x": first_failing, "xref": "x",
             "y": math.log10(ERROR_CEILING), "ax": 0, "ay": -28, "showarrow": True, "arrowhead": 2, "arrowwidth": 2,
             "arrowcolor": FAILED_COLOUR, "font": {"color": FAILED_COLOUR}, "bgcolor": "#fff"}
        )  # fmt: skip
    return reference_line(tolerance, vertical=False, color="#111"), annotations


def check_errors_chart(
    errors,
    passed: list[bool | None],
    labels: list[str],
    phases: list[str],
    *,
    tolerance: float,
    first_failing: int | None,
    title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """One bar per step (x: the step's index, 0-based as the page and its URL count), log-scale relative
    error, green when within `tolerance`, red when not; `passed[i]` None = not checked yet
    (no bar). Background bands show the phases; the dashed line is the tolerance."""
    bars, heights = _error_bars(np.asarray(errors, dtype=np.float64), passed, labels, lang)
    n = len(phases)
    finite = heights[np.isfinite(heights)]
    low = math.floor(math.log10(max(ERROR_FLOOR, min(finite.min(initial=tolerance), tolerance / 100))))
    shapes, annotations = _phase_bands(phases, lang)
    tolerance_line, marks = _check_marks(tolerance, first_failing, lang)
    shapes.append(tolerance_line)
    annotations.extend(marks)
    layout = base_layout(
        title or t(lang, "names-buglab-chart-title"),
        250,
        xaxis={"title": {"text": t(lang, "names-buglab-step")}, "range": [-0.5, n - 0.5], "showgrid": False},
        yaxis={"type": "log", "title": {"text": t(lang, "names-buglab-error-axis")}, "range": [low, math.log10(ERROR_CEILING) + 0.4],
               "exponentformat": "power"},
        shapes=shapes,
        annotations=annotations,
        bargap=0.15,
        showlegend=False,
    )  # fmt: skip
    layout["margin"] = {"l": 70, "r": 20, "t": 70, "b": 45}
    return go.Figure(data=[bars], layout=layout)


def _identical_caption(x: float, lang: str) -> dict:
    return {"text": t(lang, "names-buglab-identical"), "x": x, "y": 0.5, "xref": "paper", "yref": "paper",
            "showarrow": False, "font": {"size": 16}, "bgcolor": "#fff"}  # fmt: skip


def diff_panels(
    faulty,
    correct,
    rows: list[str] | None,
    cols: list[str] | None,
    *,
    title: str,
    value_name: str,
    row_title: str = "position",
    col_title: str = "feature",
    names: tuple[str, str, str] | None = None,
    max_cells: int = 20_000,
    lang: str = "en",
) -> go.Figure:
    """Three (R, C) heatmaps side by side: the faulty and the correct gradient on one
    diverging colour axis (so they compare by colour), and their difference on its own
    (a small difference would vanish on the gradients' scale)."""
    parts = ("names-buglab-faulty", "names-buglab-correct", "names-buglab-difference")
    names = names or tuple(t(lang, part) for part in parts)
    faulty, correct = np.asarray(faulty, dtype=np.float64), np.asarray(correct, dtype=np.float64)
    panels = (faulty, correct, faulty - correct)
    pooling = plan_pooling(*faulty.shape, max(1, max_cells // 3), keep_rows=rows is not None)
    x = pool_labels(cols, pooling.col_step, faulty.shape[1])
    y = pool_labels(rows, pooling.row_step, faulty.shape[0])
    # Each panel's left edge; the first colour bar sits between the second and third panel.
    starts, width = (0.0, 0.29, 0.69), 0.265
    layout: dict = {}
    traces, annotations = [], []
    hover = hover_template(row_title, col_title, value_name, pooling.active, lang)
    for k, (name, panel) in enumerate(zip(names, panels, strict=True)):
        suffix = panel_suffix(k)
        x0 = starts[k]
        layout[f"xaxis{suffix}"] = {
            **axis_style(x, col_title),
            "domain": subplot_domain(x0, x0 + width),
            "anchor": f"y{suffix}",
        }
        layout[f"yaxis{suffix}"] = {
            **axis_style(y, row_title if k == 0 else None, reversed_=True),
            "anchor": f"x{suffix}",
            "showticklabels": k == 0,
        }
        coloraxis = "coloraxis2" if k == 2 else "coloraxis"  # the difference: a scale of its own
        traces.append(
            panel_heatmap(k, panel, pooling, x, y, name=name, hovertemplate=f"{name}<br>{hover}", coloraxis=coloraxis)
        )
        annotations.append(panel_caption(name, x0 + width / 2))
    identical = not np.any(panels[2])
    if identical:  # a blank panel would look like a failure to draw
        annotations.append(_identical_caption(starts[2] + width / 2, lang))
    n_rows = len(y)
    height = int(min(600, max(230, 14 * min(n_rows, 36) + 150)))
    layout.update(
        base_layout(title, height, pooling.note(faulty.shape, lang), annotations=annotations),
        coloraxis={"colorscale": GRAD_SCALE, "cmid": 0, "colorbar": {"title": {"text": value_name}, "x": 0.565,
                   "thickness": 14, "len": 0.9}},
        coloraxis2={"colorscale": GRAD_SCALE, "cmid": 0, "showscale": not identical,
                    "colorbar": {"title": {"text": t(lang, "names-buglab-difference-bar")}, "x": 0.965, "thickness": 14, "len": 0.9}},
    )  # fmt: skip
    return go.Figure(data=traces, layout=layout)
