"""The float64 twin of a recorded step: what gradient checks read.

A float32 trace is checked in float64 (float32 round-off is not a wrong gradient). The whole
step again in float64 would cost a real model dearly: SmolLM2-135M's weights and weight
gradients alone are 2 GB in float64. So the twin holds only what the checks read:

* every activation's forward value, in float64. The parameters stay the trace's own float32
  arrays (shared, never copied): each op reads them as float64 when it runs, which is exact,
  so this is the same function as a float64 copy of the weights;
* dL/d(every activation), in float64. Parameter gradients are dropped as each op makes them;
* what one backward step adds to its inputs' gradients (a weight gradient included),
  recomputed when a check asks: that op's forward (for its cache) and its backward, from the
  values and gradients above.

It is built the first time a check needs it (Trace.twin). A float64 trace is its own twin.
The update's check needs none of it: param_grad_dot runs one float64 forward and backward
of its own, dotting each parameter gradient with a Direction as it is made.
"""

from __future__ import annotations

import weakref
from collections import ChainMap
from collections.abc import Callable, Mapping

import numpy as np

from xt_core.checks.f64 import LARGE
from xt_core.memory import reusable_empty
from xt_core.names import TOKEN_IDS
from xt_core.recompute import RECOMPUTED, LazyMap, Segments, activation_of, new_owner, record_boundaries
from xt_core.tape import Node, lookup_of_rows, node_backward, run_backward_sparse
from xt_core.training.optim import PerParam

F64 = np.dtype(np.float64)
# numpy's mixed float64 @ float32 matmul against a *transposed* float32 weight is ~4x slower
# than casting the weight first. The LM head reads its (V, C) weight transposed; its float64
# cast (V*C*8 bytes) lives only until its backward, a few ops later.
_CAST_WEIGHTS_FIRST = ("unembed",)


class Float64Step:
    """The forward values and activation gradients of a step, in float64 (see module docstring).
    A built twin holds, like its trace, only the segment boundaries (xt_core.recompute) and
    recomputes a segment in float64 when a check reads inside it."""

    def __init__(self, nodes: list[Node], values, grads, param_names, backward_override=None, records=None):
        self.nodes = nodes
        self._values = values  # activations float64; parameters as the trace holds them; token ids
        self._grads = grads  # dL/d(activation), float64 (a float64 trace: every gradient)
        self.param_names = list(param_names)
        self.backward_override = backward_override
        self._recorded = records  # a float64 trace's own records: their contributions are exact
        self._segs = None if records is not None else Segments.of(nodes, self.param_names)
        self._owner = new_owner()
        if records is None:
            weakref.finalize(self, RECOMPUTED.drop, self._owner)

    @classmethod
    def of_float64_trace(cls, trace) -> Float64Step:
        return cls(
            trace.nodes, trace.values, trace.all_grads, trace.param_names, trace.backward_override, trace.records
        )

    @classmethod
    def build(cls, nodes: list[Node], params: dict, tokens, targets, param_names, backward_override=None):
        """Forward and backward in float64 from the float32 parameters (read in float64 by each op),
        keeping the boundaries (xt_core.recompute.record_boundaries)."""
        values, caches = _forward64(nodes, params, tokens, targets)
        segs = Segments.of(nodes, param_names)
        grads = record_boundaries(nodes, segs, values, caches, np.ones((), dtype=F64), backward_override)
        grads.pop("nonfinite gradient", None)
        return cls(nodes, values, grads, param_names, backward_override)

    @property
    def values(self) -> Mapping:
        """Every value by name: float64 activations (recomputed per segment), parameters, ids."""
        if self._segs is None:
            return self._values
        return LazyMap(self, Float64Step._names, Float64Step._value, Float64Step._has)

    @property
    def grads(self) -> Mapping:
        if self._segs is None:
            return self._grads
        return LazyMap(self, lambda t: [n.name for n in t.nodes], Float64Step.grad, lambda t, n: n in t._segs.produced)

    def _names(self) -> list[str]:
        return [*self._values, *(n.name for n in self.nodes if n.name not in self._values)]

    def _has(self, name: str) -> bool:
        return name in self._values or name in self._segs.produced

    def _value(self, name: str) -> np.ndarray:
        if name in self._values:
            return self._values[name]
        return self._replayed(self._segs.produced[name])[0][name]

    def _replayed(self, segment: int) -> tuple[dict, dict]:
        """One segment's float64 values and activation gradients, recomputed from the boundaries as
        the build computed them (the same ops on the same arrays, so the same bits)."""

        def compute():
            span = self._segs.spans[segment]
            values, caches = {}, {}
            for i in span:
                node = self.nodes[i]
                out, caches[i] = node.run(_args(node, ChainMap(values, self._values)))
                values[node.name] = np.asarray(out, dtype=F64)
            out = self.nodes[span[-1]].name
            arriving = {out: self._grads[out]}
            wanted = activation_of(self.param_names)
            grads = run_backward_sparse(self.nodes, caches, arriving, wanted, self.backward_override, span=span)
            held = {id(a) for a in (*self._values.values(), *self._grads.values())}
            size = sum(
                a.nbytes for a in {id(a): a for a in (*values.values(), *grads.values())}.values() if id(a) not in held
            )
            return (values, grads), size

        return RECOMPUTED.get((self._owner, "float64", segment), compute)

    # ------------------------------------------------------------------ what checks read

    def grad(self, name: str) -> np.ndarray:
        """dL/d(name) in float64 for an activation (or, in a float64 trace, a parameter)."""
        if self._segs is None or name in self._grads:
            return self._grads[name]
        return self._replayed(self._segs.produced[name])[1][name]

    def contributions(self, node_index: int) -> dict[str, np.ndarray]:
        """What node `node_index` alone adds to the gradient of each of its float inputs."""
        if self._recorded is not None:
            return self._recorded[len(self.nodes) + (len(self.nodes) - 1 - node_index)].contributions
        node = self.nodes[node_index]
        _, cache = node.run(_args(node, self.values))
        in_grads = node_backward(node, cache, self.grads, self.backward_override)
        return {name: g for name, g in zip(node.inputs, in_grads, strict=True) if g is not None}

    def param_grad_dot(
        self, direction: Direction, shown: Mapping[str, np.ndarray] | None = None
    ) -> tuple[float, float | None]:
        """<dL/dθ, u> over every parameter, u = direction(name) of each parameter's shape (see
        param_grad_dot below); a float64 trace's from its recorded gradients."""
        if self._recorded is None:
            params = {name: self._values[name] for name in self.param_names}
            tokens, targets = self._values["tokens"], self._values["targets"]
            return param_grad_dot(self.nodes, params, tokens, targets, direction, shown, self.backward_override)
        total = sum(direction.dots(name, self._grads[name])[0] for name in self.param_names)
        return total, None if shown is None else sum(direction.dots(n, shown[n])[0] for n in self.param_names)

    def nbytes(self) -> int:
        """Bytes this twin holds beyond the trace (float64 boundaries and their gradients)."""
        if self._recorded is not None:
            return 0
        params = set(self.param_names)
        arrays = {id(a): a for k, a in self._values.items() if k not in params and k not in TOKEN_IDS}
        arrays |= {id(a): a for a in self._grads.values()}
        return sum(np.asarray(a).nbytes for a in arrays.values())


