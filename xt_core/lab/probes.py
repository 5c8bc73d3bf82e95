"""Measuring what a trained model does: does it have an induction head, which one, and how well
does it copy? Forward only (the tape run without backward), plain NumPy. Generation and the loss on
held-out text are in xt_core/lab/generation.py.

scores = induction_scores(cfg, params, period=8)   # per (layer, head) attention to the induction targets
best = best_induction_head(cfg, params)            # {"layer", "head", "score", "periods": [...]}, JSON-able
previous = previous_token_scores(cfg, params, period=8)  # per (layer, head) attention to the token before
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xt_core.config import Config
from xt_core.model import build_tape, check_params, check_tokens
from xt_core.tape import run_forward

# periods probed when none are given: the 4, 6, 8, 12, 16 and seq_len / 2
DEFAULT_PERIODS = (4, 6, 8, 12, 16)


def run_forward_only(cfg: Config, params: dict, inputs, targets) -> dict[str, np.ndarray]:
    """The forward and the loss, no backward; returns every recorded forward tensor by name
    (xt_core/names.py), e.g. env["layers.1.attention.probs"] (B, H, T, T), env["token_loss"] (B, T)."""
    check_params(cfg, params)
    tokens, targets = check_tokens(cfg, inputs, targets)
    env = dict(params, tokens=tokens, targets=targets)
    run_forward(build_tape(cfg), env)
    return env


def repeated_random_tokens(vocab_size: int, period: int, n_seq: int, length: int, seed: int) -> np.ndarray:
    """n_seq rows of `length` tokens: `period` tokens drawn uniformly WITH replacement (a token may
    occur several times in a segment), then that segment again and again. (n_seq, length) int64."""
    for name, value, low in (("vocab_size", vocab_size, 2), ("period", period, 1), ("n_seq", n_seq, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if not period < length:
        raise ValueError(f"period ({period}) must be shorter than the sequence ({length} tokens) to repeat")
    segments = np.random.default_rng(seed).integers(0, vocab_size, size=(n_seq, period))
    return segments[:, np.arange(length) % period]


@dataclass(frozen=True)
class InductionScores:
    period: int
    attention: np.ndarray  # (n_layer, n_head): mean attention to any earlier copy of the target
    latest: np.ndarray  # (n_layer, n_head): mean attention to the latest copy alone, t - period + 1
    loss: float  # mean cross-entropy on the repeated part (positions t >= period)

    @property
    def best(self) -> tuple[int, int, float]:
        """(layer, head, score) of the head with the highest score (`attention`)."""
        layer, head = np.unravel_index(int(np.argmax(self.attention)), self.attention.shape)
        return int(layer), int(head), float(self.attention[layer, head])


def induction_scores(cfg: Config, params: dict, period: int, n_seq: int = 16, seed: int = 0) -> InductionScores:
    """Runs n_seq seeded repeated random-token sequences of `period` (repeated_random_tokens,
    seq_len positions) and measures every head.

    Input position t >= period holds a copy of position t - period, so its next token is the
    one at t - period + 1: that position, "the token after the same position one period back",
    is the *induction target*; so is t - k * period + 1 for every k >= 1 that is still >= 0 (the
    same token, further back: at period 4 there are up to 7 earlier copies in 32 positions).
    Tokens are drawn with replacement, so the current token may also occur elsewhere in a
    segment; targets are defined by position, not by token identity, and a head that splits its
    attention over every earlier occurrence of the current token scores less than one.

    attention[L, h]: the mean over all sequences and every t in [period, T) of the attention
    probs[:, h, t, :] summed over the targets (any earlier copy); latest[L, h]: the same for
    t - period + 1 alone (a head that always reads the nearest copy scores the same in both).
    `loss` is the mean token loss over the same positions."""
    return _induction_of(cfg, _probe_forward(cfg, params, period, n_seq, seed), period)


def previous_token_scores(cfg: Config, params: dict, period: int, n_seq: int = 16, seed: int = 0) -> np.ndarray:
    """(n_layer, n_head): each head's mean attention from position t to t - 1, over every t in
    [1, T) of the same n_seq seeded repeated sequences induction_scores reads (a previous-token
    head scores near 1; one spread evenly over the t + 1 keys it sees, the mean of 1 / (t + 1)). On repeated tokens the two scores part:
    an induction head attends to t - period + 1, never to t - 1 (period > 2 keeps them apart)."""
    return _previous_of(cfg, _probe_forward(cfg, params, period, n_seq, seed))


def head_scores(
    cfg: Config, params: dict, period: int, n_seq: int = 16, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """(induction_scores(...).attention, previous_token_scores(...)) from one forward: the same bits."""
    env = _probe_forward(cfg, params, period, n_seq, seed)
    return _induction_of(cfg, env, period).attention, _previous_of(cfg, env)


def _probe_forward(cfg: Config, params: dict, period: int, n_seq: int, seed: int) -> dict[str, np.ndarray]:
    T = cfg.seq_len
    if isinstance(period, bool) or not isinstance(period, (int, np.integer)) or not 1 <= period < T:
        raise ValueError(f"period must be an integer in [1, seq_len = {T}), got {period!r}")
    tokens = repeated_random_tokens(cfg.vocab_size, period, n_seq, T + 1, seed)
    return run_forward_only(cfg, params, tokens[:, :-1], tokens[:, 1:])


def _previous_of(cfg: Config, env: dict[str, np.ndarray]) -> np.ndarray:
    queries = np.arange(1, cfg.seq_len)
    return np.stack(
        [
            env[f"layers.{L}.attention.probs"][:, :, queries, queries - 1].mean(axis=(0, 2), dtype=np.float64)
            for L in range(cfg.n_layer)
        ]
    )


def _induction_of(cfg: Config, env: dict[str, np.ndarray], period: int) -> InductionScores:
    T = cfg.seq_len
    queries = np.arange(period, T)
    keys = np.arange(T)
    # (Tq, T): key j is a target of query t when j <= t and t + 1 - j is a positive multiple of the period
    targets = (keys[None, :] <= queries[:, None]) & ((queries[:, None] + 1 - keys[None, :]) % period == 0)
    attention = np.empty((cfg.n_layer, cfg.n_head))
    latest = np.empty((cfg.n_layer, cfg.n_head))
    for L in range(cfg.n_layer):
        probs = env[f"layers.{L}.attention.probs"][:, :, queries, :]  # (B, H, Tq, T)
        attention[L] = np.einsum("bhqk,qk->h", probs, targets, dtype=np.float64) / (probs.shape[0] * queries.size)
        latest[L] = probs[:, :, np.arange(queries.size), queries - period + 1].mean(axis=(0, 2), dtype=np.float64)
    loss = float(env["token_loss"][:, period:].mean(dtype=np.float64))
    return InductionScores(int(period), attention, latest, loss)


def probe_periods(cfg: Config, periods=None) -> list[int]:
    """The periods probed by default: DEFAULT_PERIODS that fit and seq_len // 2, sorted."""
    if periods is None:
        periods = {p for p in DEFAULT_PERIODS if p <= cfg.seq_len // 2} | {cfg.seq_len // 2}
    return sorted(int(p) for p in periods)


def best_induction_head(cfg: Config, params: dict, periods=None, n_seq: int = 32, seed: int = 0) -> dict:
    """The head whose *worst* score over `periods` is highest (an induction head must work at
    every period), with its scores and the loss on the repeated part per period. JSON-able:
    {"layer", "head", "score" (its minimum over periods), "periods": [{"period", "score", "latest",
    "loss"}]}; "latest" is its attention to the latest copy alone (InductionScores.latest)."""
    periods = probe_periods(cfg, periods)
    if not periods:
        raise ValueError("periods must name at least one period")
    measured = [induction_scores(cfg, params, p, n_seq=n_seq, seed=seed + i) for i, p in enumerate(periods)]
    worst = np.min([m.attention for m in measured], axis=0)  # (n_layer, n_head)
    layer, head = (int(i) for i in np.unravel_index(int(np.argmax(worst)), worst.shape))
    return {
        "layer": layer,
        "head": head,
        "score": float(worst[layer, head]),
        "periods": [
            {
                "period": m.period,
                "score": float(m.attention[layer, head]),
                "latest": float(m.latest[layer, head]),
                "loss": m.loss,
            }
            for m in measured
        ],
    }
