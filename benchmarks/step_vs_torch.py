"""Speed and memory of one recorded training step (xt_core.forward_backward, float32, everything
recorded) against PyTorch autograd forward+backward of the same model with the same weights,
interleaved in one process with the same BLAS thread count. Not part of the test run:

    make bench                      # or: .venv/bin/python benchmarks/step_vs_torch.py [--repeats N] [--threads T]

Like for like: torch's backward makes every weight's gradient, so xt's step is timed with every
weight's gradient too (keep_param_grads=True), and that is the xt/torch ratio. A trace build
(the activations' gradients only; a weight's is recomputed with its layer when read) is timed
beside it and labelled so, never presented as a training step. Prints the CPU, median times, the
ratios, achieved GFLOP/s against this machine's measured sgemm peak, and the trace's bytes.
Without torch the torch columns say so and the rest still runs.
Both sides run under the allocator setting forward_backward makes for its process
(xt_core.memory.keep_freed_memory: freed traces are reused instead of page-faulted in afresh).
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import xt_core  # noqa: E402
import xt_core.memory  # noqa: E402
from benchmarks.machine import cpu_name, load_average  # noqa: E402

CONFIGS = {  # name: (config, n_seq, T)
    "tiny": (
        xt_core.Config(vocab_size=96, n_layer=2, n_head=4, n_kv_head=4, n_embd=64, ffn_hidden=172, seq_len=32),
        1,
        32,
    ),
    "class": (xt_core.PRESETS["class"], 1, 128),
    "large": (xt_core.PRESETS["large"], 2, 256),
}


def step_flops(cfg: xt_core.Config, n_seq: int, T: int) -> float:
    """Matmul FLOPs of forward + backward (backward ~ 2x forward)."""
    N, C, hd = n_seq * T, cfg.n_embd, cfg.head_dim
    proj = 2 * N * C * (2 * cfg.n_head * hd + 2 * cfg.n_kv_head * hd)
    ffn = 2 * N * C * cfg.ffn_hidden * 3
    attn = 2 * 2 * n_seq * cfg.n_head * T * T * hd
    head = 2 * N * C * cfg.vocab_size
    return 3.0 * (cfg.n_layer * (proj + ffn + attn) + head)


def sgemm_peak(n: int = 1024, repeats: int = 5) -> float:
    a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    b = a.T.copy()
    a @ b
    best = min(_timed(lambda: a @ b) for _ in range(repeats))
    return 2 * n**3 / best / 1e9


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def torch_runner(cfg, params, inputs, targets):
    try:
        import torch

        from tests.helpers.torch_reference import torch_step_of_leaves
    except ImportError:
        return None
    P = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}

    def run():
        for t in P.values():
            t.grad = None
        loss, *_ = torch_step_of_leaves(cfg, P, inputs, targets, keep_intermediates=False)

    return run


def timed_config(name: str, repeats: int) -> tuple[dict[str, float], float, float]:
    """Median seconds of xt's training step (every weight's gradient), its trace build (the
    activations' only) and torch's step, run in turns; the FLOPs and the trace's bytes."""
    cfg, n_seq, T = CONFIGS[name]
    params = xt_core.init_params(cfg, seed=0, dtype=np.float32)
    ids = np.random.default_rng(0).integers(0, cfg.vocab_size, size=(n_seq, T + 1))
    inputs, targets = ids[:, :-1], ids[:, 1:]
    runs = {
        "step": functools.partial(xt_core.forward_backward, cfg, params, inputs, targets, keep_param_grads=True),
        "build": functools.partial(xt_core.forward_backward, cfg, params, inputs, targets),
        "torch": torch_runner(cfg, params, inputs, targets),
    }
    runs = {k: fn for k, fn in runs.items() if fn is not None}
    times: dict[str, list[float]] = {k: [] for k in runs}
    for fn in runs.values():
        fn()
    for _ in range(repeats):  # interleaved, so all see the same machine state
        for k, fn in runs.items():
            times[k].append(_timed(fn))
    medians = {k: statistics.median(v) for k, v in times.items()}
    return medians, step_flops(cfg, n_seq, T), runs["build"]().nbytes() / 1e6


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--threads", type=int, default=1, help="BLAS (and torch) threads")
    parser.add_argument("--configs", default="tiny,class,large")
    args = parser.parse_args(argv)
    try:
        import torch

        torch.set_num_threads(args.threads)
        torch_version = torch.__version__
    except ImportError:
        torch_version = None
    kept = xt_core.memory.keep_freed_memory()  # as the first forward_backward would: both sides run under it
    with threadpool_limits(limits=args.threads, user_api="blas"):
        peak = sgemm_peak()
        print(
            f"machine: {cpu_name()}, load average {load_average():.1f}; sgemm peak {peak:.1f} GFLOP/s with "
            f"{args.threads} BLAS thread(s); numpy {np.__version__}; "
            f"torch {torch_version or 'not installed (torch columns skipped)'}; "
            f"freed memory {f'kept for reuse (up to the largest step, >= {kept >> 20} MB)' if kept else 'returned to the OS'}"
        )
        print("step: xt's training step, every weight's gradient made (like for like with torch's backward);")
        print("build: a trace build, the activations' gradients only (weights' recomputed when read): not a step")
        print(
            f"{'config':8} {'step ms':>8} {'torch ms':>9} {'step/torch':>11} {'build ms':>9} {'build/torch':>12} "
            f"{'step GFLOP/s':>13} {'% peak':>7} {'trace MB':>9}"
        )
        for name in args.configs.split(","):
            ms, flops, trace_mb = timed_config(name, args.repeats)
            ms = {k: 1000 * v for k, v in ms.items()}
            gflops = flops / (ms["step"] / 1000) / 1e9
            if "torch" in ms:
                step_vs, build_vs = f"{ms['torch']:9.1f} {ms['step'] / ms['torch']:11.2f}", ms["build"] / ms["torch"]
                build_cols = f"{ms['build']:9.1f} {build_vs:12.2f}"
            else:
                step_vs, build_cols = f"{'-':>9} {'-':>11}", f"{ms['build']:9.1f} {'-':>12}"
            print(
                f"{name:8} {ms['step']:8.1f} {step_vs} {build_cols} {gflops:13.1f} {100 * gflops / peak:6.1f}% "
                f"{trace_mb:9.1f}"
            )
        print(f"load average after: {load_average():.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
