"""How a number reads inside a sentence: the one formatter of the server, mirrored line for line
by static/js/lib/numbers.js (tests/app/words/test_numbers.py runs both on the same values).

Fluent would format a number by itself, through Babel in Python and Intl.NumberFormat in the
browser, and the two disagree (grouping, rounding, exponents). So every number entering a message
is formatted here instead:
* an integral value: its digits, no grouping ("1024", "-3"): the way xt's English has always
  printed counts, sizes and token ids;
* any other: rounded to SIGNIFICANT significant digits, half away from zero on the exact binary
  value (what JS's toFixed does), in fixed notation, trailing zeros dropped, with the language's
  decimal separator ("0.0625", in Russian "0,0625");
* with `places` given: exactly that many digits after the point, zeros kept (a score "0.80").
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache

SIGNIFICANT = 4
MAX_DECIMALS = 20  # JS's toFixed takes at most 100; beyond 1e-16 xt says nothing in words


@lru_cache(maxsize=16)
def decimal_separator(lang: str) -> str:
    """The mark before a number's decimals in `lang`: its catalogue's `number-decimal-separator`
    (static/js/lib/words.js hands the page's formatter the same message)."""
    from app import words  # the words layer formats its numbers with this module

    return words.t(lang, "number-decimal-separator")


@lru_cache(maxsize=16)
def group_separator(lang: str) -> str:
    """The mark between groups of three digits of a large count in `lang` (app.words.said.Grouped)."""
    from app import words

    return words.t(lang, "number-group-separator")


def with_separator(text: str, lang: str) -> str:
    """A number already written with a point ("0.0625", f"{loss:.4g}") with `lang`'s decimal
    mark: the server's one copy of the page's withSeparator (static/js/lib/numbers.js)."""
    return text.replace(".", decimal_separator(lang))


def decimals(value: float) -> int:
    """The digits after the point that keep SIGNIFICANT significant ones. The exponent is read
    from the shortest round-trip text of the value (repr here, toExponential in JS: the same
    digits), never from a logarithm, whose last bit may differ between the two."""
    exponent = Decimal(repr(abs(value))).adjusted()
    return min(MAX_DECIMALS, max(0, SIGNIFICANT - 1 - exponent))


def format_number(value: int | float, lang: str, places: int | None = None) -> str:
    """`value` as a sentence in `lang` shows it; `places`: that many decimals, always."""
    if isinstance(value, bool):
        raise TypeError("a truth value is not a number in words")
    if not math.isfinite(value):
        return {math.inf: "∞", -math.inf: "−∞"}.get(value, "NaN")
    if places is None and float(value).is_integer():
        return str(int(value))
    fixed = places is not None
    places = decimals(value) if places is None else places
    text = f"{Decimal(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP):f}"
    if "." in text and not fixed:
        text = text.rstrip("0").rstrip(".")
    if text.startswith("-") and not text.strip("-0."):  # a tiny negative value rounded away
        text = text[1:]
    return text.replace(".", decimal_separator(lang))
