"""Byte-level BPE from a GGUF's own metadata: the same ids as transformers' tokenizer built from
the same file, round trips, each token's text, serialization, and refusals naming the key."""

import pytest
from gguf import GGUFReader

from tests.helpers.env import required
from tests.helpers.gguf_files import TINY_MERGES, tokenizer_kv, write_gguf
from xt_core.checkpoint.gguf_file import open_reader
from xt_core.text.bpe import BYTE_TO_CHAR, PRE_TOKENIZERS, BPETokenizer


def _from_gguf(path) -> BPETokenizer:
    """The tokenizer a .gguf's metadata describes, read as import_gguf reads it."""
    return BPETokenizer.from_gguf_fields(open_reader(path).fields)


TEXTS = [
    "the world",
    "  two leading spaces and trailing   ",
    "digits 12 and 2024, 3.14!!",
    "punctuation: (a), [b]; {c}... ¿qué? ¡sí! don't",
    "accents: café naïve Ørsted",
    "emoji 🎉 and 👍🏽",
    "new\nlines\n\n\tand tabs\r\n",
    "special <|endoftext|> token",
    "",
]


def _file(tmp_path, **kw):
    return write_gguf(tmp_path / "tok.gguf", {**tokenizer_kv(**kw), "llama.block_count": 1}, {})


def _tokenizer(tmp_path, **kw) -> BPETokenizer:
    return BPETokenizer.from_gguf_fields(GGUFReader(_file(tmp_path, **kw)).fields)


def test_byte_alphabet_is_gpt2s():
    assert len(set(BYTE_TO_CHAR.values())) == 256
    assert BYTE_TO_CHAR[ord(" ")] == "Ġ" and BYTE_TO_CHAR[ord("\n")] == "Ċ" and BYTE_TO_CHAR[ord("a")] == "a"


@pytest.mark.parametrize("pre", sorted(PRE_TOKENIZERS))
def test_ids_match_transformers_tokenizer_from_the_same_file(tmp_path, pre):
    """Every row of the pre-tokenizer table. The tiny vocabulary has no digit merges, so GPT-2's and
    SmolLM's splits must agree too (test_smollm_splits_digits_one_by_one tells them apart)."""
    try:
        from transformers import AutoTokenizer
    except ImportError:
        if required("XT_REQUIRE_TORCH"):
            raise
        pytest.skip("transformers is not installed (the `reference` extra)")
    merges = [m for m in TINY_MERGES if not any(c.isdigit() for c in "".join(m))]
    path = _file(tmp_path, pre=pre, merges=merges)
    theirs = AutoTokenizer.from_pretrained(str(tmp_path), gguf_file=path.name)
    ours = _from_gguf(path)
    assert ours.vocab_size == len(theirs)
    for text in TEXTS:
        assert ours.encode(text) == theirs(text)["input_ids"], text


@pytest.mark.parametrize("text", TEXTS)
def test_decode_round_trips_and_pieces_are_the_text(tmp_path, text):
    tok = _tokenizer(tmp_path)
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    pieces = tok.pieces(ids)
    assert len(pieces) == len(ids)
    for i, piece in zip(ids, pieces, strict=True):
        alone = tok.decode([i])
        if "\ufffd" not in alone:  # a token of whole characters: its text; else its bytes, \xNN
            assert piece == alone
    if "\\x" not in "".join(pieces):
        assert "".join(pieces) == text


def test_merges_apply_and_pieces_keep_the_leading_space(tmp_path):
    tok = _tokenizer(tmp_path)
    ids = tok.encode("the world")
    assert tok.pieces(ids) == ["t", "he", " world"]
    assert [tok.token_label(i) for i in ids] == ["t", "he", "␣world"]
    assert tok.token_label(tok.encode("\n")[0]) == "⏎"


def test_partial_utf8_tokens_show_their_bytes(tmp_path):
    tok = _tokenizer(tmp_path)
    pieces = tok.pieces(tok.encode("🎉"))
    assert "".join(pieces) == "\\xf0\\x9f\\x8e\\x89" and len(pieces) == 3  # "ð Ł" merged: f0 9f


def test_control_tokens_stay_whole(tmp_path):
    tok = _tokenizer(tmp_path)
    end = tok.vocab_size - 1
    assert tok.encode("a<|endoftext|>b") == [ord("a"), end, ord("b")]
    assert tok.pieces([end]) == ["<|endoftext|>"]


