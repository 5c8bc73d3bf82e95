"""The directions a gradient check moves along, and the parameters moved along them: one
random direction u over a tensor or the whole parameter space (Direction), θ ± h u built in
float64 only when an op reads it (moved_pair, moved_whole), and the embedding's looked-up rows
moved alone (lookup_rows). xt_core.checks.gradcheck, directional and update_check use them."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from xt_core.checks.f64 import LARGE
from xt_core.memory import reusable_empty
from xt_core.tape import Node, lookup_of_rows
from xt_core.training.optim import PerParam

F64 = np.dtype(np.float64)


def moved_pair(
    params: dict, direction: Callable[[str], np.ndarray], step: float, before_large: Callable[[], object] | None = None
) -> tuple[PerParam, PerParam]:
    """Every parameter moved by +step and by -step along its direction, in float64, built
    when an op reads it (a replay of a real model never holds all the moved weights at once),
    for two replays run in lockstep (xt_core.tape.replay_losses): the first to read a
    parameter draws its direction once and builds both; the second takes its own. Beyond LARGE
    entries (a vocabulary's weights, 226 MB in float64) each is built on its own: never two of
    them at once, and only once before_large() returns (the update check: once its other thread
    has dropped its own (V, C) float64 arrays)."""
    waiting: dict[tuple[str, int], np.ndarray] = {}

    def moved(name: str, sign: int) -> np.ndarray:
        mine = waiting.pop((name, sign), None)
        if mine is not None:
            return mine
        if np.size(params[name]) > LARGE:
            if before_large is not None:
                before_large()
            return moved_whole(params[name], direction, name, sign * step)
        hu = _scaled(direction, name, step)
        plus = np.add(hu, params[name])  # h u + θ, and θ - h u = -(h u) + θ exactly
        minus = np.subtract(params[name], hu, out=hu)
        waiting[(name, -sign)] = minus if sign > 0 else plus
        return plus if sign > 0 else minus

    return PerParam(params, lambda name: moved(name, 1)), PerParam(params, lambda name: moved(name, -1))


def moved_whole(x: np.ndarray, direction: Callable[[str], np.ndarray], name: str, step: float, out=None) -> np.ndarray:
    """x + step * direction(name) in float64 (a Direction's u is never whole): a new array, or
    into `out` (a Direction's only)."""
    out = _scaled(direction, name, step, out)
    out += x
    return out


def _scaled(direction, name: str, step: float, out: np.ndarray | None = None) -> np.ndarray:
    """h u in float64 (exact); a Direction's window by window (a vocabulary's u is never whole), into
    reused memory beyond 32 MB (xt_core.memory: fresh pages cost 0.2 s per (V, C) float64 array)."""
    if not isinstance(direction, Direction):
        return np.multiply(direction(name), step, dtype=F64)
    out = reusable_empty(direction.shapes[name], F64) if out is None else out
    flat = out.reshape(-1)
    for k, offset in enumerate(direction.offsets[name]):
        part = flat[k * LARGE : (k + 1) * LARGE]
        np.multiply(direction.block[offset : offset + part.size], step, out=part, dtype=F64)
    return out


BLOCK = 2 * LARGE  # entries of the random block a direction's windows are cut from (64 MB in float64)


class Direction:
    """A seeded random direction in the whole parameter space: u(name) of each parameter's
    shape, uniform in [-1, 1). Drawn per parameter per use, a real model's 135M numbers cost
    its update check ~0.7 s every time it needed them (three times). Instead one block of
    BLOCK numbers is drawn per check, and each LARGE-entry chunk of a parameter is a window of
    it at its own seeded offset: the entries within a chunk are independent draws, so a wrong
    gradient anywhere meets a random direction, and any rows of u cost only those rows. The
    block is drawn in float32 and held in float64 (no cast per use)."""

    def __init__(self, seed: int, params: Mapping[str, np.ndarray], size: int = BLOCK):
        """size: the block's entries, at least LARGE (a check of one smaller tensor draws fewer)."""
        if size < LARGE:
            raise ValueError(f"a direction's block must hold at least LARGE = {LARGE} entries, got {size}")
        rng = np.random.default_rng(seed)
        block = rng.random(size, dtype=np.float32)
        self.block = np.subtract(np.multiply(block, 2, out=block), 1, out=block).astype(F64)
        self.block.flags.writeable = False
        self.shapes = {name: np.shape(p) for name, p in params.items()}
        self.offsets = {
            name: rng.integers(0, size - LARGE + 1, size=max(-(-np.size(p) // LARGE), 1)) for name, p in params.items()
        }

    def __call__(self, name: str) -> np.ndarray:
        shape, offsets = self.shapes[name], self.offsets[name]
        size = int(np.prod(shape))
        if size <= LARGE:
            return self.block[offsets[0] : offsets[0] + size].reshape(shape)
        parts = [self.block[o : o + min(LARGE, size - k * LARGE)] for k, o in enumerate(offsets)]
        return np.concatenate(parts).reshape(shape)

    def dots(self, name: str, *grads) -> list[float]:
        """<grad, u(name)> in float64 for each grad (any float dtype) of that parameter, window
        by window, in float64."""
        flats, totals = [np.reshape(g, -1) for g in grads], [0.0] * len(grads)
        for k, offset in enumerate(self.offsets[name]):
            where = slice(k * LARGE, (k + 1) * LARGE)
            u = self.block[offset : offset + flats[0][where].size]
            for i, flat in enumerate(flats):
                part = flat[where]  # float32: einsum casts it in buffered pieces, no float64 copy
                totals[i] += float(np.dot(part, u) if part.dtype == F64 else np.einsum("i,i->", part, u))
        return totals

    def rows(self, name: str, rows: np.ndarray) -> np.ndarray:
        """u(name)[rows] of a 2-D parameter (a lookup table), without the rest of u."""
        width = self.shapes[name][1]
        flat = np.asarray(rows)[:, None] * width + np.arange(width)
        return self.block[self.offsets[name][flat // LARGE] + flat % LARGE]


def lookup_rows(node: Node, params: Mapping, tokens, direction: Direction, step: float) -> list[np.ndarray]:
    """The embedding lookup's output with its table moved by +step and by -step along u: only
    the rows the tokens read are moved (32 of a vocabulary's 49152), in float64, exactly as
    the whole moved table's rows; the lookup itself still runs (a faulty forward stays so)."""
    table = node.inputs[1]
    rows, lookup = lookup_of_rows(node, tokens)
    hu = np.multiply(direction.rows(table, rows), step, dtype=F64)
    theta = np.asarray(params[table])[rows]
    return [lookup(np.add(hu, theta)), lookup(np.subtract(theta, hu))]
