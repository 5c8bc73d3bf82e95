"""Trace: everything one training step computed, forward and backward, by name."""

from __future__ import annotations

import difflib
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from xt_core.config import DEFAULT_FAMILY, Config
from xt_core.listing import Listed, listing
from xt_core.names import LOGITS, LOSS, OUTPUT_PROBS, TOKEN_IDS
from xt_core.recompute import (
    RECOMPUTED,
    Forwarded,
    LazyMap,
    Replayed,
    Segments,
    new_owner,
    replay,
    replay_forward,
    summed_param_grad,
)
from xt_core.tape import Node, exact


@dataclass(frozen=True)
class Record:
    """One op of the step, as the walkthrough shows it.

    Forward records (phase "forward" or "loss") produce tensor `name`; backward records
    (phase "backward") take dL/d`name` and produce `contributions`: what this op adds to
    the gradient of each of its float inputs."""

    index: int  # position in Trace.records
    node: int  # position of the op in the tape
    name: str
    kind: str
    phase: str
    layer: int | None
    inputs: tuple[str, ...]
    shape: tuple[int, ...]
    forward_latex: str
    backward_latex: str
    # read on use: recomputed with the op's segment (Trace.contributions)
    contributions: Mapping[str, np.ndarray] = field(default_factory=dict, repr=False)
    family: str = DEFAULT_FAMILY  # the model family whose rows name it (xt_core.names.lookup(name, family))


