import pytest

from xt_core.text.byte_char import ByteTokenizer, CharTokenizer, make_tokenizer

TEXTS = ["hello world", "naïve café — ünïcödé ✓ 🧠", "line\nbreak\ttab", "<script>alert(1)</script>", "שלום"]


@pytest.mark.parametrize("text", TEXTS)
def test_byte_round_trip(text):
    tok = ByteTokenizer()
    ids = tok.encode(text)
    assert all(0 <= i < 256 for i in ids) and len(ids) == len(text.encode("utf-8"))
    assert tok.decode(ids) == text


@pytest.mark.parametrize("text", TEXTS)
def test_char_round_trip(text):
    tok = CharTokenizer.from_text(text)
    assert tok.vocab_size == len(set(text))
    assert tok.decode(tok.encode(text)) == text


def test_char_vocabulary_is_sorted_distinct():
    assert CharTokenizer.from_text("banana").chars == "abn"


def test_unknown_character_is_named_with_its_position():
    tok = CharTokenizer.from_text("abc")
    with pytest.raises(ValueError, match=r"'z' at position 2"):
        tok.encode("abz")


def test_decode_rejects_ids_out_of_range():
    with pytest.raises(ValueError, match=r"token id 3 at position 1"):
        CharTokenizer.from_text("abc").decode([0, 3])
    with pytest.raises(ValueError, match="256"):
        ByteTokenizer().decode([256])


def test_labels_are_printable():
    assert ByteTokenizer().token_label(ord(" ")) == "␣"
    assert ByteTokenizer().token_label(0xC3) == "\\xc3"
    assert CharTokenizer.from_text("a\n").token_label(0) == "⏎"


def test_factory():
    assert make_tokenizer("byte").vocab_size == 256
    assert make_tokenizer("char", "aab").vocab_size == 2
    with pytest.raises(ValueError, match="tokenizer"):
        make_tokenizer("bpe")
    with pytest.raises(ValueError, match="non-empty"):
        make_tokenizer("char", "")
