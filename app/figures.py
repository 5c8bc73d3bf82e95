"""Figure builders: pure functions (arrays, labels) -> plotly Figure. No trace, no HTTP.

Conventions shared by every builder (attention-head grids live in app.head_figures):
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
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

VALUE_SCALE = "Viridis"
GRAD_SCALE = "RdBu_r"
# No template: the default one adds ~10 kB to every figure; the page styles the plots.
_NO_TEMPLATE = go.layout.Template()


def as_float32(values) -> np.ndarray:
    """float32 copy with every non-finite entry as NaN (drawn as a gap)."""
    array = np.asarray(values, dtype=np.float64)
    return np.where(np.isfinite(array), array, np.nan).astype(np.float32)


# ---------------------------------------------------------------------- pooling


@dataclass(frozen=True)
class Pooling:
    row_step: int = 1
    col_step: int = 1

    @property
    def active(self) -> bool:
        return self.row_step > 1 or self.col_step > 1

    def note(self, shape: tuple[int, int]) -> str | None:
        if not self.active:
            return None
        rows, cols = (-(-shape[0] // self.row_step), -(-shape[1] // self.col_step))
        return (
            f"{shape[0]}×{shape[1]} values shown as {rows}×{cols} cells: each cell holds the entry of largest "
            f"magnitude in a block of {self.row_step}×{self.col_step}. Download the tensor for every value."
        )


def plan_pooling(n_rows: int, n_cols: int, max_cells: int, keep_rows: bool = True) -> Pooling:
    """Smallest pooling that fits max_cells. keep_rows: pool the columns first, so positions
    keep their own row (and label) as long as possible."""
    max_cells = max(1, max_cells)
    if n_rows * n_cols <= max_cells:
        return Pooling()
    if keep_rows and n_rows <= max_cells:
        return Pooling(1, -(-n_cols // max(1, max_cells // n_rows)))
    step = max(1, math.ceil(math.sqrt(n_rows * n_cols / max_cells)))
    while -(-n_rows // step) * -(-n_cols // step) > max_cells:
        step += 1
    return Pooling(step, step)


def max_abs_pool(z: np.ndarray, pooling: Pooling) -> np.ndarray:
    """(R, C) -> (ceil(R/r), ceil(C/c)): per block, the finite entry of largest |value|
    (NaN only if the block holds no finite entry)."""
    if not pooling.active:
        return z
    r, c = pooling.row_step, pooling.col_step
    R, C = z.shape
    padded = np.full((-(-R // r) * r, -(-C // c) * c), np.nan, dtype=np.float64)
    padded[:R, :C] = z
    blocks = padded.reshape(padded.shape[0] // r, r, padded.shape[1] // c, c).transpose(0, 2, 1, 3)
    blocks = blocks.reshape(blocks.shape[0], blocks.shape[1], r * c)
    key = np.where(np.isfinite(blocks), np.abs(blocks), -1.0)
    return np.take_along_axis(blocks, key.argmax(-1)[..., None], -1)[..., 0]


def pool_labels(labels: list[str] | None, step: int, n: int) -> list[str] | np.ndarray:
    if labels is None:
        return np.arange(0, n, step)
    if step == 1:
        return list(labels)
    return [f"{labels[i]}…" for i in range(0, n, step)]


# ---------------------------------------------------------------------- shared pieces


def _axis(labels, title: str | None = None, reversed_: bool = False) -> dict:
    axis: dict = {"type": "category" if isinstance(labels, list) else "linear"}
    if title:
        axis["title"] = {"text": title}
    if reversed_:
        axis["autorange"] = "reversed"
    return axis


def _layout(title: str, height: int, note: str | None = None, **extra) -> dict:
    layout = {
        "template": _NO_TEMPLATE,
        "title": {"text": title, "x": 0.01, "xanchor": "left"},
        "height": height,
        "margin": {"l": 70, "r": 20, "t": 60, "b": 50},
        **extra,
    }
    if note:
        layout["meta"] = {"note": note}
    return layout


def _domain(start: float, end: float) -> list[float]:
    """A subplot's [start, end] in paper units, clamped (float sums stray below 0 or above 1)."""
    return [min(1.0, max(0.0, round(start, 6))), min(1.0, max(0.0, round(end, 6)))]


def _hover(row_title: str, col_title: str, value_name: str, pooled: bool | Pooling) -> str:
    """Hover text of a heatmap cell. Given the Pooling, a pooled cell says which block it
    stands for (hover must not pass a block's maximum off as one entry's value)."""
    if isinstance(pooled, Pooling):
        if pooled.active:
            return _block_hover(row_title, col_title, value_name, pooled)
        pooled = False
    extra = "<br>(largest |value| of its block)" if pooled else ""
    return f"{row_title} %{{y}}<br>{col_title} %{{x}}<br>{value_name} = %{{z:.7g}}{extra}<extra></extra>"


def _block_hover(row_title: str, col_title: str, value_name: str, pooling: Pooling) -> str:
    def span(title: str, ref: str, step: int) -> str:
        return f"{title} %{{{ref}}}" + (f" and the next {step - 1}" if step > 1 else "")

    r, c = pooling.row_step, pooling.col_step
    return (
        f"pooled block of {r}×{c} values<br>{span(row_title, 'y', r)}<br>{span(col_title, 'x', c)}<br>"
        f"{value_name} = %{{z:.7g}}, the largest |value| in the block<extra></extra>"
    )


