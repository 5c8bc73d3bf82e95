"""The build's backward handed over to the cache of recomputed segments: each segment recorded as a
gradient's read would replay it (xt_core.recompute.replay), in the cache's free room, so that
reading a step's gradients after its build replays no segment. Its forwards alone are handed over
by recompute.built_forwards; this is the rest of a whole replay."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xt_core.recompute import Boundaries, DeferredParams, Replayed, Segments
from xt_core.tape import KeepOnly, Node, accumulate


class HandOver(Boundaries):
    """Boundaries for a build's backward that is its keep too: outside a recorded segment `keep`
    (KeepOnly: the activations' gradients) decides alone; inside one, DeferredParams decides which
    backward each op runs, as a read's replay would, and every gradient the ops make is recorded as
    its replay records it: contributions, rows, a weight's gradient left to be made when read. The
    activations' gradients are still summed by `keep` into the build's own (the segment's record
    shares those arrays), a parameter's into the segment's record alone. The same calls on the same
    arrays in the same order as a replay (an op's input gradient comes from one function whichever
    backward runs: xt_core.ops.basic), so the same bits, and the build's own gradients unchanged.

    A segment the build's backward runs is recorded while `room` is left; leaving it, it is kept
    (`replays`: segment, its Replayed, its bytes but those `held`) if it fits in what is left, less a
    forward of it already handed over (`forwards`: segment -> bytes; the whole replay takes its place)."""

    def __init__(self, nodes: list[Node], segs: Segments, values: dict, keep: KeepOnly, room: int, held, forwards):
        super().__init__(nodes, segs, values)
        self.keep, self.room, self.held, self.forwards = keep, room, held, forwards
        self.is_param = set(segs.readers).__contains__
        self.replays: list[tuple[int, Replayed, int]] = []
        self.recording: DeferredParams | None = None  # the segment's record, while its backward runs
        self.segment_grads: dict[str, np.ndarray] = {}
        self.segment_values: dict[str, np.ndarray] = {}

    # ------------------------------------------------------------------ as Boundaries

    def entering(self, span: range) -> None:
        # not a segment whose every op the build's backward skips (the embedding's lookup: its table's
        # gradient is no activation's), so the build makes nothing it did not before; its values
        # taken before Boundaries lets them go
        if self.room > 0 and any(self.keep.runs(self.nodes[i]) for i in span):
            self.recording = DeferredParams(span, self.is_param)
            self.segment_values = {self.nodes[i].name: self.values[self.nodes[i].name] for i in span}
        super().entering(span)

    def leaving(self, span: range, grads: dict) -> None:
        if self.recording is not None:
            out = self.nodes[span[-1]].name  # dL/d its output first, as a replay's arriving gradient
            self.segment_grads = {out: grads[out], **self.segment_grads}
            self._keep_if_it_fits(self.segs.of_node[span[0]], grads)
            self.recording, self.segment_grads, self.segment_values = None, {}, {}
        super().leaving(span, grads)

    def _keep_if_it_fits(self, segment: int, grads: dict) -> None:
        record = self.recording
        done = Replayed(self.segment_values, self.segment_grads, record.contributions, record.rows, record.deferred)
        boundary_grads = {id(grads[n]) for n in self.segs.boundaries(self.nodes) if n in grads}
        size = done.nbytes(lambda a: self.held(a) or id(a) in boundary_grads)
        if size - self.forwards.get(segment, 0) <= self.room:
            self.room -= size - self.forwards.get(segment, 0)
            self.replays.append((segment, done, size))

    # ------------------------------------------------------------------ as run_backward's keep

    @property
    def contributions(self) -> dict:
        return self.keep.contributions

    def runs(self, node: Node) -> bool:
        return self.recording is not None or self.keep.runs(node)

    def inputs_only(self, node: Node) -> bool:
        return (self.recording or self.keep).inputs_only(node)

    def left_out(self, grads: dict, i: int, node: Node, cache, names: list[str]) -> None:
        (self.recording or self.keep).left_out(grads, i, node, cache, names)

    def take(self, grads: dict, i: int, name: str, grad: np.ndarray, rows: Callable) -> None:
        if self.recording is None:
            self.keep.take(grads, i, name, grad, rows)
            return
        nonzero = rows()
        self.recording.contributions.setdefault(i, {})[name] = grad
        if nonzero is not None:
            self.recording.rows[i] = nonzero
        if self.keep.wanted(name):  # summed once, into the build's: the record holds that sum
            self.keep.take(grads, i, name, grad, lambda: nonzero)
            self.segment_grads[name] = grads[name]
        else:
            accumulate(self.segment_grads, name, grad, lambda: nonzero)
