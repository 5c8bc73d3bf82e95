"""The names a trace answers to, in the words of the one table of recorded names (xt_core.names):
`Trace.names()` lists them for a notebook as the page shows them."""

from __future__ import annotations

from dataclasses import dataclass

from xt_core.config import DEFAULT_FAMILY
from xt_core.names import TOKEN_IDS, lookup


@dataclass(frozen=True)
class Listed:
    """One name a trace answers to (`trace[name]`, and `trace.grad(name)` where has_grad)."""

    name: str  # "layers.0.attention.probs", "tok_embeddings", "tokens"
    shape: tuple[int, ...]
    kind: str  # "tensor" (recorded by an op), "parameter" or "token ids"
    title: str  # the op that makes it ("Attention softmax over keys"); "parameter", "token ids"
    label: str  # what it holds, in words ("layer 0 attention probabilities, all heads")
    has_grad: bool


def listing(
    held: list[tuple[str, tuple[int, ...]]],
    recorded: list[tuple[str, tuple[int, ...], int | None]],
    family: str = DEFAULT_FAMILY,
) -> list[Listed]:
    """A trace's token ids, then its recorded tensors (in execution order), then its parameters,
    each with its shape and the words of its model family's table. `held`: the token ids and
    parameters (name, shape); `recorded`: (name, shape, layer)."""
    ids = [Listed(name, shape, "token ids", "token ids", name, False) for name, shape in held if name in TOKEN_IDS]
    params = [
        Listed(name, shape, "parameter", "parameter", name, True) for name, shape in held if name not in TOKEN_IDS
    ]
    tensors = []
    for name, shape, layer in recorded:
        found = lookup(name, family)
        title, label = (found.title, found.label.format(L=layer)) if found else (name, name)
        tensors.append(Listed(name, shape, "tensor", title, label, True))
    return ids + tensors + params
