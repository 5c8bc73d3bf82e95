"""Recompute on demand: a recorded step keeps its segment boundaries, and replays a segment
(the embedding, one layer, the head) when something asks for what lies inside it.

A layer's every intermediate, gradient and contribution follows from its input and the gradient
arriving at its output: (B, T, C) each, 74 KB per layer of SmolLM2 at 32 positions, against
~35 MB of everything the layer computes. So a trace holds, per segment, the tensor it hands on
(its last op's output) and dL/d that tensor; the parameters and token ids it reads are held
anyway. A replay runs the segment's ops forward (for their caches) and backward again, the same
calls on the same arrays in the same order as the step itself ran them, so every value is
bit-identical to a full recording (tests/core/test_recompute.py compares every recorded tensor).
This is gradient checkpointing, kept for reading instead of training.

Both backwards are the tape's one loop, tape.run_backward: the step's with Boundaries (a segment
at a time, keeping dL/d each segment's output), a replay's over its own span, recording every
gradient and contribution (tape.EveryGradient).

Replays live in one bounded per-process cache of recomputed segments (RECOMPUTED), counted
apart from the traces (app.traces.store: its budget is part of cache_bytes).
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from xt_core.names import TOKEN_IDS

# the cache of recomputed segments, read from here by the traces, the twin and the trace store
from xt_core.recompute_cache import RECOMPUTE_BYTES, RECOMPUTED, RecomputeCache, new_owner  # noqa: F401
from xt_core.tape import EveryGradient, Node, Span, accumulate, run_backward


@dataclass(frozen=True)
class Segments:
    """The tape cut where its ops' layer changes: [embedding], [layer 0], ..., [final norm .. loss].
    Only a segment's last output is read after it (the residual stream), so that tensor and its
    gradient are all a later replay of the segment needs beside the parameters and token ids."""

    spans: tuple[range, ...]
    of_node: tuple[int, ...]  # node index -> its segment
    produced: Mapping[str, int]  # tensor name -> the segment whose op produces it
    readers: Mapping[str, tuple[int, ...]]  # parameter -> the segments reading it, in order

    @classmethod
    def of(cls, nodes: list[Node], param_names) -> Segments:
        spans, start = [], 0
        for i in range(1, len(nodes) + 1):
            if i == len(nodes) or nodes[i].layer != nodes[start].layer:
                spans.append(range(start, i))
                start = i
        of_node = tuple(s for s, span in enumerate(spans) for _ in span)
        params = set(param_names)
        readers: dict[str, list[int]] = {}
        for i, node in enumerate(nodes):
            for name in node.inputs:
                if name in params and of_node[i] not in readers.setdefault(name, []):
                    readers[name].append(of_node[i])
        produced = {node.name: of_node[i] for i, node in enumerate(nodes)}
        return cls(tuple(spans), of_node, produced, {k: tuple(v) for k, v in readers.items()})

    def output(self, nodes: list[Node], segment: int) -> str:
        return nodes[self.spans[segment][-1]].name

    def boundaries(self, nodes: list[Node]) -> list[str]:
        return [self.output(nodes, s) for s in range(len(self.spans))]


class Boundaries:
    """Recompute as segments of tape.run_backward: the backward a segment at a time, last first.
    Entering one, replay(span), if given, runs its forward again for its caches (a forward that kept
    only some segments: xt_core.checks.twin._forward_kept), and the values of its ops but the last
    leave `values` (the backward reads the caches: the head's (T, V) arrays go before it runs).
    Leaving it, the gradients it made are dropped but dL/d its output, the boundary a trace keeps
    (that too with keep_outputs=False: the update check's dot keeps no boundary)."""

    def __init__(self, nodes: list[Node], segs: Segments, values: dict, replay=None, keep_outputs: bool = True):
        self.spans = segs.spans
        self.nodes, self.segs, self.values, self.replay, self.keep_outputs = nodes, segs, values, replay, keep_outputs

    def entering(self, span: range) -> None:
        if self.replay is not None:
            self.replay(span)
        for i in span[:-1]:
            del self.values[self.nodes[i].name]

    def leaving(self, span: range, grads: dict) -> None:
        segment, output = self.segs.of_node[span[0]], self.nodes[span[-1]].name
        for name in [n for n in grads if self.segs.produced.get(n) == segment]:
            if name != output or not self.keep_outputs:
                del grads[name]


def forward_finite(nodes: list[Node], env: Mapping) -> bool:
    """Whether every forward value of a step is finite (a masked score's -inf aside: a NaN or +inf
    score makes its probabilities NaN) and no RMSNorm's mean square overflowed. Read while the build
    holds every value (one sum per tensor): with its backward's KeepOnly(check_finite=True), what the
    page's divergence banner needs without replaying every layer (Trace.all_finite)."""
    with np.errstate(all="ignore"):
        for node in nodes:
            if not node.name.endswith(".scores") and not np.isfinite(np.sum(env[node.name])):
                return False
            if node.kind == "rmsnorm" and np.isinf(np.mean(np.square(env[node.inputs[0]]), axis=-1)).any():
                return False
    return True


@dataclass
class Replayed:
    """One segment recomputed: its ops' outputs, every gradient its backward makes (a parameter's
    only this segment's part), each op's contributions, and the rows an op's contribution is
    nonzero in (Op.sparse_rows), for summing a parameter read by several segments. A parameter
    contribution its op can make apart (DeferredParams) is made when first read: read them by
    contribution(i) and grad(name); `grew` is told the bytes each read made (the cache counts them)."""

    values: dict[str, np.ndarray]
    grads: dict[str, np.ndarray]
    contributions: dict[int, dict[str, np.ndarray]]
    rows: dict[int, np.ndarray | None] = field(default_factory=dict)
    # node index -> (node, its cache, dL/d its output, the parameters it left out): DeferredParams
    deferred: dict[int, tuple] = field(default_factory=dict)
    grew: Callable[[int], None] = lambda size: None
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    def __post_init__(self):
        self._later = {name for *_, names in self.deferred.values() for name in names}
        for name in self._later:  # summed when read, every contribution in the backward's order
            self.grads.pop(name, None)

    def contribution(self, i: int) -> dict[str, np.ndarray]:
        """What node i alone added to each of its inputs' gradients (a left-out parameter's made now)."""
        if i in self.deferred:
            with self._lock:
                later = self.deferred.get(i)
                if later is not None:
                    node, cache, dout, names = later
                    made = dict(zip(node.inputs, node.op.param_backward(dout, cache), strict=True))
                    merged = {**self.contributions[i], **{n: made[n] for n in names if made[n] is not None}}
                    self.contributions[i] = {n: merged[n] for n in node.inputs if n in merged}
                    del self.deferred[i]  # after: a reader that finds it gone finds the contribution made
                    self.grew(sum(made[n].nbytes for n in names if made[n] is not None))
        return self.contributions[i]

    def grad(self, name: str) -> np.ndarray:
        """dL/d name as this segment's backward makes it (a parameter's: this segment's part)."""
        if name in self._later and name not in self.grads:
            with self._lock:
                if name not in self.grads:
                    self.grads[name] = self._summed(name)
        return self.grads[name]

    def _summed(self, name: str) -> np.ndarray:
        grads: dict[str, np.ndarray] = {}
        for i in self.contributions:  # the backward's order (EveryGradient); only its readers' made
            later = self.deferred.get(i)
            if name in self.contributions[i] or (later is not None and name in later[3]):
                accumulate(grads, name, self.contribution(i)[name], lambda i=i: self.rows.get(i))
        parts = {id(c[name]) for c in self.contributions.values() if name in c}
        self.grew(0 if id(grads[name]) in parts else grads[name].nbytes)  # a sum made here
        return grads[name]

    def nbytes(self, held: Callable[[np.ndarray], bool] = lambda a: False) -> int:
        """Bytes of its arrays, each once, but those `held` (a trace's boundaries, borrowed weights)."""
        arrays = itertools.chain(
            self.values.values(), self.grads.values(), *map(dict.values, self.contributions.values())
        )
        return _bytes_once(arrays, held)


@dataclass
class Forwarded:
    """One segment's forward run again: its ops' outputs, and the caches its backward would read. A
    read of a value needs no backward (a third of a replay's work); a later read of a gradient runs
    the backward from these caches (replay(forwarded=)) instead of the forward again."""

    values: dict[str, np.ndarray]
    caches: dict[int, object]

    def nbytes(self, held: Callable[[np.ndarray], bool] = lambda a: False) -> int:
        """Bytes of its values and of the arrays its caches hold, each once, but those `held`."""
        return _bytes_once(itertools.chain(self.values.values(), arrays_in(list(self.caches.values()))), held)


def arrays_in(cache) -> Iterator:
    """Every array in an op's cache (a tuple, list or dict of arrays and numbers, nested)."""
    if isinstance(cache, np.ndarray):
        yield cache
    elif isinstance(cache, (tuple, list)):
        for item in cache:
            yield from arrays_in(item)
    elif isinstance(cache, dict):
        yield from arrays_in(list(cache.values()))


def _bytes_once(arrays, held: Callable[[np.ndarray], bool]) -> int:
    seen: dict[int, np.ndarray] = {}
    for a in arrays:
        if isinstance(a, np.ndarray) and id(a) not in seen and a.flags.writeable and not held(a):
            seen[id(a)] = a
    return sum(a.nbytes for a in seen.values())


def replay_forward(nodes: list[Node], span: range, env: Mapping) -> Forwarded:
    """nodes[span] run forward on `env` (the segment's inputs: parameters, ids, the previous
    segment's output): the same calls on the same arrays as the step's, so the same bits."""
    values: dict[str, np.ndarray] = {}
    caches = {}
    for i in span:
        node = nodes[i]
        out, caches[i] = node.run([values[n] if n in values else env[n] for n in node.inputs])
        values[node.name] = out
    return Forwarded(values, caches)


def built_forwards(
    nodes: list[Node], segs: Segments, env: Mapping, caches: list, room: int, held: Callable[[np.ndarray], bool]
) -> list[tuple[int, Forwarded, int]]:
    """The build's own forward of its first segments, as a value's read would replay it
    (replay_forward): (segment, its outputs and caches, their bytes but those `held`), from the
    first segment on while they fit in `room` bytes. Nothing is computed or copied: the build's
    values and caches are those arrays, and no backward writes into its op's cache
    (tests/core/test_ops_inplace.py), so a later backward from them gives the bits a replay's does.
    Reading a step in order starts there, and the build's backward leaves those segments last."""
    kept = []
    for s, span in enumerate(segs.spans):
        forwarded = Forwarded({nodes[i].name: env[nodes[i].name] for i in span}, {i: caches[i] for i in span})
        size = forwarded.nbytes(held)
        if size > room:
            break
        room -= size
        kept.append((s, forwarded, size))
    return kept


def replay(
    nodes: list[Node],
    span: range,
    env: Mapping,
    arriving: dict,
    override=None,
    forwarded: Forwarded | None = None,
    is_param: Callable[[str], bool] | None = None,
) -> Replayed:
    """nodes[span] run forward (or `forwarded`, that forward already run: its caches are used up),
    then backward from `arriving` (dL/d its output) by tape.run_backward, recording every gradient
    and contribution; with is_param, the parameter gradients DeferredParams leaves out are made
    when read."""
    if forwarded is None:
        forwarded = replay_forward(nodes, span, env)
    keep = EveryGradient(span) if is_param is None else DeferredParams(span, is_param, override)
    grads, contributions = run_backward(nodes, dict(forwarded.caches), arriving, override, keep, Span(span))
    return Replayed(forwarded.values, grads, contributions, keep.rows, getattr(keep, "deferred", {}))


class DeferredParams(EveryGradient):
    """EveryGradient, but the parameter gradients an op can make apart (Op.param_backward: a linear's
    or the LM head's weight gradient, as costly as the rest of its backward) are left out of the
    backward: the replay makes each when read (Replayed.contribution), from the op's cache and dL/d
    its output, which the replay holds anyway. Reading a segment's values and activation gradients
    then runs no weight-gradient product; a read of a parameter's gradient or of an op's
    contributions makes it with the bits the backward would have (it calls the same function).
    Not for an op with a precision policy (it rounds the backward whole) or a replaced backward (a
    fault's, an exercise's: run whole, as recorded)."""

    def __init__(self, span: range, is_param: Callable[[str], bool], override=None):
        super().__init__(span)
        self.is_param, self.replaced = is_param, set(override or ())
        self.deferred: dict[int, tuple] = {}

    def inputs_only(self, node: Node) -> bool:
        apart = node.op.param_backward is not None and node.precision is None and node.name not in self.replaced
        return apart and any(map(self.is_param, node.inputs))

    def left_out(self, grads: dict, i: int, node: Node, cache, names: list[str]) -> None:
        names = [name for name in names if self.is_param(name)]
        if names:
            self.deferred[i] = (node, cache, grads[node.name], names)


def summed_param_grad(nodes: list[Node], segs: Segments, name: str, replayed: Callable[[int], Replayed]):
    """dL/d parameter `name` read by several segments (a tied embedding: the lookup and the LM head),
    its contributions summed in the step's order (backward: the last reader first)."""
    grads: dict[str, np.ndarray] = {}
    for s in reversed(segs.readers[name]):
        part = replayed(s)
        for i in reversed(segs.spans[s]):
            if name in part.contribution(i):
                accumulate(grads, name, part.contribution(i)[name], lambda i=i, part=part: part.rows.get(i))
    return grads[name]


class LazyMap(Mapping):
    """A read-only mapping whose values come from get(owner, name) when read. weak: holds its owner
    by a weak reference (a map the owner itself keeps, e.g. a trace's record's contributions: no
    reference cycle, so a dropped trace is freed at once, as the trace store counts on)."""

    def __init__(self, owner, names: Callable, get: Callable, has: Callable, weak: bool = False):
        self._owner = weakref.ref(owner) if weak else (lambda: owner)
        self._names, self._get, self._has = names, get, has

    def __getitem__(self, name: str) -> np.ndarray:
        owner = self._owner()
        if not self._has(owner, name):
            raise KeyError(name)
        return self._get(owner, name)

    def __contains__(self, name) -> bool:
        return self._has(self._owner(), name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names(self._owner()))

    def __len__(self) -> int:
        return len(self._names(self._owner()))


def activation_of(param_names) -> Callable[[str], bool]:
    """Whether a name is an activation: neither a parameter nor the token ids."""
    params = set(param_names)
    return lambda name: name not in params and name not in TOKEN_IDS
