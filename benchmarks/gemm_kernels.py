"""The 32-row GEMMs of SmolLM2's recorded step, numpy (OpenBLAS) against torch (MKL), one thread
each: why xt's step is slower than torch's on this machine (docs/performance.md, "Against
PyTorch"). Not part of the test run; needs torch (`pip install -e '.[reference]'`):

    .venv/bin/python benchmarks/gemm_kernels.py [--repeats 7]

Milliseconds per GEMM, median of --repeats passes. "cold": each pass cycles 60 different weights
(212 MB, beyond the last-level cache), so each is read from memory, as in a step; "cached": one
weight, over and over. No model file needed: random float32 of the model's shapes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

ROWS, C, F, V = 32, 576, 1536, 49152  # positions, width, SwiGLU width, vocabulary
WEIGHTS = 60


def per_call_ms(fn, arrays: list, repeats: int) -> float:
    """Median over `repeats` passes of fn(a) for every a in arrays, per call."""
    passes = []
    for _ in range(repeats):
        start = time.perf_counter()
        for a in arrays:
            fn(a)
        passes.append((time.perf_counter() - start) / len(arrays) * 1e3)
    return statistics.median(passes)


def rows(repeats: int) -> list[tuple[str, float, float | None]]:
    """(what, numpy ms, torch ms or None) per GEMM."""
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal((C, F), dtype=np.float32) for _ in range(WEIGHTS)]
    x, dy = rng.standard_normal((ROWS, C), dtype=np.float32), rng.standard_normal((ROWS, F), dtype=np.float32)
    table = rng.standard_normal((V, C), dtype=np.float32)
    dlogits = rng.standard_normal((ROWS, V), dtype=np.float32)
    xT = np.ascontiguousarray(x.T)
    ours = [
        ("32x576 @ 576x1536, cached: x @ W", lambda w: x @ w, weights[:1] * WEIGHTS),
        ("   the same as (W^T @ x^T)^T, W^T contiguous, cached", lambda w: (w @ xT).T, [np.ascontiguousarray(weights[0].T)] * WEIGHTS),
        ("cold: forward x @ W", lambda w: x @ w, weights),
        ("cold: dx as xt takes it, (W @ dy^T)^T", lambda w: (w @ dy.T).T, weights),
        ("cold: reading the weight alone, W.sum()", lambda w: w.sum(), weights),
        ("LM head dx, 32x49152 @ 49152x576", lambda t: dlogits @ t, [table]),
        *fusions(x, weights, rng),
    ]  # fmt: skip
    found = [(label, per_call_ms(fn, arrays, repeats)) for label, fn, arrays in ours]
    theirs = torch_rows(weights, x, dy, table, dlogits, repeats)
    return [(label, mine, theirs.get(label)) for label, mine in found]


def fusions(x: np.ndarray, weights: list, rng) -> list:
    """q/k/v and gate/up as separate GEMMs against one GEMM of the concatenated weight (cached
    weights: the most a fusion could gain), with whether the fused product's column blocks hold the
    same bits as the separate products (a fusion may land only if they do: the snapshot contract)."""
    wq, wk, wv = (rng.standard_normal((C, n), dtype=np.float32) for n in (C, C // 3, C // 3))
    w1, w3 = weights[0], weights[1]
    qkv, gate_up = np.concatenate([wq, wk, wv], 1), np.concatenate([w1, w3], 1)
    blocks = np.split(x @ qkv, [C, C + C // 3], axis=1) + np.split(x @ gate_up, [F], axis=1)
    same = all(np.array_equal(b, x @ w) for b, w in zip(blocks, (wq, wk, wv, w1, w3), strict=True))
    bits = "same bits" if same else "OTHER bits"
    return [
        ("q, k, v: three GEMMs, cached", lambda _: (x @ wq, x @ wk, x @ wv), [None] * WEIGHTS),
        (f"q, k, v: one GEMM of [Wq Wk Wv], cached ({bits})", lambda _: x @ qkv, [None] * WEIGHTS),
        ("gate, up: two GEMMs, cached", lambda _: (x @ w1, x @ w3), [None] * WEIGHTS),
        (f"gate, up: one GEMM of [W1 W3], cached ({bits})", lambda _: x @ gate_up, [None] * WEIGHTS),
    ]


def torch_rows(weights, x, dy, table, dlogits, repeats: int) -> dict[str, float]:
    try:
        import torch
    except ImportError:
        return {}
    torch.set_num_threads(1)
    tw = [torch.from_numpy(w) for w in weights]
    tx, tdy, tt, tdl = map(torch.from_numpy, (x, dy, table, dlogits))
    return {
        "32x576 @ 576x1536, cached: x @ W": per_call_ms(lambda w: tx @ w, tw[:1] * WEIGHTS, repeats),
        "cold: forward x @ W": per_call_ms(lambda w: tx @ w, tw, repeats),
        "cold: dx as xt takes it, (W @ dy^T)^T": per_call_ms(lambda w: tdy @ w.T, tw, repeats),
        "LM head dx, 32x49152 @ 49152x576": per_call_ms(lambda t: tdl @ t, [tt], repeats),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    with threadpool_limits(limits=1, user_api="blas"):
        blas = next((i for i in threadpool_info() if i["user_api"] == "blas"), {})
        print(
            f"numpy {np.__version__}: {blas.get('internal_api')} {blas.get('version')} ({blas.get('architecture')} kernels); one thread"
        )
        for label, mine, theirs in rows(args.repeats):
            other = f"torch {theirs:7.3f} ms" if theirs is not None else ""
            print(f"  {label:55s} numpy {mine:7.3f} ms   {other}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
