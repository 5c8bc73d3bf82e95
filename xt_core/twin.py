"""The float64 twin of a recorded step: what gradient checks read.

A float32 trace is checked in float64 (float32 round-off is not a wrong gradient). The whole
step again in float64 would cost a real model dearly: SmolLM2-135M's weights and weight
gradients alone are 2 GB in float64. So the twin holds only what the checks read:

* every activation's forward value, in float64. The parameters stay the trace's own float32
  arrays (shared, never copied): each op reads them as float64 when it runs, which is exact,
  so this is the same function as a float64 copy of the weights;
* dL/d(every activation), in float64. Parameter gradients are dropped as each op makes them;
* what one backward step adds to its inputs' gradients (a weight gradient included), and the
  parameter gradient the update used, recomputed when a check asks: that op's forward (for
  its cache) and its backward, from the values and gradients above.

It is built the first time a check needs it (Trace.twin). A float64 trace is its own twin.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import numpy as np

from xt_core.f64 import LARGE, dot
from xt_core.optim import PerParam
from xt_core.tape import Node, node_backward, run_backward_sparse

F64 = np.dtype(np.float64)
IDS = ("tokens", "targets")
# numpy's mixed float64 @ float32 matmul against a *transposed* float32 weight is ~4x slower
# than casting the weight first. The LM head reads its (V, C) weight transposed; its float64
# cast (V*C*8 bytes) lives only until its backward, a few ops later.
_CAST_WEIGHTS_FIRST = ("unembed",)


class Float64Step:
    """The forward values and activation gradients of a step, in float64 (see module docstring)."""

    def __init__(self, nodes: list[Node], values: dict, grads: dict, param_names, backward_override=None, records=None):
        self.nodes = nodes
        self.values = values  # activations float64; parameters as the trace holds them; token ids
        self.grads = grads  # dL/d(activation), float64 (a float64 trace: every gradient)
        self.param_names = list(param_names)
        self.backward_override = backward_override
        self._recorded = records  # a float64 trace's own records: their contributions are exact

    @classmethod
    def of_float64_trace(cls, trace) -> Float64Step:
        return cls(
            trace.nodes, trace.values, trace.all_grads, trace.param_names, trace.backward_override, trace.records
        )

    @classmethod
    def build(cls, nodes: list[Node], params: dict, tokens, targets, param_names, backward_override=None):
        """Forward and backward in float64 from the float32 parameters (read in float64 by each op)."""
        values: dict[str, np.ndarray] = dict(params)
        values["tokens"], values["targets"] = tokens, targets
        is_param = set(param_names).__contains__
        caches = []
        for node in nodes:
            out, cache = node.run(_args(node, values))
            values[node.name] = np.asarray(out, dtype=F64)  # the embedding looks up float32 rows
            caches.append(cache)
        seed = np.ones((), dtype=F64)

        def wanted(name: str) -> bool:
            return not is_param(name) and name not in IDS

        grads = run_backward_sparse(nodes, caches, seed, wanted, backward_override)
        return cls(nodes, values, grads, param_names, backward_override)

    # ------------------------------------------------------------------ what checks read

    def grad(self, name: str) -> np.ndarray:
        """dL/d(name) in float64 for an activation (or, in a float64 trace, a parameter)."""
        return self.grads[name]

    def contributions(self, node_index: int) -> dict[str, np.ndarray]:
        """What node `node_index` alone adds to the gradient of each of its float inputs."""
        if self._recorded is not None:
            return self._recorded[len(self.nodes) + (len(self.nodes) - 1 - node_index)].contributions
        node = self.nodes[node_index]
        _, cache = node.run(_args(node, self.values))
        in_grads = node_backward(node, cache, self.grads, self.backward_override)
        return {name: g for name, g in zip(node.inputs, in_grads, strict=True) if g is not None}

    def param_grad_dot(
        self, direction: Callable[[str], np.ndarray], shown: Mapping[str, np.ndarray] | None = None
    ) -> tuple[float, float | None]:
        """<dL/dθ, u> over every parameter, u = direction(name) of each parameter's shape: the
        update's gradient along one direction, one op's weight gradient at a time (a tied
        embedding's two contributions each meet the same u). With `shown` (the float32
        trace's parameter gradients), also <shown, u> from the same draws of u (a real model's
        direction is 135M numbers: drawn once for both), else None."""
        if self._recorded is not None:
            total = sum(dot(self.grads[name], direction(name)) for name in self.param_names)
            return total, None if shown is None else sum(dot(shown[n], direction(n)) for n in self.param_names)
        total, on_screen = 0.0, {}
        for name, grad in self._param_contributions():
            u = direction(name)
            total += dot(grad, u)
            if shown is not None and name not in on_screen:
                on_screen[name] = dot(shown[name], u)
        if shown is None:
            return total, None
        return total, sum(on_screen[n] if n in on_screen else dot(shown[n], direction(n)) for n in self.param_names)

    def _param_contributions(self) -> Iterator[tuple[str, np.ndarray]]:
        params = set(self.param_names)
        for i, node in enumerate(self.nodes):
            if any(name in params for name in node.inputs):
                for name, grad in self.contributions(i).items():
                    if name in params:
                        yield name, grad

    def nbytes(self) -> int:
        """Bytes this twin holds beyond the trace (float64 activations and their gradients)."""
        if self._recorded is not None:
            return 0
        params = set(self.param_names)
        arrays = {id(a): a for k, a in self.values.items() if k not in params and k not in IDS}
        arrays |= {id(a): a for a in self.grads.values()}
        return sum(np.asarray(a).nbytes for a in arrays.values())


def _args(node: Node, values: dict) -> list:
    args = [values[name] for name in node.inputs]
    if node.kind in _CAST_WEIGHTS_FIRST:
        args = [np.asarray(a, dtype=F64) if np.asarray(a).dtype.kind == "f" else a for a in args]
    return args


def moved_pair(params: dict, direction: Callable[[str], np.ndarray], step: float) -> tuple[PerParam, PerParam]:
    """Every parameter moved by +step and by -step along its direction, in float64, built
    when an op reads it (a replay of a real model never holds all the moved weights at once),
    for two replays run in lockstep (xt_core.tape.replay_losses): the first to read a
    parameter draws its direction once and builds both; the second takes its own. Beyond LARGE entries (a vocabulary's weights, 226 MB
    in float64) each is built on its own: never two of them at once."""
    waiting: dict[tuple[str, int], np.ndarray] = {}

    def moved(name: str, sign: int) -> np.ndarray:
        mine = waiting.pop((name, sign), None)
        if mine is not None:
            return mine
        if np.size(params[name]) > LARGE:
            return _moved(params, direction, name, sign * step)
        hu = np.multiply(direction(name), step, dtype=F64)  # exact: h u in float64
        plus = np.add(hu, params[name])  # h u + θ, and θ - h u = -(h u) + θ exactly
        minus = np.subtract(params[name], hu, out=hu)
        waiting[(name, -sign)] = minus if sign > 0 else plus
        return plus if sign > 0 else minus

    return PerParam(params, lambda name: moved(name, 1)), PerParam(params, lambda name: moved(name, -1))


def _moved(params: dict, direction: Callable[[str], np.ndarray], name: str, step: float) -> np.ndarray:
    out = np.multiply(direction(name), step, dtype=F64)  # exact: h u in float64
    out += params[name]
    return out