def test_smollm_splits_digits_one_by_one(tmp_path):
    """llama.cpp's 'smollm' pre-tokenizer cuts every digit apart before merging, so a "1 2"
    merge never applies; GPT-2's split keeps "12" together and merges it."""
    gpt2, smollm = _tokenizer(tmp_path, pre="gpt-2"), _tokenizer(tmp_path / "..", pre="smollm")
    assert gpt2.pieces(gpt2.encode("12")) == ["12"]
    assert smollm.pieces(smollm.encode("12")) == ["1", "2"]
    assert smollm.pieces(smollm.encode("x 12")) == ["x", " ", "1", "2"]


def test_qwen2_splits_as_transformers_qwen2_tokenizer_does(tmp_path):
    """llama.cpp's 'qwen2' row is transformers' Qwen2 regex (its Qwen2Tokenizer's pre-tokenizer, run
    by the `tokenizers` library) on every text: the same pieces, digits one by one; and on the tiny
    vocabulary it differs from GPT-2's split where the regexes do ("12", "x!y")."""
    try:
        from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX, Qwen2Tokenizer
    except ImportError:
        if required("XT_REQUIRE_TORCH"):
            raise
        pytest.skip("transformers is not installed (the `reference` extra)")
    from xt_core.text.bpe import QWEN2_SPLIT

    assert QWEN2_SPLIT == PRETOKENIZE_REGEX
    theirs = Qwen2Tokenizer(vocab={"a": 0}, merges=[]).backend_tokenizer.pre_tokenizer
    ours = PRE_TOKENIZERS["qwen2"]()
    for text in TEXTS + ["x!y 2024 a\n\n b", "I'M 3rd"]:
        assert ours.pre_tokenize_str(text) == theirs.pre_tokenize_str(text), text
    qwen2, gpt2 = _tokenizer(tmp_path, pre="qwen2"), _tokenizer(tmp_path / "..", pre="gpt-2")
    assert qwen2.pieces(qwen2.encode("12")) == ["1", "2"] and gpt2.pieces(gpt2.encode("12")) == ["12"]


def test_serialization_round_trips(tmp_path):
    tok = _tokenizer(tmp_path)
    again = BPETokenizer.from_dict(tok.to_dict())
    assert again.name == "bpe" and again.vocab_size == tok.vocab_size
    for text in TEXTS:
        assert again.encode(text) == tok.encode(text)


def test_add_bos_token_prepends_it(tmp_path):
    kv = {**tokenizer_kv(), "tokenizer.ggml.add_bos_token": True}
    path = write_gguf(tmp_path / "bos.gguf", kv, {})
    tok = _from_gguf(path)
    assert tok.encode("ab") == [kv["tokenizer.ggml.bos_token_id"], ord("a"), ord("b")]


def test_bad_input_is_named(tmp_path):
    tok = _tokenizer(tmp_path)
    with pytest.raises(ValueError, match="text must be a string"):
        tok.encode(b"bytes")
    with pytest.raises(ValueError, match=rf"token id {tok.vocab_size} at position 1"):
        tok.decode([1, tok.vocab_size])
    with pytest.raises(ValueError, match="token id -1 at position 0"):
        tok.pieces([-1])


@pytest.mark.parametrize(
    "change,message",
    [
        ({"tokenizer.ggml.model": "llama"}, "tokenizer.ggml.model = 'llama' is not supported"),
        ({"tokenizer.ggml.pre": "qwen35"}, "tokenizer.ggml.pre = 'qwen35' is not supported"),
        ({"tokenizer.ggml.merges": ["a b c"]}, r"tokenizer.ggml.merges\[0\] = 'a b c' is not two tokens"),
        ({"tokenizer.ggml.token_type": [1, 1]}, "token_type has 2 entries for 280 tokens"),
        ({"tokenizer.ggml.add_eos_token": True}, "add_eos_token = True is not supported"),
        ({"tokenizer.ggml.add_bos_token": True, "tokenizer.ggml.bos_token_id": 999}, "bos_token_id = 999 is outside"),
    ],
)
def test_refusals_name_the_key(tmp_path, change, message):
    path = write_gguf(tmp_path / "bad.gguf", {**tokenizer_kv(), **change}, {})
    with pytest.raises(ValueError, match=message):
        _from_gguf(path)


def test_duplicate_tokens_are_refused(tmp_path):
    kv = tokenizer_kv()
    kv["tokenizer.ggml.tokens"] = [*kv["tokenizer.ggml.tokens"][:-1], "a"]
    with pytest.raises(ValueError, match=r"holds 'a' twice \(ids 97 and 279\)"):
        _from_gguf(write_gguf(tmp_path / "dup.gguf", kv, {}))


def test_missing_key_is_named(tmp_path):
    kv = {k: v for k, v in tokenizer_kv().items() if k != "tokenizer.ggml.tokens"}
    with pytest.raises(ValueError, match="metadata tokenizer.ggml.tokens is missing"):
        _from_gguf(write_gguf(tmp_path / "none.gguf", kv, {}))
