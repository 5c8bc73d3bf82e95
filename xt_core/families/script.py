"""What every family's model script shares: recording its tape, one node per op, each named after
a row of the family's table of recorded tensors."""

from __future__ import annotations

from collections.abc import Callable

from xt_core.recorded import Recorded
from xt_core.tape import Node


def recorder(rows: tuple[Recorded, ...]) -> tuple[list[Node], Callable[..., str]]:
    """(nodes, add): add(pattern, kind, inputs, layer=None, **attrs) appends the node making the
    tensor of `pattern` (its name for `layer`, its row's phase) and returns that name; a pattern
    the rows do not declare is a KeyError while the tape is built."""
    by_pattern = {row.pattern: row for row in rows}
    nodes: list[Node] = []

    def add(pattern: str, kind: str, inputs, layer: int | None = None, **attrs) -> str:
        recorded = by_pattern[pattern]
        nodes.append(Node(recorded.name(layer), kind, tuple(inputs), layer, recorded.phase, attrs))
        return nodes[-1].name

    return nodes, add
