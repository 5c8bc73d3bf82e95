"""JSON that never fails: numpy scalars and arrays become plain JSON, NaN and ±inf become
null (Starlette's JSON encoder refuses them, which would be a 500); compact bytes, gzipped
answers. Figures and tables: app.figures.serialize."""

from __future__ import annotations

import gzip
import json
import math
from typing import Any

import numpy as np
from starlette.requests import Request
from starlette.responses import Response

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
