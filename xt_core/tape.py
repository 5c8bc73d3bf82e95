"""The tape: the step as an ordered list of nodes, runnable forward, backward and
replayable from any node with one tensor replaced (how every gradient is checked).
Backward is one loop, run_backward, whoever runs it; what it keeps and where it cuts the
tape are policies handed to it (EveryGradient, KeepOnly; Span, xt_core.recompute.Boundaries).

A node is one op applied to named tensors held in an environment dict (token ids,
parameters and every earlier output). Its name is the name of the tensor it produces.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from xt_core.memory import LARGE_ARRAY_BYTES, reusable_empty
from xt_core.ops import OPS, Op
from xt_core.ops.basic import read_uncast


@dataclass(frozen=True)
class Node:
    name: str  # the tensor this node produces, e.g. "layers.0.attention.probs"
    kind: str  # key into OPS
    inputs: tuple[str, ...]  # names of the tensors it reads, in the op's argument order
    layer: int | None = None
    phase: str = "forward"  # "forward" or "loss"
    attrs: Mapping = field(default_factory=dict)
    # how a low-precision step rounds this op, forward and backward (xt_core.precision.policy.Precision);
    # None: the op computes in its inputs' dtype, as always
    precision: object = None

    @property
    def op(self) -> Op:
        return OPS[self.kind]

    def run(self, args):
        if self.precision is not None:
            return self.precision.forward(self, args)
        return self.op.forward(*args, **self.attrs)


def run_forward(nodes: list[Node], env: dict[str, np.ndarray]) -> list:
    """Runs every node, storing each output in `env`; returns the caches backward needs."""
    caches = []
    for node in nodes:
        out, cache = node.run([env[name] for name in node.inputs])
        env[node.name] = out
        caches.append(cache)
    return caches


def run_backward(nodes: list[Node], caches, seed_grad, backward_override=None, keep=None, segments=None):
    """The backward pass, in exact reverse order of forward: the one backward loop (a build, a
    recorded segment's replay, the float64 twin and the update check all run it; what differs is
    handed in as policies). Returns (grads, contributions): grads[name] is dL/d(name), the sum of
    every contribution kept; contributions[i] maps each float input of node i to what node i alone
    added (recorded by the default `keep`). Each cache is released once its op has run backward.

    keep decides, per op, whether its backward runs and where each gradient it makes goes: by
    default (EveryGradient) every gradient is summed into grads and each contribution recorded;
    KeepOnly keeps the wanted ones (the activations') and hands the rest to a sink or drops them.
    segments cuts the backward into spans run last to first, with hooks at each span's ends: by
    default (Span) the whole tape is one; xt_core.recompute.Boundaries runs a layer at a time,
    replaying a dropped layer's forward for its caches and keeping only the gradients at its ends.
    seed_grad: dL/d the last node's output, or a dict of the gradients arriving at a span's output.
    backward_override, step name -> rule, swaps those ops' backward (the bug lab, the
    exercises): a rule takes (dout, cache, grads), grads being every gradient kept so far."""
    keep = EveryGradient(range(len(nodes))) if keep is None else keep
    segments = Span(range(len(nodes))) if segments is None else segments
    grads: dict[str, np.ndarray] = dict(seed_grad) if isinstance(seed_grad, Mapping) else {nodes[-1].name: seed_grad}
    for span in reversed(segments.spans):
        segments.entering(span)
        for i in reversed(span):
            if keep.runs(nodes[i]):
                backward_into(grads, i, nodes[i], caches[i], keep, backward_override)
            caches[i] = None
        segments.leaving(span, grads)
    return grads, keep.contributions


def backward_into(grads: dict, i: int, node: Node, cache, keep, backward_override=None) -> None:
    """Node i's backward (run_backward's body), each gradient it makes handed to `keep`: summed
    into grads, recorded, sunk or dropped. Its own function so that what it made and `keep` did
    not hold is freed on return, before the loop's next segment replays its forward."""
    inputs_only = keep.inputs_only(node)
    in_grads = node_backward(node, cache, grads, backward_override, inputs_only)
    for name, grad in zip(node.inputs, in_grads, strict=True):
        if grad is not None:
            keep.take(grads, i, name, grad, partial(sparse_rows, node, cache, name, backward_override))
    if inputs_only:  # what the op left out, the policy may make later (xt_core.recompute.DeferredParams)
        keep.left_out(grads, i, node, cache, [n for n, g in zip(node.inputs, in_grads, strict=True) if g is None])


