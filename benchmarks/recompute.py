"""Issue 26's memory and recompute targets on SmolLM2-135M (float32, one BLAS thread as the server
runs), needs the fetched model (`make real-model`):

    .venv/bin/python benchmarks/recompute.py [--positions 32 256] [--views 40]

Prints, per number of positions: the build's seconds and Trace.nbytes (what a trace holds: its
segment boundaries, the float64 twin's counted up front; the borrowed weights not), against a
full recording's bytes (what every recorded tensor, gradient and contribution would hold);
then the seconds of reading a step view's tensors where the layer must be recomputed (the
process's cache of recomputed segments emptied first), p50 and p95 over --views random steps,
the float64 twin's build (seconds, and a second build's peak bytes under tracemalloc) and one
gradient check of a layer's step (with the twin built, then again on recomputed segments).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.checkpoints.registry import load_checkpoint, registry  # noqa: E402
from app.settings import Settings  # noqa: E402
from xt_core import forward_backward  # noqa: E402
from xt_core.checks.gradcheck import check_record  # noqa: E402
from xt_core.checks.twin import Float64Step, twin_of  # noqa: E402
from xt_core.names import recorded_elements  # noqa: E402
from xt_core.recompute import RECOMPUTED  # noqa: E402

NAME = "smollm2-135m"
MB = 1 << 20


def full_recording_bytes(cfg, T: int) -> int:
    """What the trace held before boundaries: ~2.3x its recorded tensors (value, gradient, the
    contributions summed out of place), the weights' gradients and a tied table's two (V, C)
    contributions, and the float64 twin (2x the activations and their gradients, in float64)."""
    recorded = recorded_elements(cfg, 1, T)
    return int((2.3 * recorded + cfg.n_params() + 2 * cfg.vocab_size * cfg.n_embd) * 4 + 2 * recorded * 8)


def reading(trace, record) -> None:
    """What a step view reads: the op's output and its gradient, and a backward step's contributions."""
    trace[record.name], trace.grad(record.name)
    for name in record.contributions:
        record.contributions[name]


def twin_build(trace, params) -> None:
    """Prints the seconds of building the trace's float64 twin whole (twin_of, then its backward down
    to the first layer, as a check of an early step runs it), then the peak bytes of building another
    (tracemalloc: the arrays it makes, the weights borrowed)."""
    start = time.perf_counter()
    twin_of(trace).grad(trace.nodes[0].name)  # built on first use; dL/d the first op's output: the whole backward
    seconds = time.perf_counter() - start
    tracemalloc.start()
    Float64Step.build(trace.nodes, params, trace.tokens, trace.targets, trace.param_names).grad(trace.nodes[0].name)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"        float64 twin: built in {seconds:5.2f} s, the build's peak {peak / MB:,.0f} MB (a second build)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--positions", type=int, nargs="+", default=[32, 256])
    parser.add_argument("--views", type=int, default=40)
    parser.add_argument("--models-dir", type=Path, default=None)
    args = parser.parse_args()
    settings = Settings(models_dir=args.models_dir) if args.models_dir else Settings()
    models = registry(settings)
    info = models.info(NAME)
    checkpoint = load_checkpoint(info)
    cfg, params = checkpoint.cfg, checkpoint.params
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = next((line.split(":", 1)[1].strip() for line in cpu.splitlines() if "Model name" in line), "?")
    print(f"CPU: {model}; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; one BLAS thread")
    rng = np.random.default_rng(0)
    for T in args.positions:
        tokens = rng.integers(0, cfg.vocab_size, (1, T + 1))
        with threadpool_limits(1):
            start = time.perf_counter()
            trace = forward_backward(cfg, params, tokens[:, :-1], tokens[:, 1:])
            built = time.perf_counter() - start
            full = full_recording_bytes(cfg, T)
            print(
                f"T={T:4d}: build {built:5.2f} s; Trace.nbytes {trace.nbytes() / MB:7.1f} MB "
                f"(float64 twin {trace.twin_nbytes() / MB:.1f} MB) vs a full recording ~{full / MB:,.0f} MB: "
                f"{full / trace.nbytes():,.0f}x less"
            )
            layered = [r for r in trace.records if r.layer is not None]
            seconds = []
            for record in rng.choice(layered, size=args.views):
                RECOMPUTED.clear()
                start = time.perf_counter()
                reading(trace, record)
                seconds.append(time.perf_counter() - start)
            seconds.sort()
            p95 = seconds[min(len(seconds) - 1, int(0.95 * len(seconds)))]
            print(
                f"        a view that recomputes its layer: p50 {statistics.median(seconds) * 1e3:6.1f} ms, "
                f"p95 {p95 * 1e3:6.1f} ms over {len(seconds)} views; recomputed-segment cache "
                f"{RECOMPUTED.nbytes / MB:.1f} MB of {RECOMPUTED.max_bytes / MB:.0f} MB"
            )
            twin_build(trace, params)
            index = next(
                r.index for r in trace.records if r.phase == "backward" and r.name.endswith("15.attention.probs")
            )
            start = time.perf_counter()
            check = check_record(trace, index)
            first = time.perf_counter() - start
            RECOMPUTED.clear()
            start = time.perf_counter()
            check_record(trace, index)
            again = time.perf_counter() - start
            print(
                f"        gradient check of layer 15's softmax backward: {first:5.2f} s (the twin built), "
                f"{again:5.2f} s again from recomputed segments; passed={check.passed}"
            )
            del trace


if __name__ == "__main__":
    main()
