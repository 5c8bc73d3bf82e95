"""A figure as the JSON a step view sends (its note apart), and the small 'numbers' table beside it."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from app.encoding import array_to_list, json_safe
from app.words import t

# Significant digits of the numbers tables: float32 carries about 7; 6 keeps the JSON short.
TABLE_DIGITS = 6


def figure_json(figure: go.Figure) -> tuple[dict, str | None]:
    """(Plotly JSON object, note). Numpy arrays are already base64 typed arrays in
    to_plotly_json(); the empty template is dropped; a builder's note travels in
    layout.meta["note"] and is returned separately."""
    data = figure.to_plotly_json()
    layout = data.get("layout", {})
    layout.pop("template", None)
    meta = layout.pop("meta", None)
    note = meta.get("note") if isinstance(meta, dict) else None
    return json_safe({"data": data.get("data", []), "layout": layout}), note


def table(
    matrix,
    index: list[str] | None,
    columns: list[str] | None,
    max_rows: int,
    max_cols: int,
    lang: str = "en",
) -> tuple[dict, str | None]:
    """The 'numbers' toggle of a figure: up to max_rows × max_cols values of a 1-D or 2-D
    array (rounded to TABLE_DIGITS significant digits), and a note when truncated."""
    matrix = np.asarray(matrix)
    if matrix.ndim == 1:
        matrix = matrix[:, None]
        columns = columns or [t(lang, "names-figure-value")]
    n_rows, n_cols = matrix.shape
    index = list(index) if index is not None else [str(i) for i in range(n_rows)]
    columns = list(columns) if columns is not None else [str(j) for j in range(n_cols)]
    shown = matrix[:max_rows, :max_cols]
    note = numbers_note(shown.shape, (n_rows, n_cols), lang)
    return (
        {"columns": columns[:max_cols], "index": index[:max_rows], "rows": array_to_list(shown, TABLE_DIGITS)},
        note,
    )


def numbers_note(shown: tuple[int, int], full: tuple[int, int], lang: str = "en") -> str | None:
    """What the 'numbers' table leaves out (None when it holds every value), in words that
    name the table, never the plot: "Numbers: the first 64 of 92 rows and 16 of 23 columns."."""
    part = left_out(shown, full, lang=lang)
    return t(lang, "names-figure-numbers-note", cut=part) if part else None


# The messages naming a cut axis ("64 of 92 rows"), by its unit.
_CUT = {
    "rows": "names-figure-cut-rows",
    "columns": "names-figure-cut-columns",
    "positions": "names-figure-cut-positions",
    "features": "names-figure-cut-features",
}


def left_out(
    shown: tuple[int, int], full: tuple[int, int], units: tuple[str, str] = ("rows", "columns"), lang: str = "en"
) -> str | None:
    """ "the first 64 of 92 rows and 16 of 23 columns" (only the cut axes); None when nothing is cut.
    `units`: the axes' units, keys of _CUT."""
    parts = [t(lang, _CUT[unit], shown=a, total=b) for a, b, unit in zip(shown, full, units, strict=True) if a < b]
    if len(parts) == 2:
        return t(lang, "names-figure-cut-both", rows=parts[0], cols=parts[1])
    return t(lang, "names-figure-cut-one", part=parts[0]) if parts else None
