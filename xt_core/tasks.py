"""The demo models' tasks: a config, a tokenizer and a batch stream each."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xt_core.config import Config
from xt_core.data import corpus_text, induction_batches, induction_tokenizer, text_batches
from xt_core.tokenizers import CharTokenizer


@dataclass(frozen=True)
class Task:
    description: str
    examples: tuple[str, ...]  # texts that show what the model learned
    make: Callable

    def setup(self, batch: int, seed: int):
        return self.make(batch, seed)


def _induction(batch: int, seed: int):
    cfg = Config(vocab_size=26, n_layer=2, n_head=4, n_kv_head=4, n_embd=64, ffn_hidden=172, seq_len=32)
    return cfg, induction_tokenizer(), induction_batches(cfg.vocab_size, cfg.seq_len, batch, seed)


def _text(batch: int, seed: int):
    text = corpus_text()
    tokenizer = CharTokenizer.from_text(text)
    cfg = Config(
        vocab_size=tokenizer.vocab_size, n_layer=2, n_head=4, n_kv_head=2, n_embd=64, ffn_hidden=172, seq_len=64
    )
    return cfg, tokenizer, text_batches(text, tokenizer, cfg.seq_len, batch, seed)


TASKS = {
    "induction": Task(
        "a few random letters, then a segment of distinct letters written again and again: the model learns "
        "to find the current letter earlier and copy what came after it (an induction head)",
        ("xkqvbmxkqvbmxkqvbmxkqvbm", "thequickfoxthequickfoxthequick"),
        _induction,
    ),
    "text": Task(
        "character-level model of the project's small corpus of simple sentences",
        ("the cat sat on the mat.", "the dog sat on the log. the cat saw the dog."),
        _text,
    ),
}
