"""The cost of a low-precision step against a float32 one, in one process: forward_backward with the
parameters' gradients kept (a training step's), float32 / bfloat16 / float16 interleaved, on the
class preset (4 layers, width 256, 128 positions) and the large one. Not part of the test run:

    .venv/bin/python benchmarks/precision_step.py [--repeats N]

Prints the CPU, then per preset the median CPU seconds (process time: the machine is shared, wall time is not this process's) of each precision and its ratio to float32."""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import xt_core  # noqa: E402
from tests.helpers.specs import make_batch  # noqa: E402
from xt_core.precision import Precision  # noqa: E402


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"CPU: {cpu_name()}")
    for preset, n_seq in (("class", 2), ("large", 1)):
        cfg = xt_core.PRESETS[preset]
        params = xt_core.init_params(cfg, seed=0)
        inputs, targets = make_batch(cfg, n_seq, cfg.seq_len)
        policies = {"float32": None, "bfloat16": Precision.of("bfloat16"), "float16": Precision.of("float16")}
        times = {name: [] for name in policies}
        for _ in range(args.repeats):
            for name, policy in policies.items():
                start = time.process_time()
                trace = xt_core.forward_backward(cfg, params, inputs, targets, keep_param_grads=True, precision=policy)
                times[name].append(time.process_time() - start)
                del trace
        base = statistics.median(times["float32"])
        print(f"{preset} ({n_seq} x {cfg.seq_len} positions):")
        for name, measured in times.items():
            median = statistics.median(measured)
            print(f"  {name:<9} median {median * 1000:8.1f} ms   x{median / base:.2f} of float32")


if __name__ == "__main__":
    main()
