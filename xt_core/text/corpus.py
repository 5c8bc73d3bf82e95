"""Training data: a synthetic induction task and a small character-level corpus that the
project wrote and ships (xt_core/text/corpus.txt)."""

from __future__ import annotations

import string
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from xt_core.text.byte_char import CharTokenizer

CORPUS_PATH = Path(__file__).resolve().parent / "corpus.txt"
INDUCTION_ALPHABET = string.ascii_lowercase  # token i is letter i: sequences read as text


def corpus_text() -> str:
    return CORPUS_PATH.read_text(encoding="utf-8")


def induction_tokenizer() -> CharTokenizer:
    return CharTokenizer(INDUCTION_ALPHABET)


def induction_batches(vocab_size: int, seq_len: int, batch: int, seed: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """A few random tokens, then a random segment written again and again: once it
    repeats, every next token is predictable by finding the current token earlier and
    copying its successor — the job of an induction head. The segment's length varies
    (4 to 12) and its tokens are distinct, so copying from a fixed distance back does not
    work and the earlier occurrence is unique.
    Yields (inputs, targets), each (batch, seq_len)."""
    rng = np.random.default_rng(seed)
    n = seq_len + 1
    while True:
        ids = rng.integers(0, vocab_size, size=(batch, n))
        prefixes = rng.integers(0, 9, size=batch)
        periods = rng.integers(4, 13, size=batch)
        # distinct tokens within a segment, so "find the current token earlier" has one answer
        segments = np.argsort(rng.random((batch, vocab_size)), axis=1)
        for row, segment, prefix, period in zip(ids, segments, prefixes, periods, strict=True):
            row[prefix:] = np.resize(segment[:period], n - prefix)
        yield ids[:, :-1], ids[:, 1:]


def text_batches(
    text: str, tokenizer, seq_len: int, batch: int, seed: int | None, rng: np.random.Generator | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Random windows of seq_len + 1 tokens from the text. Yields (inputs, targets). `rng` (default:
    one from `seed`) resumes a stream: given in the state a stream left it, the same batches follow."""
    ids = np.asarray(tokenizer.encode(text), dtype=np.int64)
    if ids.size < seq_len + 2:
        raise ValueError(f"text has {ids.size} tokens; need at least seq_len + 2 = {seq_len + 2}")
    rng = np.random.default_rng(seed) if rng is None else rng
    while True:
        starts = rng.integers(0, ids.size - seq_len - 1, size=batch)
        windows = ids[starts[:, None] + np.arange(seq_len + 1)]
        yield windows[:, :-1], windows[:, 1:]
