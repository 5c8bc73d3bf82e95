"""Byte-level BPE (GPT-2 style) built from a GGUF file's own metadata, run by the `tokenizers`
library: the vocabulary (`tokenizer.ggml.tokens`), the merges (`tokenizer.ggml.merges`), which
tokens are special (`tokenizer.ggml.token_type`) and how text is split before merging
(`tokenizer.ggml.pre`). No tokenizer.json is needed: the .gguf is the whole model.

Byte-level BPE spells every byte as one printable character (the GPT-2 table below: a space is
"Ġ", a newline "Ċ"), so a token's *text* is its spelling mapped back to bytes; `pieces` gives it.
"""

from __future__ import annotations

from functools import cached_property

from xt_core.text.byte_char import VISIBLE_WHITESPACE, check_ids

# tokenizer.ggml.token_type values (llama.cpp's llama_token_type)
CONTROL = 3  # <|im_start|>, <|endoftext|>: matched whole in text, special
USER_DEFINED = 4  # matched whole in text, not special


def _byte_alphabet() -> dict[int, str]:
    """GPT-2's byte -> character table: printable Latin-1 bytes stand for themselves, the other
    68 (controls, space, 0x7f-0xa0, soft hyphen) take the characters from U+0100 on, in order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    table = {b: chr(b) for b in printable}
    for offset, b in enumerate(b for b in range(256) if b not in table):
        table[b] = chr(256 + offset)
    return table


BYTE_TO_CHAR = _byte_alphabet()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


def _gpt2_split():
    """GPT-2's split regex (contractions, letters, digits, punctuation, spaces) in ByteLevel."""
    from tokenizers import pre_tokenizers

    return pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)


def _digits_then_gpt2_split():
    """SmolLM's vocabulary was learned on digits cut one by one: each digit alone, then GPT-2's split."""
    from tokenizers import pre_tokenizers

    return pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), _gpt2_split()])


# Qwen2's split (llama.cpp's "qwen2" pre-tokenizer; transformers' tokenization_qwen2.PRETOKENIZE_REGEX,
# tests/core/test_bpe.py compares them): GPT-2's, but each digit alone, a letter run taking one
# non-letter before it, and newlines kept with the punctuation or spaces before them.
QWEN2_SPLIT = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""


