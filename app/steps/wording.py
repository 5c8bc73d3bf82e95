"""How the step views write their words (app/words): a message of the steps' catalogues
(app/words/locales/<lang>/steps*.ftl), and a number written the way today's English prints it
(a Python format spec: "{:.4f}", "{:.3g}", "{:.1e}") with the language's decimal separator, so the
English stays byte for byte what it was and the Russian reads "0,0625"."""

from __future__ import annotations

from app.words import bundle, t
from app.words.numbers import DECIMAL_SEPARATOR

__all__ = ["has", "num", "t"]


def num(value: float, spec: str, lang: str) -> str:
    """`value` formatted by `spec` ("{:.3g}"'s ".3g"), its decimal point the language's."""
    return format(value, spec).replace(".", DECIMAL_SEPARATOR.get(lang, "."))


def has(lang: str, message_id: str) -> bool:
    """Whether the language's catalogue holds `message_id`."""
    return bundle(lang).has_message(message_id)
