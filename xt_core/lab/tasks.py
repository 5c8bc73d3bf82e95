"""The demo models' tasks: a config, a tokenizer and a batch stream each, and what to measure on
the trained model (stored in the checkpoint's metadata by `xt train`)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from xt_core.config import Config
from xt_core.lab.generation import generate, heldout_loss
from xt_core.lab.probes import best_induction_head
from xt_core.text.byte_char import CharTokenizer
from xt_core.text.corpus import corpus_text, induction_tokenizer, text_batches


@dataclass(frozen=True)
class Task:
    description: str
    examples: tuple[str, ...]  # texts that show what the model learned
    make: Callable  # (batch, seed, start=0, rng=None) -> (cfg, tokenizer, batches)
    measure: Callable  # (cfg, params, tokenizer) -> dict for the checkpoint's metadata

    def setup(self, batch: int, seed: int):
        return self.make(batch, seed)

    def resume(self, batch: int, rng: np.random.Generator, start: int):
        """The batches of setup(batch, seed) from batch `start` on, `rng` in the state setup's stream
        left its own after `start` batches (a recorded run keeps it with each checkpoint: xt_core/film)."""
        return self.make(batch, None, start, rng)[2]


# ---------------------------------------------------------------------- induction

INDUCTION_PERIODS = (3, 18)  # the training periods, inclusive: probed at 4 .. seq_len / 2 = 16
INDUCTION_PREFIX = 3  # up to this many random tokens before the first segment
INDUCTION_DISTINCT_BATCHES = 2000  # curriculum: the first batches' segments hold distinct tokens
INDUCTION_MUTATION = 0.3  # from the second copy on, a row's chance that a token is fresh: uniform in [0, this)


def induction_batches(
    vocab_size: int, seq_len: int, batch: int, seed: int | None, start: int = 0, rng: np.random.Generator | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Rows of up to INDUCTION_PREFIX random tokens, a segment of `period` random tokens (3 to 18),
    then copies: each token copies the one `period` back. The first copy is exact; from the second
    copy on, each token is, with the row's mutation rate (uniform in [0, 0.3)), a fresh random token
    instead, and the copies after it copy the changed token. So where copies disagree the latest
    one is right: the model learns to find the current token (and the one before it) in the latest
    period and copy what came after it, whatever the period, and to prefer the latest period.
    Curriculum: the first INDUCTION_DISTINCT_BATCHES batches draw segments without replacement
    (the earlier occurrence is unique: the induction head forms there); later batches draw with
    replacement, the classic test, where a token can occur twice in a segment.
    Yields (inputs, targets), each (batch, seq_len). `rng` (default: one from `seed`) and `start` resume
    a stream: rng in the state the stream left it after `start` batches, the same batches follow."""
    rng = np.random.default_rng(seed) if rng is None else rng
    n, rows = seq_len + 1, np.arange(batch)
    low, high = INDUCTION_PERIODS
    for index in itertools.count(start):
        ids = rng.integers(0, vocab_size, size=(batch, n))
        periods = rng.integers(low, high + 1, size=batch)
        starts = rng.integers(0, INDUCTION_PREFIX + 1, size=batch) + periods  # first copied position
        if index < INDUCTION_DISTINCT_BATCHES:
            distinct = np.argsort(rng.random((batch, vocab_size)), axis=1)  # a permutation per row
            for row, start, period in zip(rows, starts, periods, strict=True):
                ids[row, start - period : start] = distinct[row, :period]
        fresh = rng.random((batch, n)) < rng.random((batch, 1)) * INDUCTION_MUTATION
        fresh &= np.arange(n) >= (starts + periods)[:, None]  # the first copy stays exact
        for t in range(n):
            copies = (t >= starts) & ~fresh[:, t]
            ids[copies, t] = ids[rows[copies], t - periods[copies]]
        yield ids[:, :-1], ids[:, 1:]


def _induction(batch: int, seed: int | None, start: int = 0, rng=None):
    cfg = Config(vocab_size=26, n_layer=2, n_head=4, n_kv_head=4, n_embd=64, ffn_hidden=172, seq_len=32)
    return cfg, induction_tokenizer(), induction_batches(cfg.vocab_size, cfg.seq_len, batch, seed, start, rng)


