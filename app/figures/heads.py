"""Attention-head figures: every head of a layer as a grid (the overview a step view sends),
and one head alone at full resolution (what enlarging a head fetches). Pure builders, same
conventions as app.figures.style.

The overview is light on purpose: a step with two 8-head 128×128 grids would otherwise send
~1.5 MB. Each panel is max-|value| pooled to the grid's cell budget (outliers survive, a cell
holds a real entry), the hover names the block a cell stands for, and the note says how to
see every value.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from app.figures.basic import heatmap
from app.figures.panels import panel_caption, panel_heatmap, panel_suffix
from app.figures.pooling import Pooling, plan_pooling, pool_labels
from app.figures.style import GRAD_SCALE, VALUE_SCALE, axis_style, base_layout, hover_template, subplot_domain
from app.words import t


def grid_pooling(n_head: int, n_rows: int, n_cols: int, max_cells: int, max_figure_cells: int) -> Pooling:
    """The pooling of every panel of a grid of n_head (n_rows × n_cols) heads: each panel
    gets at most max_cells cells and all of them together max_figure_cells. Square blocks:
    queries and keys are both positions, and the causal triangle stays a triangle."""
    per_panel = min(max_cells, max(1, max_figure_cells // max(1, n_head)))
    return plan_pooling(n_rows, n_cols, per_panel, keep_rows=False)


def pooled_shape(shape: tuple[int, int], pooling: Pooling) -> tuple[int, int]:
    return -(-shape[0] // pooling.row_step), -(-shape[1] // pooling.col_step)


def grid_note(shape: tuple[int, int], pooling: Pooling, lang: str = "en") -> str | None:
    """What the overview leaves out, and where to find it."""
    if not pooling.active:
        return None
    return t(lang, "names-figure-grid-note", **pooling.sizes(shape))


def head_grid(
    z,
    rows: list[str] | None,
    cols: list[str] | None,
    *,
    title: str,
    value_name: str,
    row_title: str = "query",
    col_title: str = "key",
    gradient: bool = False,
    max_cells: int = 20_000,
    max_figure_cells: int = 150_000,
    panels_per_row: int = 5,
    lang: str = "en",
) -> go.Figure:
    """Every head of a layer, (H, R, C), as a grid of heatmaps titled "head h" that share
    one colour axis (so heads compare by colour), pooled by grid_pooling."""
    z = np.asarray(z)
    n_head, R, C = z.shape
    pooling = grid_pooling(n_head, R, C, max_cells, max_figure_cells)
    x = pool_labels(cols, pooling.col_step, C)
    y = pool_labels(rows, pooling.row_step, R)
    # As few rows as panels_per_row allows, filled evenly: 9 heads are 5 + 4, not 4 + 4 + 1.
    n_rows = -(-n_head // panels_per_row)
    n_cols = -(-n_head // n_rows)
    gap_x, gap_y = 0.04, 0.14
    width = (1 - gap_x * (n_cols - 1)) / n_cols
    height = (1 - gap_y * (n_rows - 1)) / n_rows
    hover = hover_template(row_title, col_title, value_name, pooling, lang)
    traces, annotations = [], []
    layout: dict = {}
    for h in range(n_head):
        r, c = divmod(h, n_cols)
        x0, y1 = c * (width + gap_x), 1 - r * (height + gap_y)
        suffix = panel_suffix(h)
        layout[f"xaxis{suffix}"] = {
            **axis_style(cols),
            "domain": subplot_domain(x0, x0 + width),
            "anchor": f"y{suffix}",
        }
        layout[f"yaxis{suffix}"] = {
            **axis_style(rows, reversed_=True),
            "domain": subplot_domain(y1 - height, y1),
            "anchor": f"x{suffix}",
        }
        name = t(lang, "names-figure-head", head=h)
        traces.append(
            panel_heatmap(h, z[h], pooling, x, y, name=name, meta={"head": h}, hovertemplate=f"{name}<br>{hover}")
        )
        annotations.append(panel_caption(name, x0 + width / 2, y1))
    colour = {"colorscale": GRAD_SCALE, "cmid": 0} if gradient else {"colorscale": VALUE_SCALE}
    layout.update(
        base_layout(title, 250 * n_rows + 90, grid_note((R, C), pooling, lang), annotations=annotations),
        coloraxis={**colour, "colorbar": {"title": {"text": value_name}}},
    )
    return go.Figure(data=traces, layout=layout)


def single_head(
    z,
    head: int,
    rows: list[str] | None,
    cols: list[str] | None,
    *,
    title: str,
    value_name: str,
    row_title: str = "query",
    col_title: str = "key",
    gradient: bool = False,
    max_cells: int = 65_536,
    lang: str = "en",
) -> go.Figure:
    """One head, (R, C), every value (up to max_cells; beyond, pooled with a note): the
    enlarged view. Its own colour scale, so a quiet head's structure shows."""
    figure = heatmap(
        z,
        rows,
        cols,
        title=title,
        value_name=value_name,
        row_title=row_title,
        col_title=col_title,
        gradient=gradient,
        max_cells=max_cells,
        keep_rows=False,
        lang=lang,
    )
    trace, name = figure.data[0], t(lang, "names-figure-head", head=head)
    trace.update(name=name, meta={"head": head}, hovertemplate=f"{name}<br>{trace.hovertemplate}")
    return figure
