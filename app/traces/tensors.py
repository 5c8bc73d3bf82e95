"""A recorded tensor or its gradient, as .npy bytes or JSON."""

from __future__ import annotations

import io

import numpy as np

import xt_core


def tensor_array(trace: xt_core.Trace, name: str, grad: bool) -> np.ndarray:
    """The recorded tensor or its gradient; KeyError (with a message) for any other name."""
    if grad:
        if name in ("tokens", "targets"):
            raise KeyError(f"{name} are integer token ids: they have no gradient")
        if name not in trace.all_grads:
            raise KeyError(f"no recorded gradient for {name!r}")
        return np.asarray(trace.all_grads[name])
    if name not in trace.values:
        raise KeyError(f"no recorded tensor named {name!r}")
    return np.asarray(trace.values[name])


def tensor_npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


def tensor_json(name: str, array: np.ndarray, grad: bool) -> dict:
    return {"name": name, "grad": grad, "shape": list(array.shape), "dtype": str(array.dtype), "data": array}