def _qwen2_split():
    """Qwen2's regex, then byte-level without GPT-2's own regex."""
    from tokenizers import Regex, pre_tokenizers

    split = pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated")
    return pre_tokenizers.Sequence([split, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


# How text is cut before merging: a row per value of a GGUF's `tokenizer.ggml.pre` (llama.cpp's
# names; its llama-vocab.cpp gives each value's regexes), each making the `tokenizers` library's
# pre-tokenizer. A row is added with a test against the real tokenizer's ids (tests/core/test_bpe.py).
PRE_TOKENIZERS = {
    "default": _gpt2_split,
    "gpt-2": _gpt2_split,
    "smollm": _digits_then_gpt2_split,
    "qwen2": _qwen2_split,  # Qwen2, Qwen2.5, Qwen3
}


def _pre_tokenizer(pre: str):
    """The pre-tokenizer of a `tokenizer.ggml.pre` value; ValueError naming the known ones."""
    if pre not in PRE_TOKENIZERS:
        known = ", ".join(f'"{name}"' for name in PRE_TOKENIZERS)
        raise ValueError(f"tokenizer.ggml.pre = {pre!r} is not supported (known: {known})")
    return PRE_TOKENIZERS[pre]()


def _spelled(token: str) -> str:
    """A vocabulary entry in the byte alphabet (files store user-defined tokens as plain text)."""
    if all(c in CHAR_TO_BYTE for c in token):
        return token
    return "".join(BYTE_TO_CHAR[b] for b in token.encode("utf-8"))


def _field(fields, key: str, required: bool = True):
    if key not in fields:
        if required:
            raise ValueError(f"metadata {key} is missing: the tokenizer needs it")
        return None
    return fields[key].contents()


def build_backend(tokens: list[str], merges: list[str], token_types: list[int] | None, pre: str, bos: int | None):
    """The `tokenizers.Tokenizer` for this vocabulary; `bos` is prepended to every encoding when given."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, processors

    vocab: dict[str, int] = {}
    for i, token in enumerate(tokens):
        spelled = _spelled(token)
        if spelled in vocab:
            raise ValueError(f"tokenizer.ggml.tokens holds {token!r} twice (ids {vocab[spelled]} and {i})")
        vocab[spelled] = i
    pairs = []
    for i, merge in enumerate(merges):
        parts = merge.split(" ")
        if len(parts) != 2:
            raise ValueError(f"tokenizer.ggml.merges[{i}] = {merge!r} is not two tokens separated by a space")
        pairs.append((parts[0], parts[1]))
    backend = Tokenizer(models.BPE(vocab=vocab, merges=pairs, fuse_unk=False, byte_fallback=False))
    backend.pre_tokenizer = _pre_tokenizer(pre)
    backend.decoder = decoders.ByteLevel()
    kinds = token_types or [1] * len(tokens)  # 1: a normal token
    backend.add_special_tokens(
        [AddedToken(t, special=True, normalized=False) for t, k in zip(tokens, kinds, strict=True) if k == CONTROL]
    )
    backend.add_tokens(
        [
            AddedToken(t, special=False, normalized=False)
            for t, k in zip(tokens, kinds, strict=True)
            if k == USER_DEFINED
        ]
    )
    if bos is not None:
        name = tokens[bos]
        backend.post_processor = processors.TemplateProcessing(single=f"{name} $A", special_tokens=[(name, bos)])
    return backend


class BPETokenizer:
    """encode / decode / pieces over a `tokenizers.Tokenizer`; serializes as its JSON."""

    name = "bpe"

    def __init__(self, backend):
        self.backend = backend
        self._decoded: dict[int, str] = {}  # token id -> its text, filled as tokens are labelled

    @classmethod
    def from_gguf_fields(cls, fields) -> BPETokenizer:
        """From a GGUFReader's fields; ValueError names the key that is missing or unsupported."""
        model = _field(fields, "tokenizer.ggml.model")
        if model != "gpt2":
            raise ValueError(f"tokenizer.ggml.model = {model!r} is not supported: only byte-level BPE ('gpt2')")
        tokens = _field(fields, "tokenizer.ggml.tokens")
        merges = _field(fields, "tokenizer.ggml.merges")
        token_types = _field(fields, "tokenizer.ggml.token_type", required=False)
        pre = _field(fields, "tokenizer.ggml.pre", required=False) or "default"
        if _field(fields, "tokenizer.ggml.add_eos_token", required=False):
            raise ValueError("tokenizer.ggml.add_eos_token = True is not supported")
        bos = None
        if _field(fields, "tokenizer.ggml.add_bos_token", required=False):
            bos = _field(fields, "tokenizer.ggml.bos_token_id")
            if not 0 <= bos < len(tokens):
                raise ValueError(f"tokenizer.ggml.bos_token_id = {bos} is outside the {len(tokens)} tokens")
        if token_types is not None and len(token_types) != len(tokens):
            raise ValueError(f"tokenizer.ggml.token_type has {len(token_types)} entries for {len(tokens)} tokens")
        return cls(build_backend(tokens, merges, token_types, pre, bos))

    def to_dict(self) -> dict:
        return {"name": self.name, "tokenizer_json": self.backend.to_str()}

    @classmethod
    def from_dict(cls, data: dict) -> BPETokenizer:
        from tokenizers import Tokenizer

        return cls(Tokenizer.from_str(data["tokenizer_json"]))

    @cached_property
    def vocab_size(self) -> int:
        return self.backend.get_vocab_size(with_added_tokens=True)

    @cached_property
    def max_token_chars(self) -> int:
        """The most characters of text one token covers: a byte-level token is written one
        character a byte, and a character is at least one byte (SmolLM2's: 81). A text of n
        characters gives at least n / max_token_chars tokens, known before it is tokenized."""
        return max(map(len, self.backend.get_vocab(with_added_tokens=True)), default=1)

    def encode(self, text: str) -> list[int]:
        if not isinstance(text, str):
            raise ValueError(f"text must be a string, got {type(text).__name__}")
        return list(self.backend.encode(text).ids)

    def decode(self, ids) -> str:
        return self.backend.decode(check_ids(ids, self.vocab_size), skip_special_tokens=False)

    @cached_property
    def _added(self) -> dict[int, str]:
        return {i: t.content for i, t in self.backend.get_added_tokens_decoder().items()}

    def _text(self, token_id: int) -> str:
        """A token's text: a special or added token as written, another's bytes decoded (a token
        holding part of a UTF-8 character shows its bytes as \\xNN). Decoded when first asked:
        a trace labels its few dozen tokens, not the 49,152 of the vocabulary (0.7 s)."""
        text = self._decoded.get(token_id)
        if text is None:
            text = self._added.get(token_id)
            if text is None:
                token = self.backend.id_to_token(token_id) or ""
                raw = bytes(CHAR_TO_BYTE[c] for c in token if c in CHAR_TO_BYTE)
                text = raw.decode("utf-8", errors="backslashreplace")
            self._decoded[token_id] = text  # a dict's item assignment is atomic: threads may share it
        return text

    def pieces(self, ids) -> list[str]:
        """The text of each token, e.g. [" The", " capital"] (a leading space is a real space)."""
        return [self._text(i) for i in check_ids(ids, self.vocab_size)]

    def token_label(self, token_id: int) -> str:
        """A token's text with whitespace drawn visibly ("␣Paris", "⏎")."""
        text = self.pieces([token_id])[0]
        return "".join(VISIBLE_WHITESPACE.get(c, c) for c in text) or "∅"
