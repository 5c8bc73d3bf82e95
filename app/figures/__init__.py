"""Figure builders: pure functions (arrays, labels) -> plotly Figure. No trace, no HTTP.

The conventions (colour scales, axes, layout, hover, pooling) are public helpers of
`style` and `pooling`; `basic` draws heatmaps and bars, `panels` side-by-side heatmaps,
`heads` attention-head grids, `update` the optimizer step, `buglab` the checks chart and the
faulty/correct diff; `serialize` turns a figure into the JSON a step view sends.
"""

from app.figures.basic import bars, heatmap, jacobian_heatmap, loss_bars, series_bars
from app.figures.panels import panel_caption, panel_heatmap, panel_suffix, residual_view
from app.figures.pooling import Pooling, max_abs_pool, plan_pooling, pool_labels
from app.figures.style import GRAD_SCALE, VALUE_SCALE, as_float32, reference_line

__all__ = [
    "GRAD_SCALE",
    "VALUE_SCALE",
    "Pooling",
    "as_float32",
    "bars",
    "heatmap",
    "jacobian_heatmap",
    "loss_bars",
    "max_abs_pool",
    "panel_caption",
    "panel_heatmap",
    "panel_suffix",
    "plan_pooling",
    "pool_labels",
    "reference_line",
    "residual_view",
    "series_bars",
]
