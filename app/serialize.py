"""JSON that never fails: numpy scalars and arrays become plain JSON, NaN and ±inf become
null (Starlette's JSON encoder refuses them, which would be a 500), figures become
Plotly JSON objects, and 2-D arrays become the small 'numbers' tables of the page."""

from __future__ import annotations

import gzip
import json
import math
from typing import Any

import numpy as np
import plotly.graph_objects as go
from starlette.requests import Request
from starlette.responses import Response

# Significant digits of the numbers tables: float32 carries about 7; 6 keeps the JSON short.
TABLE_DIGITS = 6
GZIP_MIN_BYTES = 1024


def json_safe(value: Any) -> Any:
    """A JSON-ready copy: non-finite floats -> None, numpy -> Python, tuples -> lists."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return array_to_list(value)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    return value


def array_to_list(array: np.ndarray, digits: int | None = None) -> list:
    """Nested lists; non-finite -> None; floats optionally rounded to `digits` significant digits."""
    array = np.asarray(array)
    if array.dtype.kind in "iub":
        return array.tolist()
    flat = array.astype(np.float64).reshape(-1)
    if digits is None:
        items = [v if math.isfinite(v) else None for v in flat.tolist()]
    else:
        items = [float(f"{v:.{digits}g}") if math.isfinite(v) else None for v in flat.tolist()]
    if array.ndim == 0:
        return items[0]
    for size in reversed(array.shape[1:]):
        items = [items[i : i + size] for i in range(0, len(items), size)]
    return items


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
) -> tuple[dict, str | None]:
    """The 'numbers' toggle of a figure: up to max_rows × max_cols values of a 1-D or 2-D
    array (rounded to TABLE_DIGITS significant digits), and a note when truncated."""
    matrix = np.asarray(matrix)
    if matrix.ndim == 1:
        matrix = matrix[:, None]
        columns = columns or ["value"]
    n_rows, n_cols = matrix.shape
    index = list(index) if index is not None else [str(i) for i in range(n_rows)]
    columns = list(columns) if columns is not None else [str(j) for j in range(n_cols)]
    shown = matrix[:max_rows, :max_cols]
    note = None
    if n_rows > max_rows or n_cols > max_cols:
        note = f"The table shows the first {shown.shape[0]} of {n_rows} rows and {shown.shape[1]} of {n_cols} columns."
    return (
        {"columns": columns[:max_cols], "index": index[:max_rows], "rows": array_to_list(shown, TABLE_DIGITS)},
        note,
    )


def compact_json(payload: Any) -> bytes:
    """UTF-8 JSON without spaces; payload must already be json_safe (NaN refused)."""
    return json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def json_response(request: Request, payload: Any, status_code: int = 200) -> Response:
    """Compact JSON (payload must already be json_safe), gzipped when the client accepts it:
    a step's heatmaps are base64 that compresses well where the causal mask leaves zeros."""
    return encoded_response(request, compact_json(payload), status_code)


def encoded_response(request: Request, body: bytes, status_code: int = 200, gzipped: bytes | None = None) -> Response:
    headers = {"Vary": "Accept-Encoding"}
    if len(body) >= GZIP_MIN_BYTES and "gzip" in request.headers.get("accept-encoding", ""):
        headers["Content-Encoding"] = "gzip"
        body = gzipped if gzipped is not None else gzip.compress(body, compresslevel=5)
    return Response(body, status_code=status_code, media_type="application/json", headers=headers)
