"""Tokenizers: byte-level (any UTF-8 text, vocab 256) and character-level (vocab = the
sorted distinct characters of a text). Both round-trip: decode(encode(s)) == s."""

from __future__ import annotations

from dataclasses import dataclass


class ByteTokenizer:
    """One token per UTF-8 byte; needs vocab_size >= 256."""

    name = "byte"
    vocab_size = 256
    max_token_chars = 1  # a character is one to four bytes: never fewer tokens than characters

    def encode(self, text: str) -> list[int]:
        if not isinstance(text, str):
            raise ValueError(f"text must be a string, got {type(text).__name__}")
        return list(text.encode("utf-8"))

    def decode(self, ids) -> str:
        return bytes(check_ids(ids, self.vocab_size)).decode("utf-8", errors="replace")

    def token_label(self, token_id: int) -> str:
        """A short printable label for one token (axis labels): a lone byte of a multi-byte
        character shows as its hex value."""
        if 33 <= token_id < 127:
            return chr(token_id)
        return VISIBLE_WHITESPACE.get(chr(token_id), f"\\x{token_id:02x}")

    def to_dict(self) -> dict:
        return {"name": self.name}


@dataclass(frozen=True)
class CharTokenizer:
    """One token per character of a fixed alphabet (the sorted distinct characters of a text)."""

    chars: str
    name = "char"
    max_token_chars = 1

    def __post_init__(self):
        if not self.chars:
            raise ValueError("a character tokenizer needs a non-empty alphabet")
        if len(set(self.chars)) != len(self.chars) or list(self.chars) != sorted(self.chars):
            raise ValueError("alphabet must be sorted distinct characters (use CharTokenizer.from_text)")

    @classmethod
    def from_text(cls, text: str) -> CharTokenizer:
        if not isinstance(text, str) or not text:
            raise ValueError("a character tokenizer is built from a non-empty text")
        return cls("".join(sorted(set(text))))

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    @property
    def _index(self) -> dict[str, int]:
        return {c: i for i, c in enumerate(self.chars)}

    def encode(self, text: str) -> list[int]:
        if not isinstance(text, str):
            raise ValueError(f"text must be a string, got {type(text).__name__}")
        index = self._index
        ids = []
        for position, char in enumerate(text):
            if char not in index:
                raise ValueError(f"character {char!r} at position {position} is not in the tokenizer's vocabulary")
            ids.append(index[char])
        return ids

    def decode(self, ids) -> str:
        return "".join(self.chars[i] for i in check_ids(ids, self.vocab_size))

    def token_label(self, token_id: int) -> str:
        char = self.chars[token_id]
        return VISIBLE_WHITESPACE.get(char, char)

    def to_dict(self) -> dict:
        return {"name": self.name, "chars": self.chars}


# whitespace drawn visibly in token labels (axis ticks): every tokenizer's token_label reads it
VISIBLE_WHITESPACE = {" ": "␣", "\n": "⏎", "\t": "⇥", "\r": "␍"}


def check_ids(ids, vocab_size: int) -> list[int]:
    """The ids as ints, each in [0, vocab_size): a ValueError names the first that is not."""
    out = []
    for position, i in enumerate(ids):
        if isinstance(i, bool) or not hasattr(i, "__index__") or not 0 <= int(i) < vocab_size:
            raise ValueError(f"token id {i!r} at position {position} is outside [0, {vocab_size})")
        out.append(int(i))
    return out


def make_tokenizer(name: str, text: str | None = None):
    """ "byte" or "char" (whose vocabulary is `text`'s sorted distinct characters)."""
    if name == "byte":
        return ByteTokenizer()
    if name == "char":
        return CharTokenizer.from_text(text or "")
    raise ValueError(f'tokenizer must be "byte" or "char", got {name!r}')
