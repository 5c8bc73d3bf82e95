"""The working bytes held for a job on the head's steps cover what it holds at once (issue 35, finding
7): a large vocabulary's replayed head keeps four (B, T, V) arrays, and the output softmax's backward
view computes four more in float64 beside them (app.traces.working.view_bytes); a check of the LM
head's weight beyond LARGE entries holds its float64 replays, the weight moved whole in float64 and a
direction's block (check_bytes)."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

from app.steps import view
from app.traces.working import check_bytes, view_bytes
from tests.helpers.client import make_client, posted_context
from tests.helpers.specs import SMALL_CONFIG
from xt_core import Config, check_record, forward_backward, init_params, memory
from xt_core.checks.f64 import LARGE
from xt_core.checks.twin import twin_of
from xt_core.recompute import RECOMPUTED

HEAD_STEPS = ("norm.out", "logits", "output_probs", "token_loss", "loss")
# four sequences of 128 positions over 4,096 tokens: each (B, T, V) array 8 MiB in float32, past the
# view's fixed share (VIEW_FLOOR, 32 MiB) and the (V, C) weight (0.25 MiB)
B, T, V = 4, 128, 4096
LARGE_VOCABULARY = {
    "config": {**SMALL_CONFIG, "vocab_size": V, "seq_len": T},
    "tokens": [[(37 * i + 101 * b) % V for i in range(T + 1)] for b in range(B)],
    "seed": 3,
}


def peak_of(job) -> int:
    """Bytes job() held at its peak beyond what was held before, its segment replayed afresh and its
    large arrays taken afresh (no recomputed segment, no free kept buffer)."""
    RECOMPUTED.clear()
    memory.trim_kept(0)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        job()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_view_of_a_head_step_holds_no_more_than_its_estimate(dtype):
    with make_client() as client:
        summary, ctx = posted_context(client, {**LARGE_VOCABULARY, "dtype": dtype})
        held = view_bytes(ctx.trace)
        head = [s["index"] for s in summary["steps"] if s["name"] in HEAD_STEPS and s["phase"] == "backward"]
        peaks = {i: peak_of(lambda i=i: view.step_view_json(ctx, i, 0, 0, None)) for i in head}
    assert len(peaks) == 5 and max(peaks.values()) <= held, (peaks, held)
    one = B * T * V * ctx.trace.dtype.itemsize  # a (B, T, V) array
    assert max(peaks.values()) > 6 * one  # the output softmax's backward view: its replay and its float64 work


def test_a_check_of_the_lm_heads_weight_holds_no_more_than_its_estimate():
    """Past the API's limits (n_embd ≤ 512, V ≤ 4096): a (V, C) weight beyond LARGE entries, checked
    along a direction (directional_large), as SmolLM2's is; the twin built first, as a later check finds it."""
    cfg = Config(vocab_size=32768, n_layer=1, n_head=2, n_kv_head=1, n_embd=132, ffn_hidden=16, seq_len=16)
    assert cfg.vocab_size * cfg.n_embd > LARGE
    tokens = (np.arange(17) * 37) % cfg.vocab_size
    trace = forward_backward(cfg, init_params(cfg, seed=3), tokens[None, :-1], tokens[None, 1:])
    twin_of(trace).grad(trace.nodes[0].name)
    index = next(r.index for r in trace.records if r.name == "logits" and r.phase == "backward")
    peak = peak_of(lambda: check_record(trace, index))
    assert peak <= check_bytes(trace, index), (peak, check_bytes(trace, index))
    assert peak > 4 * cfg.vocab_size * cfg.n_embd * 8  # the weight's float64 gradient, its moved copy, the block