def _measure_induction(cfg: Config, params: dict, tokenizer) -> dict:
    """best_induction_head, flat (the checkpoint's meta holds numbers, strings and lists of them)."""
    found = best_induction_head(cfg, params)
    return {
        "induction_layer": found["layer"],
        "induction_head": found["head"],
        "induction_score": found["score"],
        "induction_periods": [p["period"] for p in found["periods"]],
        "induction_scores": [p["score"] for p in found["periods"]],
        "induction_latest": [p["latest"] for p in found["periods"]],
        "induction_losses": [p["loss"] for p in found["periods"]],
    }


# ---------------------------------------------------------------------- text

HELDOUT_EVERY = 7  # lines 7, 14, 21, ... of the corpus are held out of training


def corpus_split() -> tuple[str, str]:
    """(training text, held-out text): every HELDOUT_EVERY-th line of xt_core/text/corpus.txt is
    held out (5 of 35 lines); both keep their lines' newlines."""
    lines = corpus_text().splitlines(keepends=True)
    held = [line for i, line in enumerate(lines) if i % HELDOUT_EVERY == HELDOUT_EVERY - 1]
    kept = [line for i, line in enumerate(lines) if i % HELDOUT_EVERY != HELDOUT_EVERY - 1]
    return "".join(kept), "".join(held)


TEXT_SAMPLE_PROMPT = "the "
TEXT_SAMPLE_TOKENS = 120


def _text(batch: int, seed: int | None, start: int = 0, rng=None):
    train_text, _ = corpus_split()
    # the alphabet of the whole corpus (the same characters as the training lines': held-out text encodes)
    tokenizer = CharTokenizer.from_text(corpus_text())
    cfg = Config(
        vocab_size=tokenizer.vocab_size, n_layer=2, n_head=4, n_kv_head=2, n_embd=64, ffn_hidden=172, seq_len=64
    )
    return (
        cfg,
        tokenizer,
        text_batches(train_text, tokenizer, cfg.seq_len, batch, seed, rng),
    )  # every batch alike: no start


def _gpt2_text(batch: int, seed: int | None, start: int = 0, rng=None):
    """The text task on a GPT-2-style model (LayerNorm, GELU, learned positions, biases, tied head)
    of the Llama text model's sizes: the two demo models of one corpus, side by side."""
    cfg, tokenizer, batches = _text(batch, seed, start, rng)
    sizes = {k: v for k, v in cfg.to_dict().items() if k in ("vocab_size", "n_layer", "n_embd", "seq_len")}
    return Config(**sizes, n_head=4, n_kv_head=4, ffn_hidden=4 * cfg.n_embd, family="gpt2"), tokenizer, batches


def _measure_text(cfg: Config, params: dict, tokenizer) -> dict:
    train_text, held_text = corpus_split()
    return {
        "train_loss": heldout_loss(cfg, params, tokenizer, train_text),
        "heldout_loss": heldout_loss(cfg, params, tokenizer, held_text),
        "heldout_lines": f"every {HELDOUT_EVERY}th line of xt_core/text/corpus.txt",
        "sample_prompt": TEXT_SAMPLE_PROMPT,
        "sample": generate(cfg, params, tokenizer, TEXT_SAMPLE_PROMPT, TEXT_SAMPLE_TOKENS),  # greedy
    }


TASKS = {
    "induction": Task(
        "random letters (drawn with replacement) repeating with a period of 3 to 18, a few copied letters "
        "changed at random: the model learns to find the current letter in the latest period and copy the "
        "letter that came after it (an induction head, layer 1), whatever the period",
        ("xkqvbmxkqvbmxkqvbmxkqvbm", "thequickfoxthequickfoxthequick"),
        _induction,
        _measure_induction,
    ),
    "text": Task(
        "character-level model of the project's small corpus of simple sentences, trained on 30 of its 35 lines "
        "(every 7th line held out to measure it)",
        ("the cat sat on the mat.", "the dog sat on the log. the cat saw the dog."),
        _text,
        _measure_text,
    ),
    "gpt2-text": Task(
        "a GPT-2-style model (LayerNorm, GELU, learned position embeddings, biases) of the same small corpus, "
        "character-level, trained on the same 30 of its 35 lines as the text model",
        ("the cat sat on the mat.", "the dog sat on the log. the cat saw the dog."),
        _gpt2_text,
        _measure_text,
    ),
}
