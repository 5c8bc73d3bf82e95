"""The shipped induction model has an induction head at every period, and the probes that say so
measure what they claim (the target position, the loss, which head)."""

from pathlib import Path

import numpy as np
import pytest

import xt_core
from tests.helpers.env import KERNEL_ROUNDOFF
from xt_core.checkpoint import load
from xt_core.lab.probes import best_induction_head, induction_scores, probe_periods, repeated_random_tokens

SHIPPED = Path(xt_core.__file__).resolve().parent / "checkpoint" / "demos" / "induction.safetensors"
PERIODS = (4, 6, 8, 12, 16)


@pytest.fixture(scope="module")
def shipped():
    return load(SHIPPED)


@pytest.mark.parametrize("period", PERIODS)
def test_shipped_model_has_an_induction_head_at_every_period(shipped, period):
    # seeds the training run never probed (xt train measures with seeds 0..4)
    scores = induction_scores(shipped.cfg, shipped.params, period, n_seq=32, seed=1000 + period)
    layer, head, score = scores.best
    assert score >= 0.8, f"period {period}: best head L{layer}H{head} scores {score:.3f}"
    assert scores.latest[layer, head] > 0.4  # a good part of it on the latest copy alone
    assert scores.loss <= 0.2, f"period {period}: loss on the repeated part {scores.loss:.3f}"
    assert scores.loss < np.log(shipped.cfg.vocab_size) / 10  # far better than guessing


def test_the_probe_finds_the_head_and_the_checkpoint_names_it(shipped):
    cfg, params = shipped.cfg, shipped.params
    found = best_induction_head(cfg, params)
    assert found["score"] >= 0.8 and [p["period"] for p in found["periods"]] == list(PERIODS)
    assert all(p["loss"] <= 0.2 for p in found["periods"])
    meta = shipped.meta  # measured when it was trained: the same numbers now, to float32 round-off
    assert (meta["induction_layer"], meta["induction_head"]) == (found["layer"], found["head"])
    assert meta["induction_score"] == pytest.approx(found["score"], rel=KERNEL_ROUNDOFF)
    assert meta["induction_periods"] == list(PERIODS)
    for stored, key in (("induction_scores", "score"), ("induction_latest", "latest"), ("induction_losses", "loss")):
        assert meta[stored] == pytest.approx([p[key] for p in found["periods"]], rel=KERNEL_ROUNDOFF), stored
    # the head's weights moved to another index: the probe follows them, same score
    layer, head = found["layer"], found["head"]
    other = (head + 1) % cfg.n_head
    hd = cfg.head_dim
    cols = np.arange(cfg.n_embd)
    cols[head * hd : (head + 1) * hd], cols[other * hd : (other + 1) * hd] = (
        cols[other * hd : (other + 1) * hd].copy(),
        cols[head * hd : (head + 1) * hd].copy(),
    )
    a = f"layers.{layer}.attention"
    swapped = dict(params)
    for name in ("wq", "wk", "wv"):  # n_kv_head == n_head: every head has its own k and v
        swapped[f"{a}.{name}"] = params[f"{a}.{name}"][:, cols]
    swapped[f"{a}.wo"] = params[f"{a}.wo"][cols, :]
    moved = best_induction_head(cfg, swapped)
    assert (moved["layer"], moved["head"]) == (layer, other)
    assert moved["score"] == pytest.approx(found["score"], rel=1e-4)


def test_a_random_model_has_no_induction_head(shipped):
    cfg = shipped.cfg
    found = best_induction_head(cfg, xt_core.init_params(cfg, seed=3))
    assert found["score"] < 0.3 and min(p["loss"] for p in found["periods"]) > 2.0


def test_repeated_random_tokens_repeat_a_segment_drawn_with_replacement():
    ids = repeated_random_tokens(26, 6, 40, 33, seed=5)
    assert ids.shape == (40, 33) and ids.dtype.kind == "i"
    np.testing.assert_array_equal(ids[:, 6:], ids[:, :-6])
    assert any(len(set(row[:6])) < 6 for row in ids)  # with replacement: some segment repeats a letter
    np.testing.assert_array_equal(ids, repeated_random_tokens(26, 6, 40, 33, seed=5))
    with pytest.raises(ValueError, match=r"period \(33\) must be shorter"):
        repeated_random_tokens(26, 33, 1, 33, seed=0)
    with pytest.raises(ValueError, match="n_seq must be an integer >= 1"):
        repeated_random_tokens(26, 4, 0, 33, seed=0)


def test_scores_read_the_positions_after_the_earlier_copies():
    """Against a recorded training step: the attention from t >= period to t - k * period + 1
    (k >= 1, every earlier copy; `latest`: k = 1 alone), averaged over sequences and t."""
    cfg = xt_core.Config(vocab_size=11, n_layer=2, n_head=2, n_kv_head=1, n_embd=16, ffn_hidden=24, seq_len=12)
    params = xt_core.init_params(cfg, seed=4, dtype=np.float64)
    period = 3  # query 11 has targets 9, 6, 3, 0
    scores = induction_scores(cfg, params, period, n_seq=3, seed=9)
    ids = repeated_random_tokens(cfg.vocab_size, period, 3, cfg.seq_len + 1, seed=9)
    trace = xt_core.forward_backward(cfg, params, ids[:, :-1], ids[:, 1:])
    for layer in range(cfg.n_layer):
        probs = trace[f"layers.{layer}.attention.probs"]
        for head in range(cfg.n_head):
            queries = [(s, t) for s in range(3) for t in range(period, 12)]
            latest = np.mean([probs[s, head, t, t - period + 1] for s, t in queries])
            every = np.mean([sum(probs[s, head, t, t + 1 - k * period] for k in range(1, t // period + 2)
                                 if t + 1 - k * period >= 0) for s, t in queries])  # fmt: skip
            assert scores.latest[layer, head] == pytest.approx(latest, rel=1e-12)
            assert scores.attention[layer, head] == pytest.approx(every, rel=1e-12)
            assert every > latest
    assert scores.loss == pytest.approx(trace["token_loss"][:, period:].mean(), rel=1e-12)
    assert scores.best[2] == scores.attention.max()


def test_periods_default_to_the_issue_list_and_half_the_context():
    assert probe_periods(xt_core.Config(seq_len=32)) == [4, 6, 8, 12, 16]
    assert probe_periods(xt_core.Config(seq_len=20)) == [4, 6, 8, 10]
    with pytest.raises(ValueError, match="period must be an integer in"):
        induction_scores(xt_core.Config(seq_len=8), xt_core.init_params(xt_core.Config(seq_len=8)), 8)