class EveryGradient:
    """run_backward's default keep: every gradient summed into grads (accumulate), and what each op
    alone added to each input recorded (contributions[i]; every node of `span` has its entry), with
    the rows outside which that is zero where its op knows them (rows[i], Op.sparse_rows: summing a
    parameter read by several segments, xt_core.recompute.summed_param_grad)."""

    def __init__(self, span: range = range(0)):
        self.contributions: dict[int, dict[str, np.ndarray]] = {i: {} for i in reversed(span)}
        self.rows: dict[int, np.ndarray] = {}

    def runs(self, node: Node) -> bool:
        return True

    def inputs_only(self, node: Node) -> bool:
        return False

    def left_out(self, grads: dict, i: int, node: Node, cache, names: list[str]) -> None:
        pass

    def take(self, grads: dict, i: int, name: str, grad: np.ndarray, rows: Callable) -> None:
        self.contributions.setdefault(i, {})[name] = grad
        nonzero = rows()
        if nonzero is not None:
            self.rows[i] = nonzero
        accumulate(grads, name, grad, lambda: nonzero)


class KeepOnly:
    """A keep of run_backward: dL/d(name) only where wanted(name) (the activations: a build's
    boundaries, the float64 twin), no contribution recorded. Every other gradient goes to
    sink(name, grad, rows) as its op makes it (a training step's parameter gradients, the update
    check's dot), or without a sink is dropped: then an op none of whose inputs is wanted is skipped
    and a linear op's weight gradient is never made (Op.input_backward). check_finite: `finite`
    then says whether every kept gradient was (the page's divergence banner: Trace.all_finite)."""

    def __init__(self, wanted: Callable[[str], bool], sink: Callable | None = None, check_finite: bool = False):
        self.wanted, self.sink, self.check_finite = wanted, sink, check_finite
        self.finite = True
        self.contributions: dict[int, dict[str, np.ndarray]] = {}

    def runs(self, node: Node) -> bool:
        return self.sink is not None or any(map(self.wanted, node.inputs))

    def inputs_only(self, node: Node) -> bool:
        return self.sink is None and not all(map(self.wanted, node.inputs))

    def left_out(self, grads: dict, i: int, node: Node, cache, names: list[str]) -> None:
        pass  # a gradient not wanted: never made

    def take(self, grads: dict, i: int, name: str, grad: np.ndarray, rows: Callable) -> None:
        if self.wanted(name):
            if self.check_finite and self.finite:
                self.finite = bool(np.isfinite(np.sum(grad)))
            accumulate(grads, name, grad, rows)
        elif self.sink is not None:
            self.sink(name, grad, rows)


class Span:
    """run_backward's default segments: one span run backward whole (the tape; one recomputed
    segment, its ops' forward just run again), nothing replayed or dropped at its ends."""

    def __init__(self, span: range):
        self.spans = (span,)

    def entering(self, span: range) -> None:
        pass

    def leaving(self, span: range, grads: dict) -> None:
        pass


def accumulate(grads: dict, name: str, grad: np.ndarray, rows: Callable[[], np.ndarray | None]) -> None:
    """grads[name] += grad, out of place (every recorded contribution keeps its own value): the
    first contribution is the gradient itself; a large one (a tied (V, C) embedding's) is added
    into a reused buffer, by rows() where it is zero outside them. The one rule by which run_backward
    sums, whatever it keeps (EveryGradient, KeepOnly), so every policy sums in the same bits."""
    if name not in grads:
        grads[name] = grad
    elif grad.nbytes < LARGE_ARRAY_BYTES:
        grads[name] = grads[name] + grad
    else:
        grads[name] = add_large(grads[name], grad, rows())


