"""The first gradient check a page shows for a step of SmolLM2-135M (issue 37: <= 3 s at 32 and 256
positions, for an early, a middle and the last layer's steps). Not part of the test run; needs the
fetched model (`make real-model`):

    .venv/bin/python benchmarks/first_check.py [--positions 32 256] [--layers 0 15 29] [--repeats 3] [--phases]

Per length: the trace built, then for each layer's softmax backward step (layers.L.attention.probs)
a fresh trace's first check (xt_core.checks.gradcheck.check_record: the float64 twin built, its
segment replayed, both sides of the central difference replayed to the loss), as the server's first
GET .../check runs it; split into the twin's build (its forward: its backward runs down from the
loss as far as the check needs, inside the check) and the rest; beside it, interleaved in the same
process, the same check with the twin's backward run whole first (as before 2026-12-03). Medians of
--repeats; wall and CPU seconds of this thread (on a shared machine wall time also counts waiting
for a core), one BLAS thread.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import xt_core  # noqa: E402
from app.checkpoints.registry import load_checkpoint, registry  # noqa: E402
from app.settings import Settings  # noqa: E402
from benchmarks.machine import cpu_name, load_average  # noqa: E402
from xt_core.checks.gradcheck import check_record  # noqa: E402
from xt_core.checks.twin import twin_of  # noqa: E402
from xt_core.recompute import RECOMPUTED  # noqa: E402

NAME = "smollm2-135m"
TARGET = 3.0


def clocked(fn) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.thread_time()
    fn()
    return time.perf_counter() - wall, time.thread_time() - cpu


def first_check(cfg, params, tokens: np.ndarray, layer: int, whole_twin: bool = False) -> tuple[float, float, float]:
    """(wall, CPU) seconds of a fresh trace's first check of layer `layer`'s softmax backward, and the
    twin's part in CPU seconds. whole_twin: the twin's backward run down to the first layer before the
    check (as every twin was built until 2026-12-03), for an A/B in one process: the same bits."""
    trace = xt_core.forward_backward(cfg, params, tokens[:, :-1], tokens[:, 1:])
    index = next(
        r.index for r in trace.records if r.phase == "backward" and r.name == f"layers.{layer}.attention.probs"
    )
    RECOMPUTED.clear()
    twin = clocked(lambda: twin_of(trace).grad(trace.nodes[0].name) if whole_twin else twin_of(trace))
    rest = clocked(lambda: check_record(trace, index))
    return twin[0] + rest[0], twin[1] + rest[1], twin[1]


def phases(cfg, params, tokens: np.ndarray, layer: int) -> str:
    """Where a fresh trace's first check of layer `layer`'s softmax backward spends its CPU seconds:
    the twin's float64 forward (keeping the latest segments' forward up to KEPT_FORWARD_BYTES), its
    backward down from the loss through the layer (running again the forward of the segments it did
    not keep), the step's segment replayed in float64 and its op's contribution, then the check
    itself (the op's contribution again, and both sides of the central difference replayed in
    float64 from the op to the loss, in lockstep)."""
    trace = xt_core.forward_backward(cfg, params, tokens[:, :-1], tokens[:, 1:])
    record = next(r for r in trace.records if r.phase == "backward" and r.name == f"layers.{layer}.attention.probs")
    RECOMPUTED.clear()
    forward = clocked(lambda: twin_of(trace))[1]
    twin = twin_of(trace)
    segment, kept = twin._segs.of_node[record.node], len(twin._pending.resident)
    again = sum(1 for s in range(segment, twin._pending.done) if s not in twin._pending.resident)
    backward = clocked(lambda: twin._backward_to(segment))[1]
    contribution = clocked(lambda: twin.contributions(record.node))[1]
    check = clocked(lambda: check_record(trace, record.index))[1]
    total = forward + backward + contribution + check
    return (
        f"layer {layer:2d}: {total:5.2f} s CPU = the twin's forward {forward:5.2f} (kept: the last {kept} "
        f"segments) + its backward to the layer {backward:5.2f} ({again} segments' forward run again) + the "
        f"step's segment and contribution {contribution:5.2f} + the check (both sides to the loss) {check:5.2f}"
    )


def compared(cfg, params, tokens: np.ndarray, layer: int, repeats: int) -> str:
    """The first check as it runs now against the twin built whole first, interleaved: medians."""
    runs: dict[bool, list] = {False: [], True: []}
    for r in range(repeats):
        for whole in (True, False) if r % 2 == 0 else (False, True):  # the second of a pair finds memory freed
            runs[whole].append(first_check(cfg, params, tokens, layer, whole))
    now, before = ([statistics.median(r[i] for r in runs[w]) for i in range(3)] for w in (False, True))
    return (
        f"layer {layer:2d}: first check {now[0]:5.2f} s wall / {now[1]:5.2f} s CPU (the twin's forward "
        f"{now[2]:5.2f} s CPU; its backward down to the layer and the check the rest); the twin built whole "
        f"first: {before[0]:5.2f} s wall / {before[1]:5.2f} s CPU (twin {before[2]:5.2f}); "
        f"target <= {TARGET} s: {'met' if now[0] <= TARGET else 'NOT met'} in wall time"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, nargs="+", default=[32, 256])
    parser.add_argument("--layers", type=int, nargs="+", default=[0, 15, 29])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models-dir", type=Path, default=None)
    parser.add_argument("--phases", action="store_true", help="where one first check's seconds go, per layer")
    args = parser.parse_args(argv)
    settings = Settings(models_dir=args.models_dir) if args.models_dir else Settings()
    checkpoint = load_checkpoint(registry(settings).info(NAME))
    print(f"CPU: {cpu_name()}; load average {load_average():.1f}; one BLAS thread")
    rng = np.random.default_rng(0)
    with threadpool_limits(limits=1, user_api="blas"):
        for T in args.positions:
            tokens = rng.integers(0, checkpoint.cfg.vocab_size, (1, T + 1))
            for layer in args.layers:
                if args.phases:
                    line = phases(checkpoint.cfg, checkpoint.params, tokens, layer)
                else:
                    line = compared(checkpoint.cfg, checkpoint.params, tokens, layer, args.repeats)
                print(f"T={T:4d} " + line, flush=True)
            print(f"        load average {load_average():.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