class Trace:
    """One recorded step. It holds the parameters, the token ids and the segment boundaries
    (xt_core.recompute: each segment's output and dL/d it); every other value, gradient and
    contribution is recomputed from them when read, bit-identical to a full recording, in the
    process's bounded cache of recomputed segments (xt_core.recompute.RECOMPUTED)."""

    def __init__(
        self,
        cfg: Config,
        nodes: list[Node],
        held: dict,
        boundary_grads: dict,
        shapes: dict,
        param_names,
        backward_override=None,
        param_grads: dict | None = None,
    ):
        self.cfg = cfg
        # the ops as the step ran them (a low-precision step's consult its policy: recomputed layers
        # round as the build did), and as the checks and the float64 twin run them: the exact math
        self._tape, self.nodes = nodes, exact(nodes)
        self.precision = nodes[0].precision if nodes else None  # xt_core.precision.Precision, or None
        self.param_names = list(param_names)
        # step name -> the rule its backward ran with instead of the op's (faults, exercises)
        self.backward_override = backward_override or {}
        self._held = held  # parameters, token ids, every segment's output
        self._boundary_grads = boundary_grads  # dL/d every segment's output
        self._param_grads = param_grads  # the parameters' gradients, while a training step needs them
        self._segs = Segments.of(nodes, self.param_names)
        self._owner = new_owner()
        weakref.finalize(self, RECOMPUTED.drop, self._owner)
        self._held_ids = {id(a) for a in (*held.values(), *boundary_grads.values())}
        # The step in float64, where its gradients are checked: None until the first check of a
        # float32 trace builds it (xt_core.checks.twin.twin_of), then kept as long as the trace.
        self.float64_twin = None
        self.twin_lock = threading.Lock()  # concurrent checks of one trace build it once
        self.loss = float(held[LOSS])
        self.records = self._make_records(shapes)
        self.update = None  # the optimizer step, when the trace is a training step
        self.train_losses: list[float] = []  # losses of the training steps run before this one
        self.all_finite = False  # set by the build: every value and activation gradient finite

    @property
    def values(self) -> LazyMap:
        """Every recorded forward tensor, the parameters and the token ids, by name (read on use)."""
        return LazyMap(self, Trace._value_names, Trace._value, Trace.__contains__)

    @property
    def all_grads(self) -> LazyMap:
        """dL/d every recorded tensor and parameter, by name (read on use)."""
        return LazyMap(self, Trace._grad_names, Trace.grad, Trace._has_grad)

    @property
    def grads(self) -> LazyMap:
        """dL/d every parameter, by name (read on use)."""
        return LazyMap(self, lambda t: t.param_names, Trace.grad, lambda t, n: n in t._segs.readers)

    def _value_names(self) -> list[str]:
        return [*self._held, *(n.name for n in self.nodes if n.name not in self._held)]

    def _grad_names(self) -> list[str]:
        return [*(n.name for n in self.nodes), *self.param_names]

    def _has_grad(self, name: str) -> bool:
        return name in self._segs.produced or name in self._segs.readers

    def attach_update(self, update, latex: str) -> None:
        """Appends the optimizer update as the last record (phase "update")."""
        self.update = update
        self.records.append(
            Record(
                index=len(self.records),
                node=len(self.nodes),
                name="update",
                kind=update.optimizer.name,
                phase="update",
                layer=None,
                inputs=tuple(self.param_names),
                shape=(),
                forward_latex=latex,
                backward_latex="",
                family=self.cfg.family,
            )
        )

    def hand_over_param(self, name: str) -> np.ndarray:
        """The parameter's gradient; the trace holds neither it nor the parameter any more: a
        training loop's update frees each old weight and gradient as it makes the new weight.
        The trace cannot recompute that parameter's segments after; the loop drops it next."""
        self._held.pop(name, None)  # absent when borrowed: a checkpoint's weights stay with their owner
        return self._param_grads.pop(name)

    def release_param_grads(self) -> None:
        """Stops holding the parameters' gradients (kept through a training step's update; read again: recomputed)."""
        self._param_grads = None

    def _make_records(self, shapes: dict) -> list[Record]:
        order = [(i, n.phase) for i, n in enumerate(self.nodes)]
        order += [(i, "backward") for i in range(len(self.nodes) - 1, -1, -1)]
        records = []
        for index, (i, phase) in enumerate(order):
            node = self.nodes[i]
            records.append(
                Record(
                    index=index,
                    node=i,
                    name=node.name,
                    kind=node.kind,
                    phase=phase,
                    layer=node.layer,
                    inputs=node.inputs,
                    shape=tuple(shapes[node.name]),
                    forward_latex=node.op.forward_latex,
                    backward_latex=node.op.backward_latex,
                    contributions=self._contributions_of(i) if phase == "backward" else {},
                    family=self.cfg.family,
                )
            )
        return records

    # ------------------------------------------------------------------ recomputation

    def _replayed(self, segment: int) -> Replayed:
        """Segment `segment` recomputed (xt_core.recompute), from the process's cache when there;
        its forward taken from the cache if a read of a value ran it (only the backward runs)."""

        key = (self._owner, "segment", segment)

        def compute():
            span = self._segs.spans[segment]
            out = self.nodes[span[-1]].name
            forwarded = RECOMPUTED.take((self._owner, "forward", segment))
            arriving = {out: self._boundary_grads[out]}
            params = self._segs.readers.__contains__  # their weight gradients made when read
            done = replay(self._tape, span, self._held, arriving, self.backward_override, forwarded, params)
            done.grew = lambda size: RECOMPUTED.grew(key, size)
            return done, done.nbytes(self.keeps)

        return RECOMPUTED.get(key, compute)

    def _forwarded(self, segment: int) -> Forwarded:
        """Segment `segment`'s forward alone, run again (a read of a value needs no backward), cached."""

        def compute():
            done = replay_forward(self._tape, self._segs.spans[segment], self._held)
            return done, done.nbytes(self.keeps)

        return RECOMPUTED.get((self._owner, "forward", segment), compute)

    def hold_forwards(self, forwards: list[tuple[int, Forwarded, int]]) -> None:
        """The build's forward of its first segments (recompute.built_forwards) into the process's
        cache, as if a read of a value had replayed each."""
        for segment, forwarded, size in forwards:
            RECOMPUTED.get((self._owner, "forward", segment), lambda f=forwarded, n=size: (f, n))

    def hold_replays(self, replays: list[tuple[int, Replayed, int]]) -> None:
        """The build's whole replays of some segments (xt_core.handover), in place of their forwards."""
        for segment, done, size in replays:
            RECOMPUTED.take((self._owner, "forward", segment))  # its values are the whole replay's
            done.grew = lambda made, key=(self._owner, "segment", segment): RECOMPUTED.grew(key, made)
            RECOMPUTED.get((self._owner, "segment", segment), lambda d=done, n=size: (d, n))

    def keeps(self, array: np.ndarray) -> bool:
        """Whether `array` is one the trace holds (counted in nbytes), not one recomputed from them."""
        return id(array) in self._held_ids

    def _summed_grad(self, name: str) -> np.ndarray:
        def compute():
            grad = summed_param_grad(self._tape, self._segs, name, self._replayed)
            return grad, grad.nbytes

        return RECOMPUTED.get((self._owner, "param", name), compute)

    def _value(self, name: str) -> np.ndarray:
        if name in self._held:
            return self._held[name]
        segment = self._segs.produced[name]
        whole = RECOMPUTED.peek((self._owner, "segment", segment))
        return (whole if whole is not None else self._forwarded(segment)).values[name]

    def contributions(self, node_index: int) -> dict[str, np.ndarray]:
        """What node `node_index` alone adds to the gradient of each of its float inputs."""
        return self._replayed(self._segs.of_node[node_index]).contribution(node_index)

    def _contributions_of(self, node_index: int) -> LazyMap:
        return LazyMap(
            self,
            lambda t: list(t.contributions(node_index)),
            lambda t, n: t.contributions(node_index)[n],
            lambda t, n: n in t.contributions(node_index),
            weak=True,
        )

    # ------------------------------------------------------------------ lookup

    @property
    def dtype(self) -> np.dtype:
        return self._held[LOSS].dtype

    @property
    def tokens(self) -> np.ndarray:
        """Input ids, (n_seq, T)."""
        return self._held["tokens"]

    @property
    def targets(self) -> np.ndarray:
        """Target ids, (n_seq, T)."""
        return self._held["targets"]

    def tensor_names(self) -> list[str]:
        """Every recorded forward tensor, in execution order."""
        return [node.name for node in self.nodes]

    def names(self, lang: str = "en") -> list[Listed]:
        """Every name trace[name] and trace.grad(name) take, with its shape and its family's words
        in `lang` (the catalogues' names.ftl: xt_core.listing)."""
        held = [(n, self[n].shape) for n in (*TOKEN_IDS, *self.param_names)]
        recorded = [(r.name, r.shape, r.layer) for r in self.records[: len(self.nodes)]]
        return listing(held, recorded, lang, self.cfg.family)

    def _unknown(self, name: str, pool) -> KeyError:
        close = difflib.get_close_matches(name, list(pool), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return KeyError(f"no recorded tensor named {name!r}{hint}")

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self:
            raise self._unknown(name, self.values)
        return self._value(name)

    def __contains__(self, name: str) -> bool:
        return name in self._held or name in self._segs.produced

    def grad(self, name: str) -> np.ndarray:
        """dL/d(name), same shape as trace[name], for every recorded tensor and parameter."""
        if name in self._boundary_grads:
            return self._boundary_grads[name]
        if name in self._segs.readers:  # a parameter
            if self._param_grads is not None:
                return self._param_grads[name]
            readers = self._segs.readers[name]
            return self._replayed(readers[0]).grad(name) if len(readers) == 1 else self._summed_grad(name)
        if name in self._segs.produced:
            return self._replayed(self._segs.produced[name]).grad(name)
        if name in TOKEN_IDS:
            raise KeyError(f"{name} are integer token ids: they have no gradient")
        raise self._unknown(name, self.all_grads)

    def node_index(self, name: str) -> int:
        for i, node in enumerate(self.nodes):
            if node.name == name:
                return i
        raise self._unknown(name, self.tensor_names())

    @cached_property
    def values64(self) -> dict[str, np.ndarray]:
        """The forward values in float64 (ids unchanged): where finite differences run."""
        return {
            k: (np.asarray(v, dtype=np.float64) if np.asarray(v).dtype.kind == "f" else v)
            for k, v in self.values.items()
        }

    def nbytes(self) -> int:
        """Bytes this trace holds: its boundaries (each segment's output and its gradient), the
        token ids, the parameters unless borrowed (read-only arrays: a loaded checkpoint's weights,
        shared by every trace of that model), the parameters' gradients while held (a training
        step), and for a float32 trace its float64 twin's boundaries (counted up front, so a cache
        bound holds before a check builds it). What is recomputed lives in the process's bounded
        cache of recomputed segments (xt_core.recompute.RECOMPUTED), counted apart."""
        seen, total = set(), 0
        arrays = [*self._held.values(), *self._boundary_grads.values(), *(self._param_grads or {}).values()]
        for a in arrays:
            a = np.asarray(a)
            if id(a) not in seen and a.flags.writeable:
                seen.add(id(a))
                total += a.nbytes
        return total + self.twin_nbytes()

    def twin_nbytes(self) -> int:
        """The float64 twin's bytes: measured once built whole, else 2 x the float32 boundaries and
        their gradients (what it will hold). A twin whose backward is still to run holds fewer once a
        check has read it; between its build and that read (one check job, which holds the twin's
        build bytes: app.services.hold_twin), its kept forward too."""
        if self.dtype == np.float64:
            return 0
        if self.float64_twin is not None and not self.float64_twin.backward_pending:
            return self.float64_twin.nbytes()
        names = self._segs.boundaries(self.nodes)
        return 2 * sum(self._held[n].nbytes + self._boundary_grads[n].nbytes for n in names)

    def logits_identity_error(self) -> float:
        """max |dL/dlogits - (p - onehot)/N| over every position: the seed's fused rule."""
        p = np.asarray(self[OUTPUT_PROBS], dtype=np.float64)
        expected = p.copy()
        np.put_along_axis(expected, self.targets[..., None], np.take_along_axis(p, self.targets[..., None], -1) - 1, -1)
        expected /= self.targets.size
        return float(np.max(np.abs(self.grad(LOGITS) - expected)))
