"""Where SmolLM2's recorded step spends its time, op by op and matmul by matmul, against PyTorch
autograd's profiler on the same weights and tokens (32 positions unless told, float32, one BLAS/torch
thread), xt's step making every weight's gradient as torch's does (keep_param_grads=True).
Not part of the test run; needs the fetched model (`make real-model`):

    .venv/bin/python benchmarks/step_by_op.py [--models-dir DIR] [--repeats 7] [--positions 32 128 256] [--no-torch]

xt: thread CPU time around every op of xt_core.ops.OPS, and around each matmul of the linear and
LM-head ops (dx through the ops' own input_backward, dW as their backward computes it). torch: the
profiler's self CPU per op, matmuls grouped by shape (it adds per-op overhead: both totals printed).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import os
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import xt_core  # noqa: E402
from app.checkpoints.registry import load_checkpoint  # noqa: E402
from benchmarks.machine import cpu_name  # noqa: E402
from benchmarks.real_model import fetched, token_ids  # noqa: E402
from xt_core.checkpoint.zoo import default_models_dir  # noqa: E402
from xt_core.memory import reusable_empty  # noqa: E402
from xt_core.ops import OPS, attention, basic  # noqa: E402

spent: dict[tuple, float] = collections.defaultdict(float)


def timed(key, fn, *args):
    start = time.thread_time()
    out = fn(*args)
    spent[key] += time.thread_time() - start
    return out


def rows(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1, a.shape[-1])


def linear_backward(dy, cache):
    x, weight = cache
    dx = timed(("dx", weight.shape), lambda: basic.linear_input_backward(dy, cache)[0])
    return dx, timed(("dW", weight.shape), lambda: rows(x).T @ rows(dy))  # as basic.linear_backward


def unembed_backward(dlogits, cache):
    x, weight = cache
    dx = timed(("dx", weight.shape), lambda: basic.unembed_input_backward(dlogits, cache)[0])
    out = reusable_empty(weight.shape, weight.dtype)  # as basic.unembed_backward
    return dx, timed(("dW", weight.shape), lambda: np.matmul(rows(dlogits).T, rows(x), out=out))


def instrument() -> None:
    """Times every op (kind, phase); the linear and LM-head ops per matmul instead."""
    for kind, op in list(OPS.items()):
        if kind == "linear":
            forward = lambda x, w: (timed(("fwd", w.shape), basic.linear_forward, x, w)[0], (x, w))  # noqa: E731
            OPS[kind] = dataclasses.replace(op, forward=forward, backward=linear_backward)
        elif kind == "unembed":
            forward = lambda x, w: (timed(("fwd", w.shape), basic.unembed_forward, x, w)[0], (x, w))  # noqa: E731
            OPS[kind] = dataclasses.replace(op, forward=forward, backward=unembed_backward)
        else:
            OPS[kind] = dataclasses.replace(
                op,
                forward=lambda *a, _f=op.forward, _k=kind, **kw: timed((_k, "forward"), lambda: _f(*a, **kw)),
                backward=lambda *a, _f=op.backward, _k=kind: timed((_k, "backward"), _f, *a),
            )


def torch_matmuls(cfg, params, inputs, targets, repeats: int) -> dict[str, float]:
    """ms per step of each torch op (matmuls keyed by their input shapes), from the profiler."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from tests.helpers.torch_reference import torch_step_of_leaves

    torch.set_num_threads(1)
    P = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}

    def step():
        for t in P.values():
            t.grad = None
        torch_step_of_leaves(cfg, P, inputs, targets, keep_intermediates=False)

    step()
    start = time.thread_time()
    for _ in range(repeats):
        step()
    print(f"torch: {(time.thread_time() - start) / repeats * 1e3:.0f} ms per step unprofiled (thread CPU)")
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        start = time.thread_time()
        for _ in range(repeats):
            step()
    print(f"torch: {(time.thread_time() - start) / repeats * 1e3:.0f} ms per step profiled")
    events = prof.key_averages(group_by_input_shape=True)
    return {f"{e.key} {e.input_shapes}": e.self_cpu_time_total / repeats / 1e3 for e in events}


