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

It is built the first time a check needs it (twin_of), and kept on the trace: its forward at once,
its backward down from the loss as far as the checks so far needed (a late layer's check waits for no
earlier layer's backward). A float64 trace
is its own twin.
The update's check needs none of it: param_grad_dot runs one float64 forward and backward
of its own, dotting each parameter gradient with a Direction as it is made.

Every backward here is the tape's one loop, tape.run_backward, as the trace's build runs it:
keeping the activations' gradients only (tape.KeepOnly), a segment at a time
(xt_core.recompute.Boundaries) or over one segment replayed (tape.Span).
"""

from __future__ import annotations

import threading
import weakref
from collections import ChainMap
from collections.abc import Mapping, MutableMapping

import numpy as np

from xt_core.checks.directions import Direction
from xt_core.names import TOKEN_IDS
from xt_core.ops.basic import read_uncast
from xt_core.recompute import RECOMPUTED, Boundaries, LazyMap, Segments, activation_of, new_owner
from xt_core.tape import KeepOnly, Node, Span, node_backward, run_backward

F64 = np.dtype(np.float64)
# What the twin's forward keeps of its latest segments (Float64Step.build): the whole forward of a
# toy model or of SmolLM2's head and last layers at 32 positions; past it, a segment is run again.
KEPT_FORWARD_BYTES = 256 << 20


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
        self._pending = None  # the backward still to run below the segments done (Float64Step.build)
        self._pending_lock = threading.Lock()  # concurrent checks run each part of it once
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
        keeping the activations' gradients at the boundaries (tape.run_backward with KeepOnly and
        xt_core.recompute.Boundaries, as the trace's own build). Every float64 value at once
        would be about twice the float32 build (1.6 GB for SmolLM2 at 256 positions): the forward
        keeps the latest segments' values and caches up to KEPT_FORWARD_BYTES (the backward reads
        them first) and only the outputs of the others, whose forward the backward runs again for
        their caches. The same ops on the same arrays give the same bits either way."""
        segs = Segments.of(nodes, param_names)
        values, caches, replay, resident = _forward_kept(nodes, segs, params, tokens, targets)
        step = cls(nodes, values, {nodes[-1].name: np.ones((), dtype=F64)}, param_names, backward_override)
        step._pending = _Backward(nodes, segs, values, caches, replay, resident)
        return step

    @property
    def backward_pending(self) -> bool:
        """Whether part of the build's backward is still to run (a check of an earlier step runs
        it: as much memory again as the build's backward, app.services.hold_twin holds it)."""
        return self._pending is not None and self._pending.done > 0

    def _backward_to(self, segment: int) -> None:
        """Runs the build's backward (down from the loss) through segment `segment` (dL/d its output
        and its input made): a check of a late layer's step waits for no earlier layer's backward.
        The same loop over the same caches in the same order as one whole backward, in parts, so the
        same bits. The kept forward below is let go: after a check the twin holds its boundaries."""
        if self._pending is None or self._pending.done <= segment:
            return
        with self._pending_lock:
            if self._pending.done > segment:
                self._grads = self._pending.run_to(segment, self._grads, self.param_names, self.backward_override)

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
        held = self._values.get(name)  # one read: a part of the backward run by another check adds and drops values
        if held is not None:
            return held
        return self._replayed(self._segs.produced[name])[0][name]

    def _replayed(self, segment: int) -> tuple[dict, dict]:
        """One segment's float64 values and activation gradients, recomputed from the boundaries as
        the build computed them (the same ops on the same arrays, so the same bits)."""

        self._backward_to(segment)

        def compute():
            span = self._segs.spans[segment]
            values, caches = {}, {}
            _run_span(self.nodes, span, ChainMap(values, self._values), caches)  # its writes go to `values`
            out = self.nodes[span[-1]].name
            arriving = {out: self._grads[out]}
            keep = KeepOnly(activation_of(self.param_names))
            grads, _ = run_backward(self.nodes, caches, arriving, self.backward_override, keep, Span(span))
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
        self._backward_to(self._segs.produced[name])
        if name in self._grads:  # a segment's output
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


def twin_of(trace) -> Float64Step:
    """The trace's float64 twin (same parameters, tokens and backward, in float64): built on first
    use for a float32 trace and kept in it (Trace.float64_twin, counted by Trace.nbytes up front);
    a float64 trace is its own."""
    if trace.dtype == F64:
        return Float64Step.of_float64_trace(trace)
    with trace.twin_lock:  # concurrent checks of one trace build it once
        if trace.float64_twin is None:
            params = {name: trace[name] for name in trace.param_names}
            trace.float64_twin = Float64Step.build(
                trace.nodes, params, trace.tokens, trace.targets, trace.param_names, trace.backward_override
            )
        return trace.float64_twin


def param_grad_dot(
    nodes: list[Node], params: dict, tokens, targets, direction, shown=None, backward_override=None, dotted=None
) -> tuple[float, float | None]:
    """<dL/dθ, u> in float64 over every parameter, u = direction(name): the update's gradient
    along one direction. One float64 forward and backward from the float32 parameters (as
    Float64Step.build, a segment's forward run again where it was not kept), each parameter
    gradient dotted with u as its op makes it and dropped (a tied embedding's two contributions
    each meet the same u): no twin needed, nor its build's activation gradients.
    With `shown` (the float32 trace's parameter gradients), also <shown, u> from the same u.
    dotted(name), if given, is called as each parameter gradient has been dotted."""
    segs = Segments.of(nodes, list(params))
    values, caches, replay, _ = _forward_kept(nodes, segs, params, tokens, targets)
    total, on_screen = 0.0, {}

    def take(name: str, grad: np.ndarray, rows) -> None:
        nonlocal total
        if shown is None or name in on_screen:
            total += direction.dots(name, grad)[0]
        else:
            analytic, on_screen[name] = direction.dots(name, grad, shown[name])
            total += analytic
        if dotted is not None:
            dotted(name)

    # the step's backward in its order, a segment at a time, no gradient kept past its segment
    keep = KeepOnly(activation_of(params), sink=take)
    segments = Boundaries(nodes, segs, values, replay, keep_outputs=False)
    run_backward(nodes, caches, np.ones((), dtype=F64), backward_override, keep, segments)
    if shown is None:
        return total, None
    return total, sum(on_screen[n] if n in on_screen else direction.dots(n, shown[n])[0] for n in params)


def _forward_kept(nodes: list[Node], segs: Segments, params: dict, tokens, targets) -> tuple:
    """The step's forward in float64 from the float32 parameters, keeping the latest segments'
    values and caches up to KEPT_FORWARD_BYTES and only the output of the others: (values,
    caches, replay(span): a dropped segment's forward run again, its values and caches back,
    resident: segment -> the bytes kept of it)."""
    values: dict = {**params, "tokens": tokens, "targets": targets}
    caches: list = [None] * len(nodes)
    resident: dict[int, int] = {}  # segment -> bytes of its values and caches held, oldest first
    for s, span in enumerate(segs.spans):
        resident[s] = _run_span(nodes, span, values, caches)
        while sum(resident.values()) > KEPT_FORWARD_BYTES and len(resident) > 1:
            oldest = next(iter(resident))
            del resident[oldest]
            _drop_span(nodes, segs.spans[oldest], values, caches)

    def replay(span: range) -> None:
        if segs.of_node[span[0]] not in resident:
            _run_span(nodes, span, values, caches)

    return values, caches, replay, resident


class _Backward:
    """The float64 build's backward still to run: segments[:done] (the forward's kept segments and
    the boundaries it holds, the others' forward run again as the backward reaches them)."""

    def __init__(self, nodes: list[Node], segs: Segments, values: dict, caches: list, replay, resident: dict):
        self.nodes, self.segs, self.values, self.caches, self.replay = nodes, segs, values, caches, replay
        self.resident, self.done = resident, len(segs.spans)

    def run_to(self, stop: int, grads: dict, param_names, backward_override) -> dict:
        """The backward of segments[stop:done], last first, from `grads` (those made so far); then
        the kept forward of the segments below is let go (run again when the backward reaches them):
        between checks the twin holds its boundaries only."""
        at_boundaries = Boundaries(self.nodes, self.segs, self.values, self.replay)
        at_boundaries.spans = self.segs.spans[stop : self.done]
        keep = KeepOnly(activation_of(param_names))
        grads, _ = run_backward(self.nodes, self.caches, grads, backward_override, keep, at_boundaries)
        self.done = stop
        for s in [s for s in self.resident if s < stop]:
            del self.resident[s]
            _drop_span(self.nodes, self.segs.spans[s], self.values, self.caches)
        return grads


def _run_span(nodes: list[Node], span: range, values: MutableMapping, caches: list | dict) -> int:
    """The ops of one segment in float64, their outputs into `values` and their caches into
    `caches`: the bytes of the float64 arrays they made (a view counted as its base; the segment's
    input and the float32 parameters are held anyway)."""
    held = {id(_base(a)) for a in values.values() if isinstance(a, np.ndarray)}
    made = {}
    for i in span:
        node = nodes[i]
        out, caches[i] = node.run(_args(node, values))
        values[node.name] = np.asarray(out, dtype=F64)  # the embedding looks up float32 rows
        for a in (values[node.name], *(caches[i] if isinstance(caches[i], tuple) else ())):
            base = _base(a) if isinstance(a, np.ndarray) else None
            if base is not None and base.dtype == F64 and id(base) not in held:
                made[id(base)] = base.nbytes
    return sum(made.values())


def _base(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _drop_span(nodes: list[Node], span: range, values: dict, caches: list) -> None:
    """A segment's values but its output, and its caches: the backward runs its forward again."""
    for i in span[:-1]:
        del values[nodes[i].name]
    for i in span:
        caches[i] = None


def _args(node: Node, values: dict) -> list:
    """A node's arguments in the twin: float32 parameters as they are (each op reads them in
    float64, exactly), but a small vocabulary's LM head weight cast first: numpy's mixed float64 @
    float32 product against a transposed float32 weight is ~4x slower than casting first. A real
    vocabulary's is read block by block, uncast (ops.basic.read_uncast)."""
    args = [values[name] for name in node.inputs]
    if node.kind != "unembed":
        return args
    return [a if read_uncast(node.kind, slot, a) else np.asarray(a, dtype=F64) for slot, a in enumerate(args)]
