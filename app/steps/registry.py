"""Every kind of step view, in the order they are tried: the first whose `matches` accepts a
recorded step draws it. A new kind of view is one module with a `KIND` and one line here."""

from __future__ import annotations

from app.steps import backward, forward, loss, output_softmax, residual, update
from app.steps.kind import StepKind
from xt_core.trace import Record

STEP_KINDS: list[StepKind] = [
    update.KIND,  # the optimizer step: a view of its own
    loss.KIND,  # per-token loss and mean, both phases: + the loss chart
    residual.KIND,  # residual add, backward: skip + branch
    output_softmax.KIND,  # output softmax, backward: + the (p − onehot)/N identity
    backward.KIND,  # any other backward op
    forward.KIND,  # any other forward op, and the output softmax of the loss phase
]


def kind_of(record: Record) -> StepKind:
    for kind in STEP_KINDS:
        if kind.matches(record):
            return kind
    raise LookupError(f"no step view shows {record.phase} step {record.name!r} ({record.kind})")
