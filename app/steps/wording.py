"""How the step views write their words (app/words): a message of the steps' catalogues
(app/words/locales/<lang>/steps*.ftl), and a number written the way today's English prints it
(a Python format spec: "{:.4f}", "{:.3g}", "{:.1e}") with the language's decimal separator, so the
English stays byte for byte what it was and the Russian reads "0,0625"."""

from __future__ import annotations

from app.words import t
from app.words.numbers import with_separator

__all__ = ["cut_note", "num", "numbers_note", "t"]


def num(value: float, spec: str, lang: str) -> str:
    """`value` formatted by `spec` ("{:.3g}"'s ".3g"), its decimal point the language's."""
    return with_separator(format(value, spec), lang)


def cut_note(
    lang: str, shown: tuple[int, int], full: tuple[int, int], axes: tuple[str, str], messages: tuple
) -> str | None:
    """The message of what a table of `shown` (rows, columns) leaves out of `full`, by which
    axes are cut: messages (both, rows only, columns only, none: None for no note), each given
    $<axis> and $of_<axis> for both `axes` ("rows", "columns")."""
    values = {
        name: n for axis, a, b in zip(axes, shown, full, strict=True) for name, n in ((axis, a), (f"of_{axis}", b))
    }
    both, rows, columns, neither = messages
    rows_cut, columns_cut = shown[0] < full[0], shown[1] < full[1]
    message = (both if columns_cut else rows) if rows_cut else (columns if columns_cut else neither)
    return t(lang, message, **values) if message else None


def numbers_note(shown: tuple[int, int], full: tuple[int, int], lang: str) -> str | None:
    """What a 'numbers' table of `shown` rows × columns leaves out of `full` (None: nothing), in
    words that name the table, never the plot: "Numbers: the first 64 of 92 rows."."""
    messages = ("step-numbers-rows-columns", "step-numbers-rows", "step-numbers-columns", None)
    return cut_note(lang, shown, full, ("rows", "columns"), messages)
