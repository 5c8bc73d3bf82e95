"""Generating from a model and its loss on held-out text; the shipped text model against both."""

from pathlib import Path

import numpy as np
import pytest

import xt_core
from tests.helpers.env import KERNEL_ROUNDOFF
from xt_core.checkpoint import load
from xt_core.lab.generation import MAX_NEW_TOKENS, generate, heldout_loss
from xt_core.lab.tasks import TASKS, corpus_split
from xt_core.text.byte_char import CharTokenizer
from xt_core.training.loop import forward_loss

CFG = xt_core.Config(vocab_size=7, n_layer=1, n_head=2, n_kv_head=1, n_embd=8, ffn_hidden=12, seq_len=6)
TOKENIZER = CharTokenizer("abcdefg")
SHIPPED = Path(xt_core.__file__).resolve().parent / "checkpoint" / "demos" / "text.safetensors"


@pytest.fixture(scope="module")
def params():
    return xt_core.init_params(CFG, seed=2, dtype=np.float64)


def test_greedy_generation_appends_the_likeliest_token_of_a_sliding_window(params):
    text = generate(CFG, params, TOKENIZER, "abc", n=6)
    assert text.startswith("abc") and len(text) == 9
    ids = TOKENIZER.encode(text)
    for end in range(3, 9):  # token `end` is the argmax after the last seq_len tokens before it
        window = np.asarray(ids[max(0, end - CFG.seq_len) : end])
        trace = xt_core.forward_backward(CFG, params, window, window)
        assert ids[end] == int(np.argmax(trace["logits"][0, -1]))
    assert generate(CFG, params, TOKENIZER, "abc", n=0) == "abc"


def test_sampling_is_seeded(params):
    one = generate(CFG, params, TOKENIZER, "a", n=30, temperature=1.0, seed=1)
    assert one == generate(CFG, params, TOKENIZER, "a", n=30, temperature=1.0, seed=1)
    others = {generate(CFG, params, TOKENIZER, "a", n=30, temperature=1.0, seed=s) for s in range(2, 6)}
    assert len(others | {one}) > 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": -1}, r"n must be an integer in \[0, 4096\]"),
        ({"n": MAX_NEW_TOKENS + 1}, "n must be an integer"),
        ({"n": 2, "temperature": -0.5}, "temperature must be a number"),
        ({"n": 2, "prompt": ""}, "at least one token"),
        ({"n": 2, "prompt": "xyz"}, "'x' at position 0"),
    ],
)
def test_generation_rejects_bad_input(params, kwargs, message):
    kwargs = {"prompt": "ab", **kwargs}
    with pytest.raises(ValueError, match=message):
        generate(CFG, params, TOKENIZER, **kwargs)


def test_heldout_loss_predicts_every_token_once(params):
    text = "abcdefgabcdefgabcd"  # 18 tokens: windows of 7 overlapping by one -> 6 + 6 + 5 predictions
    ids = np.asarray(TOKENIZER.encode(text))
    windows = [ids[0:7], ids[6:13], ids[12:18]]
    expected = sum(forward_loss(CFG, params, w[:-1], w[1:]) * (w.size - 1) for w in windows) / 17
    assert heldout_loss(CFG, params, TOKENIZER, text) == pytest.approx(expected, rel=1e-12)
    assert heldout_loss(CFG, params, TOKENIZER, text[:7]) == pytest.approx(
        forward_loss(CFG, params, ids[:6], ids[1:7]), rel=1e-12
    )
    with pytest.raises(ValueError, match="at least 2 tokens"):
        heldout_loss(CFG, params, TOKENIZER, "a")


def test_text_task_trains_on_the_training_lines_only():
    train_text, held_text = corpus_split()
    held_lines = held_text.splitlines()
    assert len(held_lines) == 5 and len(train_text.splitlines()) == 30
    assert not set(held_lines) & set(train_text.splitlines())
    cfg, tokenizer, batches = TASKS["text"].setup(batch=64, seed=0)
    inputs, targets = next(batches)
    for row in np.concatenate([inputs, targets[:, -1:]], axis=1):
        assert tokenizer.decode(row) in train_text
    assert tokenizer.encode(held_text)  # the alphabet covers the held-out lines


@pytest.fixture(scope="module")
def shipped_text():
    return load(SHIPPED)


def test_shipped_text_model_reports_its_heldout_loss_and_sample(shipped_text):
    cfg, params, tokenizer, meta = shipped_text.cfg, shipped_text.params, shipped_text.tokenizer, shipped_text.meta
    train_text, held_text = corpus_split()
    held = heldout_loss(cfg, params, tokenizer, held_text)
    # measured when it was trained: the same numbers now, to float32 round-off
    assert meta["heldout_loss"] == pytest.approx(held, rel=KERNEL_ROUNDOFF)
    assert meta["train_loss"] == pytest.approx(heldout_loss(cfg, params, tokenizer, train_text), rel=KERNEL_ROUNDOFF)
    assert meta["train_loss"] < held < 0.6 * np.log(cfg.vocab_size)  # well below guessing on unseen lines
    prompt, sample = meta["sample_prompt"], meta["sample"]
    assert sample.startswith(prompt) and len(sample) > len(prompt) + 40
    assert sample == generate(cfg, params, tokenizer, prompt, len(sample) - len(prompt))  # greedy
