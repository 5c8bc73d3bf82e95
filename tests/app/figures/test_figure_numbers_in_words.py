"""The numbers the server writes into a figure's own words (an annotation, a hover's exact value)
carry the language's decimal mark, as its sentences do: Plotly's locale writes the axes', xt the
rest (app/words/numbers.py with_separator). English as before."""

from __future__ import annotations

import numpy as np
import pytest

from app.figures import basic, buglab, update


def annotations(figure) -> list[str]:
    return [note.text for note in figure.layout.annotations]


@pytest.mark.parametrize(
    ("lang", "quarter", "half", "sgd", "tiny"),
    [("en", "0.25", "0.5", "SGD lr = 0.1", "1.5e-07"), ("ru", "0,25", "0,5", "SGD lr = 0,1", "1,5e-07")],
)
def test_a_figures_own_numbers_read_in_the_pages_language(lang, quarter, half, sgd, tiny):
    bars = basic.bars([0.5, 0.0], ["a", "b"], title="t", value_name="v", mean=0.25, lang=lang)
    assert [text for text in annotations(bars) if quarter in text], annotations(bars)
    search = update.line_search([1e-3, 1e-2], [2.0, 1.9], [2.0, 1.8], 2.0, title="t", lr=0.1, lang=lang)
    assert sgd in annotations(search)
    ratio = update.parameter_bars([0.01, 0.02], ["w", "b"], title="t", value_name="v", reference=0.5, lang=lang)
    assert annotations(ratio) == [half]
    chart = buglab.check_errors_chart(
        np.array([1.5e-7, 0.25]), [True, False], ["a", "b"], ["forward", "backward"],
        tolerance=1e-6, first_failing=1, lang=lang,
    )  # fmt: skip
    assert [row[1] for row in chart.data[-1].customdata] == [tiny, quarter]
