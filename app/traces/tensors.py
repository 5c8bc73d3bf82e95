"""A recorded tensor or its gradient, as .npy bytes or JSON."""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterator

import anyio
import numpy as np
from fastapi.responses import StreamingResponse
from starlette.types import Message, Send

import xt_core
from app.traces import downloads
from app.words.said import Grouped, Said

# The .npy answer goes out in slices of the array's own memory of this many bytes: no copy of a
# tensor (SmolLM2's 113 MB embedding) is made per request, only the slice being sent.
NPY_CHUNK_BYTES = 1 << 20


def tensor_array(trace: xt_core.Trace, name: str, grad: bool) -> np.ndarray:
    """The recorded tensor or its gradient; KeyError (with a message, and the close names) for
    any other name."""
    return np.asarray(trace.grad(name) if grad else trace[name])


def npy_header(array: np.ndarray) -> bytes:
    """The .npy header np.save writes before a C-ordered array's bytes (format 1.0)."""
    buffer = io.BytesIO()
    header = np.lib.format.header_data_from_array_1_0(array)
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue()


def npy_stream(array: np.ndarray, owner: object = None) -> tuple[int, Iterator[bytes | memoryview]]:
    """The .npy file of `array` (the bytes np.save writes): its length and its pieces, the header
    then views of the array's memory, NPY_CHUNK_BYTES each. A C-contiguous array (every recorded
    one) is never copied; any other is copied once into C order. `owner` (the array's trace) is
    held until the last piece is sent."""
    array = np.ascontiguousarray(array)
    header = npy_header(array)
    data = memoryview(array).cast("B") if array.size else memoryview(b"")

    def pieces() -> Iterator[bytes | memoryview]:
        yield header
        for start in range(0, len(data), NPY_CHUNK_BYTES):
            yield data[start : start + NPY_CHUNK_BYTES]
        _ = owner  # referenced to the end: the trace stays alive (and counted in the budget) while it streams

    return len(header) + len(data), pieces()


class PieceNotTaken(Exception):
    """A download's client took no piece within its send timeout: the response ends there."""


class HeldWhileSent(StreamingResponse):
    """A streamed body whose bytes stay held (`held`: what lets them go) until the response ends,
    however it ends: sent, or the client gone mid-way or before the first piece (Starlette then
    cancels the stream, and a body iterator never started would never run a `finally` of its own),
    or a piece not taken within `send_timeout_s` (settings.download_send_timeout_seconds). uvicorn's
    send waits while its transport has more than its high-water mark to write (flow.drain): a
    client that stops reading stops it there. That wait cut short, the app returns with the response
    unfinished and uvicorn closes the connection (one line in its log, no traceback, no 500)."""

    def __init__(
        self,
        content: Iterator[bytes | memoryview],
        held: Callable[[], None],
        send_timeout_s: float = math.inf,
        **kwargs,
    ):
        super().__init__(content, **kwargs)
        self.held = held
        self.send_timeout_s = send_timeout_s

    async def __call__(self, scope, receive, send) -> None:
        try:
            await super().__call__(scope, receive, self._in_time(send))
        except PieceNotTaken:
            downloads.log_not_taken(self.send_timeout_s)
        finally:
            self.held()

    def _in_time(self, send: Send) -> Send:
        async def send_in_time(message: Message) -> None:
            with anyio.move_on_after(self.send_timeout_s) as waited:
                await send(message)
            if waited.cancelled_caught:  # uvicorn wrote nothing of it: its wait for the client comes first
                raise PieceNotTaken

        return send_in_time


def check_json_size(name: str, array: np.ndarray, max_entries: int) -> str | None:
    """Why `array` is too big to send as JSON (None when it fits in max_entries): its size, the
    limit and how to get it instead."""
    if array.size <= max_entries:
        return None
    shape = " × ".join(str(n) for n in array.shape)
    return Said(
        "error-tensor-too-big-for-json",
        name=name,
        entries=Grouped(array.size),
        shape=shape,
        most=Grouped(max_entries),
        bytes=Grouped(array.nbytes),
    )


def tensor_json(name: str, array: np.ndarray, grad: bool) -> dict:
    return {"name": name, "grad": grad, "shape": list(array.shape), "dtype": str(array.dtype), "data": array}
