"""Trace: everything one training step computed, forward and backward, by name."""

from __future__ import annotations

import difflib
import threading
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from xt_core.checks.jacobian import JacobianCheck, check_softmax_row
from xt_core.checks.twin import Float64Step
from xt_core.config import Config
from xt_core.names import LOGITS, LOSS, OUTPUT_PROBS, entry
from xt_core.tape import Node


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
    contributions: dict[str, np.ndarray] = field(default_factory=dict, repr=False)


class Trace:
    def __init__(
        self,
        cfg: Config,
        nodes: list[Node],
        values: dict,
        all_grads: dict,
        contributions: list,
        param_names,
        faults=(),
        backward_override=None,
    ):
        self.cfg = cfg
        self.nodes = nodes
        self.values = values
        self.all_grads = all_grads
        self.param_names = list(param_names)
        self.faults = tuple(faults)  # bug-lab faults this step's backward ran with
        self.backward_override = backward_override  # the backward it ran with (faults, exercises)
        self._twin: Float64Step | None = None
        self._twin_lock = threading.Lock()
        self.loss = float(values[LOSS])
        self.grads = {name: all_grads[name] for name in self.param_names}
        self.records = self._make_records(contributions)
        self.update = None  # the optimizer step, when the trace is a training step
        self.train_losses: list[float] = []  # losses of the training steps run before this one

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
            )
        )

    def _make_records(self, contributions) -> list[Record]:
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
                    shape=tuple(np.shape(self.values[node.name])),
                    forward_latex=node.op.forward_latex,
                    backward_latex=node.op.backward_latex,
                    contributions=contributions[i] if phase == "backward" else {},
                )
            )
        return records

    # ------------------------------------------------------------------ lookup

    @property
    def dtype(self) -> np.dtype:
        return self.values[LOSS].dtype

    @property
    def tokens(self) -> np.ndarray:
        """Input ids, (n_seq, T)."""
        return self.values["tokens"]

    @property
    def targets(self) -> np.ndarray:
        """Target ids, (n_seq, T)."""
        return self.values["targets"]

    def tensor_names(self) -> list[str]:
        """Every recorded forward tensor, in execution order."""
        return [node.name for node in self.nodes]

    def _unknown(self, name: str, pool) -> KeyError:
        close = difflib.get_close_matches(name, list(pool), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return KeyError(f"no recorded tensor named {name!r}{hint}")

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.values:
            raise self._unknown(name, self.values)
        return self.values[name]

    def __contains__(self, name: str) -> bool:
        return name in self.values

    def grad(self, name: str) -> np.ndarray:
        """dL/d(name), same shape as trace[name], for every recorded tensor and parameter."""
        if name in self.all_grads:
            return self.all_grads[name]
        if name in ("tokens", "targets"):
            raise KeyError(f"{name} are integer token ids: they have no gradient")
        raise self._unknown(name, self.all_grads)

    def node_index(self, name: str) -> int:
        for i, node in enumerate(self.nodes):
            if node.name == name:
                return i
        raise self._unknown(name, self.tensor_names())

    @property
    def twin(self) -> Float64Step:
        """The step's float64 values and activation gradients, where its gradients are checked
        (xt_core.checks.twin): built on first use for a float32 trace (float32 round-off, e.g. p - onehot
        with p near 1, is not a wrong gradient); a float64 trace is its own."""
        if self.dtype == np.float64:
            return Float64Step.of_float64_trace(self)
        with self._twin_lock:  # concurrent checks of one trace build it once
            if self._twin is None:
                params = {name: self.values[name] for name in self.param_names}
                self._twin = Float64Step.build(
                    self.nodes, params, self.tokens, self.targets, self.param_names, self.backward_override
                )
            return self._twin

    @cached_property
    def values64(self) -> dict[str, np.ndarray]:
        """The forward values in float64 (ids unchanged): where finite differences run."""
        return {
            k: (np.asarray(v, dtype=np.float64) if np.asarray(v).dtype.kind == "f" else v)
            for k, v in self.values.items()
        }

    def nbytes(self) -> int:
        """Bytes this trace holds: recorded forward values, gradients and contributions, each
        array once (a contribution that is also a gradient is not counted twice), and for a
        float32 trace its float64 twin (xt_core.checks.twin: activations and their gradients in float64,
        about twice the float32 ones), counted up front so a cache bound holds before a check
        builds it. Read-only arrays are borrowed, not held: a loaded checkpoint's weights,
        shared by every trace of that model."""
        seen, total = set(), 0
        arrays = list(self.values.values()) + list(self.all_grads.values())
        arrays += [g for r in self.records for g in r.contributions.values()]
        for a in arrays:
            a = np.asarray(a)
            if id(a) not in seen and a.flags.writeable:
                seen.add(id(a))
                total += a.nbytes
        return total + self.twin_nbytes()

    def twin_nbytes(self) -> int:
        """The float64 twin's bytes: measured once built, else 2 x the float32 activations and
        their gradients (what it will hold)."""
        if self.dtype == np.float64:
            return 0
        if self._twin is not None:
            return self._twin.nbytes()
        arrays = {id(a): a for n in self.nodes for a in (self.values[n.name], self.all_grads[n.name])}
        return 2 * sum(np.asarray(a).nbytes for a in arrays.values())

    # ------------------------------------------------------------------ softmax Jacobians

    def attention_jacobian(self, layer: int, head: int, seq: int, pos: int) -> JacobianCheck:
        """Row `pos` of head `head` in layer `layer`: J = diag(p) - p p^T over the visible
        keys 0..pos, and the check J @ dL/dp == dL/dscores for that row."""
        cfg = self.cfg
        B, T = self.tokens.shape
        _check_index("layer", layer, cfg.n_layer)
        _check_index("head", head, cfg.n_head)
        _check_index("seq", seq, B)
        _check_index("pos", pos, T)
        probs = entry("layers.{L}.attention.probs").name(layer)
        scores = entry("layers.{L}.attention.scores").name(layer)
        keys = slice(0, pos + 1)  # causal: later keys have p = 0 and take no part
        return check_softmax_row(
            self[probs][seq, head, pos, keys],
            self.grad(probs)[seq, head, pos, keys],
            self.grad(scores)[seq, head, pos, keys],
        )

    def output_jacobian(self, seq: int, pos: int, top_k: int | None = None) -> JacobianCheck:
        """The output softmax at one position: J @ dL/dp == dL/dlogits, checked over the whole
        row in O(V) memory. With top_k, J is built only on the k most probable tokens and the
        target ((k+1)² cells); without it on the whole row (V², for small vocabularies only)."""
        B, T = self.tokens.shape
        _check_index("seq", seq, B)
        _check_index("pos", pos, T)
        if top_k is not None and top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {top_k}")
        p = self[OUTPUT_PROBS][seq, pos]
        shown = None if top_k is None else np.sort(top_tokens(p, int(self.targets[seq, pos]), top_k))
        return check_softmax_row(p, self.grad(OUTPUT_PROBS)[seq, pos], self.grad(LOGITS)[seq, pos], shown)

    def logits_identity_error(self) -> float:
        """max |dL/dlogits - (p - onehot)/N| over every position: the seed's fused rule."""
        p = np.asarray(self[OUTPUT_PROBS], dtype=np.float64)
        expected = p.copy()
        np.put_along_axis(expected, self.targets[..., None], np.take_along_axis(p, self.targets[..., None], -1) - 1, -1)
        expected /= self.targets.size
        return float(np.max(np.abs(self.grad(LOGITS) - expected)))


def _check_index(name: str, value, size: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < size:
        raise ValueError(f"{name} must be an integer in [0, {size}), got {value!r}")


def top_tokens(p: np.ndarray, target: int, k: int) -> np.ndarray:
    """The k most probable tokens of a probability row, and the target if it is not among them:
    most probable first (ties by token id)."""
    top = np.argsort(-p, kind="stable")[:k]
    if target not in top:
        top = np.append(top, target)  # below every one of the k: the order stays descending
    return top.astype(np.int64)
