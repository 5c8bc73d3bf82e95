"""How the step views write their words (app/words): a message of the steps' catalogues
(app/words/locales/<lang>/steps*.ftl), and a number written the way today's English prints it
(a Python format spec: "{:.4f}", "{:.3g}", "{:.1e}") with the language's decimal separator, so the
English stays byte for byte what it was and the Russian reads "0,0625"."""

from __future__ import annotations

from app.words import t
from app.words.numbers import DECIMAL_SEPARATOR

__all__ = ["num", "numbers_note", "t"]


def num(value: float, spec: str, lang: str) -> str:
    """`value` formatted by `spec` ("{:.3g}"'s ".3g"), its decimal point the language's."""
    return format(value, spec).replace(".", DECIMAL_SEPARATOR.get(lang, "."))


def numbers_note(shown: tuple[int, int], full: tuple[int, int], lang: str) -> str | None:
    """What a 'numbers' table of `shown` rows × columns leaves out of `full` (None: nothing), in
    words that name the table, never the plot: "Numbers: the first 64 of 92 rows."."""
    values = {"rows": shown[0], "of_rows": full[0], "columns": shown[1], "of_columns": full[1]}
    rows_cut, columns_cut = shown[0] < full[0], shown[1] < full[1]
    if rows_cut and columns_cut:
        return t(lang, "step-numbers-rows-columns", **values)
    if rows_cut:
        return t(lang, "step-numbers-rows", **values)
    return t(lang, "step-numbers-columns", **values) if columns_cut else None
