import numpy as np
import pytest

from xt_core.lab.tasks import TASKS
from xt_core.text.byte_char import CharTokenizer
from xt_core.text.corpus import corpus_text, induction_batches, text_batches


def test_induction_repeats_a_segment_of_varying_length():
    inputs, targets = next(induction_batches(26, 32, 64, seed=1))
    assert inputs.shape == targets.shape == (64, 32)
    np.testing.assert_array_equal(inputs[:, 1:], targets[:, :-1])
    ids = np.concatenate([inputs, targets[:, -1:]], axis=1)
    periods = set()
    for row in ids:
        # the tail is periodic: row[i] == row[i - period] for the last 12 positions
        period = min(p for p in range(4, 13) if np.array_equal(row[-12:], row[-12 - p : 33 - p]))
        periods.add(period)
    assert len(periods) > 4
    again = next(induction_batches(26, 32, 64, seed=1))
    np.testing.assert_array_equal(again[0], inputs)


def test_text_windows_come_from_the_corpus():
    text = corpus_text()
    tok = CharTokenizer.from_text(text)
    inputs, targets = next(text_batches(text, tok, 16, 3, seed=0))
    for row_in, row_t in zip(inputs, targets, strict=True):
        assert tok.decode(row_in) in text and tok.decode(row_t) in text
    with pytest.raises(ValueError, match="need at least"):
        next(text_batches("abc", CharTokenizer.from_text("abc"), 16, 1, 0))


@pytest.mark.parametrize("name", sorted(TASKS))
def test_tasks_examples_fit_their_tokenizer(name):
    cfg, tokenizer, batches = TASKS[name].setup(batch=2, seed=0)
    for text in TASKS[name].examples:
        ids = tokenizer.encode(text)
        assert len(ids) - 1 <= cfg.seq_len and max(ids) < cfg.vocab_size
    inputs, _ = next(batches)
    assert inputs.shape == (2, cfg.seq_len)