def add_large(total: np.ndarray, grad: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """total + grad, out of place, into a reused buffer instead of fresh pages (xt_core.memory);
    where grad is zero outside `rows`, only those rows are added instead of reading all its zeros."""
    out = reusable_empty(np.broadcast_shapes(total.shape, grad.shape), np.result_type(total, grad))
    if rows is None:
        return np.add(total, grad, out=out)
    np.copyto(out, total)
    out[rows] += grad[rows]
    return out


def sparse_rows(node: Node, cache, name: str, backward_override=None) -> np.ndarray | None:
    """The rows outside which node's contribution to `name` is zero, where its op knows them
    (Op.sparse_rows: an embedding lookup's table) and its own backward ran; else None."""
    if node.op.sparse_rows is None or name != node.inputs[-1]:
        return None
    if backward_override and node.name in backward_override:
        return None
    return node.op.sparse_rows(cache)


def node_backward(node: Node, cache, grads: Mapping[str, np.ndarray], backward_override=None, inputs_only=False):
    """What node adds to the gradient of each of its inputs, given every gradient so far
    (grads[node.name] is dL/d its output); the override's backward if it swaps this op's.
    inputs_only: the op's parameter gradient may be left out (None), where it has a cheaper
    backward without it (Op.input_backward)."""
    override = backward_override.get(node.name) if backward_override else None
    if override is not None:
        backward = lambda dout, cache: override(dout, cache, grads)  # noqa: E731
    else:
        backward = node.op.input_backward if inputs_only and node.op.input_backward else node.op.backward
    if node.precision is not None:
        return node.precision.backward(node, backward, grads[node.name], cache)
    return backward(grads[node.name], cache)


def exact(nodes: list[Node]) -> list[Node]:
    """The tape's nodes without a precision policy: the step's exact math (what its float64 twin and
    its gradient checks run)."""
    return [dataclasses.replace(node, precision=None) if node.precision is not None else node for node in nodes]


def run_backward_sparse(nodes: list[Node], caches, seed_grad, wanted, backward_override=None) -> dict[str, np.ndarray]:
    """run_backward keeping only dL/d(name) where wanted(name) (KeepOnly): for gradient checks,
    the activations, not the parameters, whose gradients are left unmade or dropped as made."""
    return run_backward(nodes, caches, seed_grad, backward_override, KeepOnly(wanted))[0]


def lookup_of_rows(node: Node, tokens) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """An embedding lookup `node` run on only the table rows its tokens read: (those rows'
    indices, sorted; rows of a table -> the lookup's output from them). The same bits as the
    lookup of a whole table holding those rows (a vocabulary's is 49,152 rows, the batch reads a
    few dozen), and the op itself runs (a faulty forward stays so)."""
    rows, where = np.unique(tokens, return_inverse=True)
    ids = where.reshape(np.shape(tokens))
    return rows, lambda table_rows: node.run([ids, table_rows])[0]


def first_reader(nodes: list[Node], name: str) -> int:
    """Index of the first node reading tensor `name` (where a replay must start)."""
    for i, node in enumerate(nodes):
        if name in node.inputs:
            return i
    raise KeyError(f"no op reads {name!r}")


def replay_loss(
    nodes: list[Node],
    env: Mapping[str, np.ndarray],
    start: int,
    replace: Mapping[str, np.ndarray] | None = None,
    replace_input: tuple[int, int, np.ndarray] | None = None,
    dtype=None,
    casts: dict | None = None,
) -> float:
    """The loss after re-running nodes[start:] on `env`, without changing `env`.

    replace: tensors swapped for every reader (e.g. a perturbed activation or weight); read
    on use, so it may be a lazy mapping that builds each value when an op asks for it.
    replace_input: (node index, argument position, value) swapped for one reader only, so
    a tensor read twice (tied embedding, residual stream) can be perturbed per use: the
    derivative then checks that one node's contribution to the gradient.
    dtype: float arguments of another float dtype are cast to it as each op reads them (a
    float32 trace's parameters in a float64 replay: exact, and only one op's worth at a time).
    casts: where the casts of large arrays (a vocabulary's weights) are kept between replays
    of one check (the caller drops it), instead of paying for a fresh cast in every replay."""
    return replay_losses(nodes, env, start, [replace or {}], dtype, [replace_input], casts)[0]


def replay_losses(
    nodes: list[Node],
    env: Mapping[str, np.ndarray],
    start: int,
    replaces: list[Mapping[str, np.ndarray]],
    dtype=None,
    replace_inputs: list[tuple[int, int, np.ndarray] | None] | None = None,
    casts: dict | None = None,
) -> list[float]:
    """replay_loss of each `replace` mapping (and `replace_inputs` entry, if given), run op by
    op in lockstep: lazy mappings that share work per tensor (the two sides of a central
    difference along one direction: xt_core.checks.directions.moved_pair) build it once, and an argument
    every replay reads unchanged (a float32 weight in a float64 replay) is cast once per op for
    all of them (cast per replay, the casts are ~40% of a real model's float64 replay). Each replay's outputs
    are dropped after their last reader."""
    last_read = _last_reads(nodes)
    last = nodes[-1].name
    swaps = replace_inputs if replace_inputs is not None else [None] * len(replaces)
    locals_: list[dict[str, np.ndarray]] = [{} for _ in replaces]
    for i in range(start, len(nodes)):
        node = nodes[i]
        shared: dict[int, tuple] = {}  # this op's casts, by the id of the array cast (held: ids stay unique)
        for local, replace, swap in zip(locals_, replaces, swaps, strict=True):
            args = [local[n] if n in local else replace[n] if n in replace else env[n] for n in node.inputs]
            if swap is not None and swap[0] == i:
                args[swap[1]] = swap[2]
            if dtype is not None:
                args = [
                    a if read_uncast(node.kind, k, a) else _cast_once(a, dtype, shared, casts)
                    for k, a in enumerate(args)
                ]
            local[node.name] = node.run(args)[0]
            del args  # a moved (V, C) weight is 226 MB in float64: freed before the next replay builds its own
            _drop_read(local, node, i, last_read)
        del shared
    return [
        float(local[last] if last in local else replace[last] if last in replace else env[last])
        for local, replace in zip(locals_, replaces, strict=True)
    ]


def _last_reads(nodes: list[Node]) -> dict[str, int]:
    """Each tensor's last reader: a replay drops its own outputs there (a float64 replay of a
    real model otherwise holds all its activations, ~110 MB of SmolLM2's, until it ends)."""
    return {name: i for i, node in enumerate(nodes) for name in node.inputs}


def _drop_read(local: dict, node: Node, index: int, last_read: dict[str, int]) -> None:
    for name in node.inputs:
        if last_read[name] == index:
            local.pop(name, None)


LARGE_CAST = 32 << 20  # bytes: beyond, glibc maps fresh pages for every new array (page faults)


def _as_float(a, dtype, casts: dict | None = None) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind != "f" or a.dtype == dtype:
        return a
    if casts is None or a.nbytes < LARGE_CAST:
        return a.astype(dtype)
    key = (id(a), np.dtype(dtype).str)
    if key not in casts or casts[key][0] is not a:
        casts[key] = (a, a.astype(dtype))  # holds `a`: its id cannot be reused meanwhile
    return casts[key][1]


def _cast_once(a, dtype, shared: dict, casts: dict | None) -> np.ndarray:
    """_as_float, made once per array for every lockstep replay of one op (`shared`)."""
    if not isinstance(a, np.ndarray) or a.dtype.kind != "f" or a.dtype == dtype:
        return _as_float(a, dtype, casts)
    if id(a) not in shared:
        shared[id(a)] = (a, _as_float(a, dtype, casts))
    return shared[id(a)][1]
