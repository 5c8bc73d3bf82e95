"""Calibrates app/spec/cost.py on this machine: times training steps (forward, backward, AdamW)
for configs at the corners of what a spec may ask (attention-heavy, wide, deep, long, many rows,
a large vocabulary; float32 and float64), fits the cost terms' coefficients (non-negative, by
relative error), scales them so the estimate covers every measured step, and prints the
COEFFICIENTS and CALIBRATION to paste into app/spec/cost.py.

    python benchmarks/cost_model.py            # two runs, ~6-10 min on 2 shared cores

Each config is timed in two runs (its fastest step in each) and the slower run kept: the
machine is shared, and an estimate fit to a quiet minute would undercount a busy one.

Never part of `make test`: tests/app/test_cost.py checks the estimate against the recorded
CALIBRATION and the corners of the accepted space, without a clock.
"""

from __future__ import annotations

import itertools
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import xt_core  # noqa: E402
from app.spec.cost import TERMS, step_terms  # noqa: E402
from xt_core.training.loop import train  # noqa: E402
from xt_core.training.optim import make_optimizer  # noqa: E402

# (name, config fields, n_seq, T)
CONFIGS = [
    ("tiny", dict(vocab_size=26, n_layer=1, n_head=4, n_kv_head=2, n_embd=16, ffn_hidden=24), 1, 8),
    ("class", dict(vocab_size=256, n_layer=4, n_head=8, n_kv_head=8, n_embd=256, ffn_hidden=688), 1, 128),
    ("attention", dict(vocab_size=16, n_layer=6, n_head=16, n_kv_head=1, n_embd=32, ffn_hidden=16), 4, 256),
    ("wide", dict(vocab_size=4096, n_layer=1, n_head=8, n_kv_head=8, n_embd=512, ffn_hidden=2048), 1, 32),
    ("deep", dict(vocab_size=16, n_layer=8, n_head=2, n_kv_head=2, n_embd=16, ffn_hidden=16), 1, 16),
    ("rows", dict(vocab_size=96, n_layer=2, n_head=4, n_kv_head=2, n_embd=64, ffn_hidden=172), 4, 64),
    ("vocab", dict(vocab_size=4096, n_layer=1, n_head=2, n_kv_head=2, n_embd=64, ffn_hidden=64), 2, 128),
    ("long", dict(vocab_size=256, n_layer=2, n_head=4, n_kv_head=4, n_embd=128, ffn_hidden=256), 4, 256),
    # the same parameters on many or few tokens: separates the matmuls from the optimizer's passes
    ("class-rows", dict(vocab_size=256, n_layer=4, n_head=8, n_kv_head=8, n_embd=256, ffn_hidden=688), 4, 128),
    ("wide-rows", dict(vocab_size=4096, n_layer=1, n_head=8, n_kv_head=8, n_embd=512, ffn_hidden=2048), 4, 128),
    ("wide-short", dict(vocab_size=4096, n_layer=1, n_head=8, n_kv_head=8, n_embd=512, ffn_hidden=2048), 1, 2),
]
DTYPES = ("float32", "float64")


def time_step(cfg: xt_core.Config, n_seq: int, T: int, dtype: str, repeats: int = 2) -> float:
    """The fastest of `repeats` timed training steps (after one untimed step)."""
    ids = np.random.default_rng(0).integers(0, cfg.vocab_size, size=(n_seq, T + 1))
    batches = itertools.repeat((ids[:, :-1], ids[:, 1:]))
    params = xt_core.init_params(cfg, seed=0, dtype=np.dtype(dtype))
    optimizer = make_optimizer({"name": "adamw", "lr": 1e-3})
    params, _, _ = train(cfg, params, optimizer, batches, 1)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        train(cfg, params, optimizer, batches, 1)
        best = min(best, time.perf_counter() - started)
    return best


def fit(rows: list[dict]) -> dict[str, float]:
    """Non-negative coefficients minimising the relative error, then scaled to cover every row."""
    X = np.array([[row["terms"][t] for t in TERMS] for row in rows])
    y = np.array([row["seconds"] for row in rows])
    active = list(range(len(TERMS)))
    while True:
        A = X[:, active] / y[:, None]  # relative error: each row weighted by 1 / its seconds
        solution, *_ = np.linalg.lstsq(A, np.ones(len(y)), rcond=None)
        if (solution >= 0).all():
            break
        active.pop(int(np.argmin(solution)))
    coefficients = dict.fromkeys(TERMS, 0.0)
    for index, value in zip(active, solution, strict=True):
        coefficients[TERMS[index]] = float(value)
    predicted = X @ np.array([coefficients[t] for t in TERMS])
    cover = float(np.max(y / predicted))
    return {name: value * cover for name, value in coefficients.items()}


RUNS = 2


def main() -> None:
    threadpool_limits(limits=1, user_api="blas")  # as the server runs them (settings.blas_threads)
    measured: dict[tuple[str, str], float] = {}
    for _ in range(RUNS):  # whole passes, so the runs see the machine at different moments
        for (name, fields, n_seq, T), dtype in itertools.product(CONFIGS, DTYPES):
            cfg = xt_core.Config(**fields, seq_len=max(T, 8))
            seconds = time_step(cfg, n_seq, T, dtype)
            measured[name, dtype] = max(measured.get((name, dtype), 0.0), seconds)
            print(f"{name:10s} {dtype}  {seconds * 1000:9.1f} ms", flush=True)
    rows = []
    for (name, fields, n_seq, T), dtype in itertools.product(CONFIGS, DTYPES):
        cfg = xt_core.Config(**fields, seq_len=max(T, 8))
        seconds = measured[name, dtype]
        terms = step_terms(cfg, n_seq, T, np.dtype(dtype).itemsize)
        rows.append(
            {"name": name, "dtype": dtype, "config": fields, "n_seq": n_seq, "T": T, "seconds": seconds, "terms": terms}
        )
    coefficients = fit(rows)
    print("\nCOEFFICIENTS = {")
    for name, value in coefficients.items():
        print(f'    "{name}": {value:.3e},')
    print("}\n\nCALIBRATION = [  # (name, dtype, config fields, n_seq, T, measured seconds per step)")
    for row in rows:
        print(
            f'    ("{row["name"]}", "{row["dtype"]}", {row["config"]}, {row["n_seq"]}, {row["T"]}, {row["seconds"]:.4f}),'
        )
    print("]")
    out = Path(tempfile.gettempdir()) / "xt-cost-model.json"
    out.write_text(json.dumps({"coefficients": coefficients, "rows": rows}, indent=1))
    print(f"(also written to {out})")


if __name__ == "__main__":
    main()
