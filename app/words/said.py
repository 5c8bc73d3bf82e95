"""A sentence of the catalogue that travels as text: `Said("error-…", field="seq_len", most=64)`
is a str (its English, so logs, programs and the tests that pin a message read it as before) that
keeps its message id and named values, and reads in another language through `.in_(lang)`. The
4xx answers (app/errors.py's SpecError, an HTTPException's detail) carry one, and app.main's error
handlers render it in the request's language (app/words/choice.py), so a page shows its refusal
in its own language while `loc` and `type` stay the same for programs.

A value may itself be language-dependent (anything with `.in_(lang)`: another Said, a Grouped
number): it is rendered in the same language as the sentence around it.
"""

from __future__ import annotations

from app import words
from app.words.numbers import group_separator, with_separator


def _values_in(values: dict, lang: str) -> dict:
    return {name: value.in_(lang) if hasattr(value, "in_") else value for name, value in values.items()}


class Said(str):
    """A catalogue message with its values, read as its English text until asked for another language."""

    message_id: str
    values: dict

    def __new__(cls, message_id: str, **values):
        self = super().__new__(cls, words.t(words.DEFAULT, message_id, **_values_in(values, words.DEFAULT)))
        self.message_id = message_id
        self.values = values
        return self

    def in_(self, lang: str) -> str:
        return words.t(lang, self.message_id, **_values_in(self.values, lang))

    def __reduce__(self):  # a worker process raises it, the server renders it: it crosses as its id and values
        return _said, (self.message_id, self.values)


def _said(message_id: str, values: dict) -> Said:
    return Said(message_id, **values)


class Grouped(int):
    """A large count as a sentence quotes it, its thousands grouped the language's way
    ("1,234,567" in English, "1 234 567" in Russian): English's own messages grouped them
    before the words layer, and a catalogue number is never grouped (app/words/numbers.py)."""

    def __str__(self) -> str:
        return self.in_(words.DEFAULT)

    def in_(self, lang: str) -> str:
        return f"{int(self):,}".replace(",", group_separator(lang))


def in_language(text, lang: str):
    """`text` in `lang` if it is a Said (or holds them: a list of error dicts), else as it is."""
    if isinstance(text, Said):
        return text.in_(lang)
    if isinstance(text, list):
        return [in_language(item, lang) for item in text]
    if isinstance(text, dict):
        return {key: in_language(value, lang) for key, value in text.items()}
    return text


class Fixed(float):
    """A number with exactly `places` decimals in the language's way ("0.05", in Russian "0,05")."""

    def __new__(cls, value: float, places: int):
        self = super().__new__(cls, value)
        self.places = places
        return self

    def __str__(self) -> str:
        return self.in_(words.DEFAULT)

    def in_(self, lang: str) -> str:
        return with_separator(f"{float(self):.{self.places}f}", lang)

    def __reduce__(self):
        return Fixed, (float(self), self.places)


class Short(float):
    """A setting's number as Python's "g" writes it ("30", "2.5", "1e-05"), with the language's decimal mark."""

    def __str__(self) -> str:
        return self.in_(words.DEFAULT)

    def in_(self, lang: str) -> str:
        return with_separator(f"{float(self):g}", lang)


def said_of(exc: Exception) -> str:
    """An exception's message, kept a Said when it was raised with one (str(exc) would read its English)."""
    return exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], Said) else str(exc)
