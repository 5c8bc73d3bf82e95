"""The tape: the step as an ordered list of nodes, runnable forward, backward and
replayable from any node with one tensor replaced (how every gradient is checked).

A node is one op applied to named tensors held in an environment dict (token ids,
parameters and every earlier output). Its name is the name of the tensor it produces.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from xt_core.ops import OPS, Op


@dataclass(frozen=True)
class Node:
    name: str  # the tensor this node produces, e.g. "layers.0.attention.probs"
    kind: str  # key into OPS
    inputs: tuple[str, ...]  # names of the tensors it reads, in the op's argument order
    layer: int | None = None
    phase: str = "forward"  # "forward" or "loss"
    attrs: Mapping = field(default_factory=dict)

    @property
    def op(self) -> Op:
        return OPS[self.kind]

    def run(self, args):
        return self.op.forward(*args, **self.attrs)


def run_forward(nodes: list[Node], env: dict[str, np.ndarray]) -> list:
    """Runs every node, storing each output in `env`; returns the caches backward needs."""
    caches = []
    for node in nodes:
        out, cache = node.run([env[name] for name in node.inputs])
        env[node.name] = out
        caches.append(cache)
    return caches


def run_backward(nodes: list[Node], caches: list, seed_grad: np.ndarray, backward_override=None):
    """Backward in exact reverse order of forward. Returns (grads, contributions):
    grads[name] is dL/d(name), the sum of every contribution; contributions[i] maps each
    float input of node i to what node i alone added. A tensor read by several nodes
    (the residual stream, a tied embedding) receives several contributions; the sum is
    built out of place so that every recorded contribution keeps its own value.

    `backward_override(node) -> callable | None` swaps one op's backward (the bug lab, the
    exercises): the callable takes (dout, cache, grads), grads being every gradient so far."""
    grads: dict[str, np.ndarray] = {nodes[-1].name: seed_grad}
    contributions: list[dict[str, np.ndarray]] = [{} for _ in nodes]
    for i in range(len(nodes) - 1, -1, -1):
        node = nodes[i]
        override = backward_override(node) if backward_override else None
        if override is None:
            in_grads = node.op.backward(grads[node.name], caches[i])
        else:
            in_grads = override(grads[node.name], caches[i], grads)
        for name, grad in zip(node.inputs, in_grads, strict=True):
            if grad is None:
                continue
            contributions[i][name] = grad
            grads[name] = grads[name] + grad if name in grads else grad
    return grads, contributions


def first_reader(nodes: list[Node], name: str) -> int:
    """Index of the first node reading tensor `name` (where a replay must start)."""
    for i, node in enumerate(nodes):
        if name in node.inputs:
            return i
    raise KeyError(f"no op reads {name!r}")


def producer(nodes: list[Node], name: str) -> int | None:
    """Index of the node producing `name`, or None for token ids and parameters."""
    for i, node in enumerate(nodes):
        if node.name == name:
            return i
    return None


def replay_loss(
    nodes: list[Node],
    env: Mapping[str, np.ndarray],
    start: int,
    replace: Mapping[str, np.ndarray] | None = None,
    replace_input: tuple[int, int, np.ndarray] | None = None,
) -> float:
    """The loss after re-running nodes[start:] on `env`, without changing `env`.

    replace: tensors swapped for every reader (e.g. a perturbed activation or weight).
    replace_input: (node index, argument position, value) swapped for one reader only, so
    a tensor read twice (tied embedding, residual stream) can be perturbed per use: the
    derivative then checks that one node's contribution to the gradient."""
    local: dict[str, np.ndarray] = dict(replace or {})
    for i in range(start, len(nodes)):
        node = nodes[i]
        args = [local[name] if name in local else env[name] for name in node.inputs]
        if replace_input is not None and replace_input[0] == i:
            args[replace_input[1]] = replace_input[2]
        local[node.name] = node.run(args)[0]
    return float(local[nodes[-1].name])
