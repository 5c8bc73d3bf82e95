"""Using a trained model: continue a prompt (greedy or seeded sampling) and measure its loss on
text it was not trained on. Forward only, plain NumPy, the same tape as every step.

generate(cfg, params, tokenizer, "the cat", n=40)                  # greedy: the likeliest next token
generate(cfg, params, tokenizer, "the cat", n=40, temperature=0.8, seed=1)   # seeded sampling
heldout_loss(cfg, params, tokenizer, text)                          # mean cross-entropy per predicted token
"""

from __future__ import annotations

import numpy as np

from xt_core.config import Config
from xt_core.lab.probes import run_forward_only

MAX_NEW_TOKENS = 4096  # one forward per token: a bound that stays well under a second on the demo models


def _check_count(name: str, value, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")
    return int(value)


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max())
    return shifted / shifted.sum()


def generate(cfg: Config, params: dict, tokenizer, prompt: str, n: int, temperature: float = 0.0, seed: int = 0) -> str:
    """The prompt followed by n generated tokens, decoded. Each new token comes from the logits at
    the last position of a forward over the last seq_len tokens (a sliding window once the text is
    longer). temperature 0: the likeliest token (ties go to the lower id); temperature > 0: drawn
    from softmax(logits / temperature) with a generator seeded by `seed`, so a seed repeats its text."""
    n = _check_count("n", n, 0, MAX_NEW_TOKENS)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 <= temperature <= 100:
        raise ValueError(f"temperature must be a number in [0, 100], got {temperature!r}")
    ids = list(tokenizer.encode(prompt))
    if not ids:
        raise ValueError("prompt must hold at least one token")
    rng = np.random.default_rng(seed)
    for _ in range(n):
        window = np.asarray(ids[-cfg.seq_len :], dtype=np.int64)[None, :]  # (1, T)
        env = run_forward_only(cfg, params, window, np.zeros_like(window))
        logits = np.asarray(env["logits"][0, -1], dtype=np.float64)  # (V,)
        if temperature == 0:
            ids.append(int(np.argmax(logits)))
        else:
            ids.append(int(rng.choice(logits.size, p=_softmax(logits / temperature))))
    return tokenizer.decode(ids)


def heldout_loss(cfg: Config, params: dict, tokenizer, text: str) -> float:
    """Mean cross-entropy (nats per token) of predicting every token of `text` after its first.
    The text is cut into consecutive windows of seq_len + 1 tokens that overlap by one, so each
    token is predicted exactly once, from the tokens before it in its window."""
    ids = np.asarray(tokenizer.encode(text), dtype=np.int64)
    if ids.size < 2:
        raise ValueError(f"text must hold at least 2 tokens to predict one, got {ids.size}")
    total, count = 0.0, 0
    for start in range(0, ids.size - 1, cfg.seq_len):
        window = ids[start : start + cfg.seq_len + 1]
        env = run_forward_only(cfg, params, window[:-1], window[1:])
        total += float(env["token_loss"].sum(dtype=np.float64))
        count += window.size - 1
    return total / count
