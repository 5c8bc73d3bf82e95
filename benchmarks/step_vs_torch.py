"""Speed and memory of one recorded training step (xt_core.forward_backward, float32, everything
recorded) against PyTorch autograd forward+backward of the same model with the same weights,
interleaved in one process with the same BLAS thread count. Not part of the test run:

    make bench                      # or: .venv/bin/python benchmarks/step_vs_torch.py [--repeats N] [--threads T]

Prints median times, the ratio xt/torch, achieved GFLOP/s against this machine's measured sgemm
peak, and the trace's bytes. Without torch the torch columns say so and the rest still runs.
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
            f"machine: sgemm peak {peak:.1f} GFLOP/s with {args.threads} BLAS thread(s); numpy {np.__version__}; "
            f"torch {torch_version or 'not installed (torch columns skipped)'}; "
            f"freed memory {f'kept for reuse (up to the largest step, >= {kept >> 20} MB)' if kept else 'returned to the OS'}"
        )
        print(
            f"{'config':8} {'xt ms':>9} {'torch ms':>9} {'xt/torch':>9} {'xt GFLOP/s':>11} {'% peak':>7} {'trace MB':>9}"
        )
        for name in args.configs.split(","):
            cfg, n_seq, T = CONFIGS[name]
            params = xt_core.init_params(cfg, seed=0, dtype=np.float32)
            ids = np.random.default_rng(0).integers(0, cfg.vocab_size, size=(n_seq, T + 1))
            inputs, targets = ids[:, :-1], ids[:, 1:]
            ours = functools.partial(xt_core.forward_backward, cfg, params, inputs, targets)
            theirs = torch_runner(cfg, params, inputs, targets)
            ours()
            if theirs:
                theirs()
            xt_times, torch_times = [], []
            for _ in range(args.repeats):  # interleaved, so both see the same machine state
                xt_times.append(_timed(ours))
                if theirs:
                    torch_times.append(_timed(theirs))
            xt_ms = 1000 * statistics.median(xt_times)
            gflops = step_flops(cfg, n_seq, T) / (xt_ms / 1000) / 1e9
            trace_mb = ours().nbytes() / 1e6
            if torch_times:
                torch_ms = 1000 * statistics.median(torch_times)
                torch_cols = f"{torch_ms:9.1f} {xt_ms / torch_ms:9.2f}"
            else:
                torch_cols = f"{'-':>9} {'-':>9}"
            print(f"{name:8} {xt_ms:9.1f} {torch_cols} {gflops:11.1f} {100 * gflops / peak:6.1f}% {trace_mb:9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