def report(cfg, T: int, theirs: dict[str, float], repeats: int) -> None:
    C, F, V, kv = cfg.n_embd, cfg.ffn_hidden, cfg.vocab_size, cfg.n_kv_head * cfg.head_dim
    ms = {key: value / repeats * 1e3 for key, value in spent.items()}

    def mm(a, b):
        return theirs.get(f"aten::mm {[list(a), list(b)]}", 0.0)

    table = [  # (piece, xt ms, torch ms): torch's matmuls only have shapes, so like products pair up
        (f"{T}x{C} @ {C}x{F} (w1, w3 forward; w2 dx)", ms[("fwd", (C, F))] + ms[("dx", (F, C))], mm((T, C), (C, F))),
        (f"{T}x{F} @ {F}x{C} (w2 forward; w1, w3 dx)", ms[("fwd", (F, C))] + ms[("dx", (C, F))], mm((T, F), (F, C))),
        (f"{T}x{C} @ {C}x{C} (wq, wo forward and dx)", ms[("fwd", (C, C))] + ms[("dx", (C, C))], mm((T, C), (C, C))),
        ("wk, wv forward and dx", ms[("fwd", (C, kv))] + ms[("dx", (C, kv))], mm((T, C), (C, kv)) + mm((T, kv), (kv, C))),
        ("weight gradients x^T @ dy", sum(ms[("dW", s)] for s in ((C, F), (F, C), (C, C), (C, kv))),
         mm((C, T), (T, F)) + mm((F, T), (T, C)) + mm((C, T), (T, C)) + mm((C, T), (T, kv))),
        ("LM head forward", ms[("fwd", (V, C))], mm((T, C), (C, V))),
        ("LM head dx", ms[("dx", (V, C))], mm((T, V), (V, C))),
        ("LM head dW", ms[("dW", (V, C))], mm((V, T), (T, C))),
    ]  # fmt: skip
    for piece, ours, torch_ms in table:
        print(f"  {piece:45} xt {ours:7.1f} ms   torch {torch_ms:7.1f} ms")
    others = sorted(((k, v) for k, v in ms.items() if isinstance(k[1], str)), key=lambda kv: -kv[1])
    print("  xt, every other op: " + ", ".join(f"{k} {p} {v:.1f}" for (k, p), v in others))
    top = sorted(((k, v) for k, v in theirs.items() if not k.startswith("aten::mm ") and v >= 2), key=lambda kv: -kv[1])
    print("  torch, every other op from 2 ms: " + ", ".join(f"{k} {v:.1f}" for k, v in top))


def attention_gemms_ms(cfg, T: int, repeats: int) -> float:
    """ms per step of the batched GEMMs inside the attention ops (scores, attend: forward and
    backward, six products a layer), timed apart on arrays of the step's shapes and layouts (the ops
    multiply inline, so the step's own timers cannot split them from the elementwise work)."""
    rng = np.random.default_rng(0)
    H, K, hd = cfg.n_head, cfg.n_kv_head, cfg.head_dim

    def randn(*shape):
        return rng.standard_normal(shape, dtype=np.float32)

    qh = attention.split_queries(randn(1, T, H * hd), H, K)  # (1, K, G, T, hd), a strided view
    kh, vh = attention.split_kv(randn(1, T, K * hd), K), attention.split_kv(randn(1, T, K * hd), K)
    square, do = randn(1, K, H // K, T, T), randn(1, K, H // K, T, hd)  # scores, probs and their gradients
    products = [
        lambda: qh @ kh.swapaxes(-1, -2), lambda: square @ vh, lambda: square @ kh,
        lambda: square.swapaxes(-1, -2) @ qh, lambda: do @ vh.swapaxes(-1, -2), lambda: square.swapaxes(-1, -2) @ do,
    ]  # fmt: skip
    start = time.thread_time()
    for _ in range(repeats):
        for product in products:
            product()
    return (time.thread_time() - start) / repeats * 1e3 * cfg.n_layer


def profile(cfg, params, ids: list[int], repeats: int, no_torch: bool) -> None:
    """xt's step at len(ids) - 1 positions timed op by op (and torch's, unless no_torch), printed."""
    T = len(ids) - 1
    inputs, targets = np.array([ids[:-1]]), np.array([ids[1:]])
    # every weight's gradient made, as torch's backward makes them: like for like
    xt_core.forward_backward(cfg, params, inputs, targets, keep_param_grads=True)
    spent.clear()
    start = time.thread_time()
    for _ in range(repeats):
        xt_core.forward_backward(cfg, params, inputs, targets, keep_param_grads=True)
    step_ms = (time.thread_time() - start) / repeats * 1e3
    print(f"T = {T}; CPU: {cpu_name()}; load average {os.getloadavg()[0]:.1f}; xt: {step_ms:.0f} ms per step with "
          f"every weight's gradient (thread CPU, timers included)")  # fmt: skip
    gemm_ms = sum(v for k, v in spent.items() if not isinstance(k[1], str)) / repeats * 1e3
    ops_ms = sum(spent.values()) / repeats * 1e3
    print(f"xt: GEMMs of the linear and LM-head ops {gemm_ms:.0f} ms; outside them {step_ms - gemm_ms:.0f} ms, "
          f"{100 * (1 - gemm_ms / step_ms):.0f}% of the step (of which outside every op: the tape, summing "
          f"gradients, checks, {step_ms - ops_ms:.0f} ms)")  # fmt: skip
    attention_ms = attention_gemms_ms(cfg, T, repeats)
    outside_ms = step_ms - gemm_ms - attention_ms
    print(f"xt: with the attention ops' batched GEMMs counted too ({attention_ms:.0f} ms, timed apart): outside every "
          f"GEMM {outside_ms:.0f} ms, {100 * outside_ms / step_ms:.0f}% of the step")  # fmt: skip
    theirs = {} if no_torch else torch_matmuls(cfg, params, inputs, targets, repeats)
    report(cfg, T, theirs, repeats)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models-dir", type=Path, default=default_models_dir())
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--positions", type=int, nargs="+", default=[32], metavar="T")
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args(argv)
    threadpool_limits(limits=1, user_api="blas")
    settings, info = fetched(args.models_dir)
    if info is None:
        return 1
    checkpoint = load_checkpoint(info)
    instrument()
    for positions in args.positions:
        profile(checkpoint.cfg, checkpoint.params, token_ids(settings, info, positions), args.repeats, args.no_torch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