def _colour(gradient: bool) -> dict:
    return {"colorscale": GRAD_SCALE, "zmid": 0} if gradient else {"colorscale": VALUE_SCALE}


# ---------------------------------------------------------------------- builders


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
) -> go.Figure:
    """A 2-D array (rows × cols); rows are positions unless told otherwise."""
    z = np.asarray(z)
    pooling = plan_pooling(z.shape[0], z.shape[1], max_cells, keep_rows)
    shown = max_abs_pool(z, pooling)
    trace = go.Heatmap(
        z=as_float32(shown),
        x=pool_labels(cols, pooling.col_step, z.shape[1]),
        y=pool_labels(rows, pooling.row_step, z.shape[0]),
        hovertemplate=_hover(row_title, col_title, value_name, pooling),
        colorbar={"title": {"text": value_name}},
        **_colour(gradient),
    )
    height = int(min(640, max(260, 14 * min(shown.shape[0], 40) + 120)))
    layout = _layout(
        title,
        height,
        pooling.note(z.shape),
        xaxis=_axis(cols, col_title),
        yaxis=_axis(rows, row_title, reversed_=True),
    )
    return go.Figure(data=[trace], layout=layout)


def reference_line(value: float, *, vertical: bool, color: str = "#444", dash: str = "dash", width: int = 2) -> dict:
    """A line across the whole plot at `value`: x = value when vertical, else y = value."""
    if vertical:
        span = {"yref": "paper", "y0": 0, "y1": 1, "x0": value, "x1": value}
    else:
        span = {"xref": "paper", "x0": 0, "x1": 1, "y0": value, "y1": value}
    return {"type": "line", **span, "line": {"dash": dash, "width": width, "color": color}}


def bars(
    values,
    labels: list[str] | None,
    *,
    title: str,
    value_name: str,
    x_title: str = "position",
    gradient: bool = False,
    mean: float | None = None,
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
    layout = _layout(
        title, 320, xaxis=_axis(labels if labels is not None else None, x_title), yaxis={"title": {"text": value_name}}
    )
    if mean is not None and math.isfinite(mean):
        layout["shapes"] = [reference_line(mean, vertical=False)]
        layout["annotations"] = [
            {
                "text": f"mean = {mean:.6g}",
                "xref": "paper",
                "x": 1,
                "xanchor": "right",
                "y": mean,
                "showarrow": False,
                "yanchor": "bottom",
            }
        ]
    return go.Figure(data=[trace], layout=layout)


def loss_bars(token_loss, labels: list[str], mean: float, *, title: str = "Loss per position") -> go.Figure:
    """Per-token loss −log p(target), one bar per position labelled "i input→target", and
    the mean (the training loss) as a dashed line."""
    return bars(
        token_loss, labels, title=title, value_name="−log p(target)", x_title="position: input→target", mean=mean
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
    layout = _layout(
        title,
        340,
        barmode="group",
        xaxis=_axis(labels, x_title),
        yaxis={"title": {"text": value_name}},
        legend={"orientation": "h", "y": -0.25},
    )
    return go.Figure(data=traces, layout=layout)


def jacobian_heatmap(jacobian, labels: list[str], *, title: str, max_cells: int = 20_000) -> go.Figure:
    """J = diag(p) − p pᵀ of one softmax row: J[i, j] = ∂p_i/∂s_j (diverging: the diagonal is
    positive, everything off it negative)."""
    return heatmap(
        jacobian,
        labels,
        labels,
        title=title,
        value_name="∂p_i/∂s_j",
        row_title="i",
        col_title="j",
        gradient=True,
        max_cells=max_cells,
        keep_rows=False,
    )


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
    names: tuple[str, str, str] = ("arriving along the skip", "added by the branch", "sum"),
    max_cells: int = 20_000,
) -> go.Figure:
    """Residual gradients add: three (T, C) panels side by side on one diverging colour
    axis — the gradient arriving along the skip, the part the branch adds, and their sum."""
    panels = [np.asarray(a) for a in (skip, branch, total)]
    pooling = plan_pooling(*panels[0].shape, max_cells // 3 or 1)
    x = pool_labels(None, pooling.col_step, panels[0].shape[1])
    y = pool_labels(rows, pooling.row_step, panels[0].shape[0])
    width, gap = 0.3, 0.05
    layout: dict = {}
    traces, annotations = [], []
    hover = _hover("position", "feature", "value", pooling)
    for k, (name, panel) in enumerate(zip(names, panels, strict=True)):
        suffix = panel_suffix(k)
        x0 = k * (width + gap)
        layout[f"xaxis{suffix}"] = {**_axis(x, "feature"), "domain": _domain(x0, x0 + width), "anchor": f"y{suffix}"}
        layout[f"yaxis{suffix}"] = {**_axis(rows, reversed_=True), "anchor": f"x{suffix}", "showticklabels": k == 0}
        traces.append(panel_heatmap(k, panel, pooling, x, y, name=name, hovertemplate=f"{name}<br>{hover}"))
        annotations.append(panel_caption(name, x0 + width / 2))
    layout.update(
        _layout(title, 420, pooling.note(panels[0].shape), annotations=annotations),
        coloraxis={"colorscale": GRAD_SCALE, "cmid": 0, "colorbar": {"title": {"text": "dL/d·"}}},
    )
    return go.Figure(data=traces, layout=layout)