def param_grad_dot(
    nodes: list[Node], params: dict, tokens, targets, direction, shown=None, backward_override=None, dotted=None
) -> tuple[float, float | None]:
    """<dL/dθ, u> in float64 over every parameter, u = direction(name): the update's gradient
    along one direction. One float64 forward and backward from the float32 parameters (as
    Float64Step.build), each parameter gradient dotted with u as its op makes it and dropped
    (a tied embedding's two contributions each meet the same u): no twin needed, and every op
    runs once instead of twice (the twin's build, then again for the gradients it drops).
    With `shown` (the float32 trace's parameter gradients), also <shown, u> from the same u.
    dotted(name), if given, is called as each parameter gradient has been dotted."""
    values, caches = _forward64(nodes, params, tokens, targets)
    total, on_screen = 0.0, {}

    def take(name: str, grad: np.ndarray) -> None:
        nonlocal total
        if shown is None or name in on_screen:
            total += direction.dots(name, grad)[0]
        else:
            analytic, on_screen[name] = direction.dots(name, grad, shown[name])
            total += analytic
        if dotted is not None:
            dotted(name)

    del values  # the caches hold what the backward reads
    run_backward_sparse(nodes, caches, np.ones((), dtype=F64), activation_of(params), backward_override, sink=take)
    if shown is None:
        return total, None
    return total, sum(on_screen[n] if n in on_screen else direction.dots(n, shown[n])[0] for n in params)


def _forward64(nodes: list[Node], params: dict, tokens, targets) -> tuple[dict, list]:
    """The step's forward in float64 from (float32) parameters read in float64 by each op:
    (every value, parameters and ids included; each op's cache)."""
    values: dict[str, np.ndarray] = dict(params)
    values["tokens"], values["targets"] = tokens, targets
    caches = []
    for node in nodes:
        out, cache = node.run(_args(node, values))
        values[node.name] = np.asarray(out, dtype=F64)  # the embedding looks up float32 rows
        caches.append(cache)
    return values, caches


def _args(node: Node, values: dict) -> list:
    args = [values[name] for name in node.inputs]
    if node.kind in _CAST_WEIGHTS_FIRST:
        args = [np.asarray(a, dtype=F64) if np.asarray(a).dtype.kind == "f" else a for a in args]
    return args


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
