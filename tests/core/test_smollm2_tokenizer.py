"""SmolLM2-135M's tokenizer as xt builds it from the .gguf's own metadata (`tokenizers`'
byte-level BPE) against transformers' tokenizer from the same file: the same ids on sentences
with spaces, digits, punctuation, accents, emoji, newlines and a special token, and decoding
back to the text. Only the file's header is read (no weight). Skips like
test_smollm2_reference.py; transformers' conversion of the file takes seconds."""

import pytest

from tests.helpers.env import required
from tests.helpers.real_model import require_smollm2, skip_or_fail, transformers_reads_gguf_quickly
from xt_core.checkpoint.gguf_file import read_gguf_header

pytestmark = [pytest.mark.torch, pytest.mark.long]  # the fetched real model: make test-long (tests/conftest.py)

GGUF = require_smollm2(allow_module_level=True)
TEXTS = [
    "The capital of France is Paris. The capital of Italy is Rome.",
    "Gradients flow backwards through every layer, one op at a time.",
    "Hello world, this  has two spaces.",
    "In 2024 there were 1,234,567 tokens (3.14%)!",
    "Punctuation: a-b; c/d? [e] {f} \"g\" 'h' — i…",
    "Accents: café, naïve, Ørsted, São Paulo, Zürich.",
    "Emoji: 🎉🚀 and 👍🏽 and ❤️",
    "New\nlines\n\n\tand tabs\r\nand <|im_start|> special",
]


def test_token_ids_match_transformers_tokenizer():
    try:
        from transformers import AutoTokenizer
    except ImportError:
        if required("XT_REQUIRE_TORCH"):
            raise
        skip_or_fail("transformers is not installed (pip install -e '.[reference]')")
    with transformers_reads_gguf_quickly():
        theirs = AutoTokenizer.from_pretrained(str(GGUF.parent), gguf_file=GGUF.name)
    ours = read_gguf_header(GGUF).tokenizer
    for text in TEXTS:
        ids = ours.encode(text)
        assert ids == theirs(text)["input_ids"], text
        assert ours.decode(ids) == text
    assert ours.pieces(ours.encode("The capital of Italy is"))[-3:] == [" of", " Italy", " is"]
