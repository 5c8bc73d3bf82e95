"""Specs the tests and benchmarks post, names they expect, and token batches for the core:
one definition each."""

from __future__ import annotations

import numpy as np

import xt_core

# 1 layer, 4 query heads sharing 2 kv heads, width 16: every op of the step, tiny arrays.
SMALL_CONFIG = {"n_layer": 1, "n_head": 4, "n_kv_head": 2, "n_embd": 16, "ffn_hidden": 24, "seq_len": 32}
SMALL_SPEC = {"config": SMALL_CONFIG, "text": "the cat sat on the mat", "seed": 1}
# Two sequences of token ids (T = 7): exercises ?seq=1.
BATCH_SPEC = {
    "config": {**SMALL_CONFIG, "vocab_size": 12},
    "tokens": [[1, 2, 3, 4, 5, 6, 7, 8], [8, 7, 6, 5, 4, 3, 2, 1]],
}

# SGD with lr 100 and weight decay 1: each step multiplies the weights by about 1 - lr*wd = -99.
# After 5 steps q·k overflows float32 in the recorded step's attention scores (forward): layer
# 0's attention scores, the 8th step (tests/app/test_diverge.py finds it from the arrays).
DIVERGING_SPEC = {
    "config": SMALL_CONFIG,
    "text": "the cat sat on the mat",
    "seed": 1,
    "optimizer": {"name": "sgd", "lr": 100.0, "weight_decay": 1.0},
    "train_steps": 5,
}

# The figures of the update step (the last step of a trace with an optimizer), in order.
UPDATE_FIGURES = [
    "update.loss",
    "update.grad_norm",
    "update.ratio",
    "update.delta",
    "update.grad",
    "update.line_search",
]

# xt_core's class preset with byte tokens and a 129-byte text: T = 128 = seq_len, the largest
# views the class config draws (what the server benchmarks and the payload test measure).
CLASS_CONFIG = xt_core.PRESETS["class"].to_dict()
CLASS_TEXT = (
    "Attention is all you need, they said. So the model looked back at every token it had seen, "
    "and it learned what comes next, one byte at a time."
)[:129]


def class_spec(seed: int = 0) -> dict:
    """The class spec as a JSON body (or TraceSpec fields)."""
    return {"config": CLASS_CONFIG, "tokenizer": "byte", "text": CLASS_TEXT, "seed": seed}


def make_batch(cfg: xt_core.Config, n_seq: int, T: int, seed: int = 0):
    """Random token ids (n_seq, T) and their next-token targets."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, cfg.vocab_size, size=(n_seq, T + 1))
    return ids[:, :-1], ids[:, 1:]
