"""The bytes a trace that trains first holds at its peak (app.spec.cost.build_cost, which
admission reserves and POST /api/traces refuses beyond max_trace_bytes) bound what its build
really allocates (tracemalloc), for every optimizer, with and without training steps."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import xt_core
from app.spec.cost import build_cost
from app.traces.training import run
from tests.helpers.specs import make_batch

# A vocabulary much wider than the model, as a real model's is: the embedding is its largest
# parameter by far, as SmolLM2's (49,152 x 576) is.
WIDE_VOCAB = xt_core.Config(
    vocab_size=16384, n_embd=64, n_layer=2, n_head=4, n_kv_head=2, ffn_hidden=128, seq_len=32, tie_embeddings=True
)
OPTIMIZERS = [{"name": "sgd", "lr": 0.1}, {"name": "sgd", "lr": 0.1, "momentum": 0.9}, {"name": "adamw", "lr": 1e-3}]


@pytest.mark.parametrize("T", [4, 24])
@pytest.mark.parametrize("steps", [0, 2])
@pytest.mark.parametrize("optimizer", OPTIMIZERS, ids=lambda o: o["name"] + ("+momentum" if "momentum" in o else ""))
def test_the_estimate_bounds_a_training_builds_peak(optimizer, steps, T):
    params = xt_core.init_params(WIDE_VOCAB, seed=0, dtype=np.float32)
    x, y = make_batch(WIDE_VOCAB, 1, T)
    tracemalloc.start()
    try:
        run(WIDE_VOCAB, params, x, y, optimizer, steps)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    estimate = build_cost(WIDE_VOCAB, 1, T, "float32", steps, optimizer).nbytes
    assert peak <= estimate <= 2.5 * peak, (peak, estimate)
