"""One backward loop: a build, a recorded segment's replay, the float64 twin's build and its
segments' replays, and the update check's dot all run their ops' backward inside
xt_core.tape.run_backward (what differs between them are the policies handed to it). The spy
below sees every op backward call and the stack it was made from, so a private copy of the loop
(a backward that calls the ops itself) is caught as calls made outside it."""

from __future__ import annotations

import dataclasses
import sys
from collections import Counter

import numpy as np
import pytest

import xt_core
from tests.helpers.specs import make_batch
from xt_core import tape
from xt_core.checks.gradcheck import check_record
from xt_core.checks.twin import twin_of
from xt_core.lab.faults import overrides
from xt_core.ops import OPS
from xt_core.recompute import RECOMPUTED
from xt_core.training.loop import train_step
from xt_core.training.optim import SGD


class BackwardSpy:
    """Counts op backward calls by phase (the test's label), inside run_backward or outside it."""

    def __init__(self):
        self.phase = "none"
        self.inside: Counter[str] = Counter()
        self.outside: Counter[str] = Counter()

    def wrap(self, backward):
        if backward is None:
            return None

        def spied(*args, **kwargs):
            frame = sys._getframe(1)
            while frame is not None and frame.f_code is not tape.run_backward.__code__:
                frame = frame.f_back
            (self.inside if frame is not None else self.outside)[self.phase] += 1
            return backward(*args, **kwargs)

        return spied


@pytest.fixture
def spy(monkeypatch):
    spy = BackwardSpy()
    for kind, op in list(OPS.items()):  # Node.op reads the table on every call
        spied = dataclasses.replace(op, backward=spy.wrap(op.backward), input_backward=spy.wrap(op.input_backward))
        monkeypatch.setitem(OPS, kind, spied)
    RECOMPUTED.clear()
    yield spy
    RECOMPUTED.clear()


def test_every_backward_of_a_build_replay_twin_and_update_check_runs_inside_the_one_loop(spy):
    cfg = xt_core.PRESETS["tiny"]
    inputs, targets = make_batch(cfg, 2, 8, seed=1)
    params = xt_core.init_params(cfg, seed=2, dtype=np.float32)
    fault = overrides(cfg, ["attention_out_reads_dres"])
    phases = {
        "build": lambda: train_step(cfg, params, inputs, targets, SGD(lr=0.1), backward_override=fault),
        "replay": lambda: trace.grad("layers.0.attention.probs"),
        "twin build": lambda: twin_of(trace).grad(trace.nodes[0].name),  # its backward run down to the first op
        "twin replay": lambda: twin_of(trace).grad("layers.1.feed_forward.gate"),
        "update check": lambda: check_record(trace, trace.records[-1].index),
    }
    trace = None
    for phase, run in phases.items():
        spy.phase = phase
        RECOMPUTED.clear()  # every read recomputes its segment
        done = run()
        trace = done if phase == "build" else trace
    assert trace.backward_override and trace.records[-1].phase == "update"
    assert all(spy.inside[phase] > 0 for phase in phases), spy.inside
    assert not spy.outside, f"op backwards run outside tape.run_backward: {dict(spy.outside)}"

    # the spy sees a backward made outside the loop: one op's, as a check of a backward step runs it
    spy.phase = "one op"
    node = trace.node_index("layers.0.attention.probs")
    assert twin_of(trace).contributions(node)
    assert spy.outside == {"one op": 1}
