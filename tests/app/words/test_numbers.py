"""Numbers in words are formatted in one way on the server (app/words/numbers.py) and in the page
(static/js/lib/numbers.js): node runs the page's copy on the same values, and the two agree."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from app import words
from app.words.numbers import format_number
from tests.helpers.env import required
from tests.test_code_shape import ROOT

VALUES = [
    0, 1, -1, 7, 1024, 49152, 10**15, 2**53, 1e21, 1e22, -0.0, 0.1, 0.001, 0.0003, 1e-5, 1e-12, 3.14159, 2.5,
    1.0625, -1.0625, 0.99995, 9.9995, 1 / 3, 2 / 3, 123456.789, 0.00012345, 5e-324, -5e-324, 1.5, 0.875,
    0.125, 0.03125, 6.02214076e23, 1e-300, float("inf"), float("-inf"), float("nan"),
]  # fmt: skip
PLACES = [(0.875, 2), (0.8, 2), (1.005, 2), (2.5, 0), (3.5, 0), (-0.004, 2), (8.0, 0), (0.125, 2)]


def node() -> str:
    found = shutil.which("node")
    if found is None:
        if required("XT_REQUIRE_BROWSER"):
            pytest.fail("node is missing: the page's number formatter cannot be compared")
        pytest.skip("node is missing")
    return found


def js_formats(cases: list) -> list[str]:
    # The page takes each language's decimal mark from its catalogue, as lib/words.js does.
    separators = {lang: words.t(lang, "number-decimal-separator") for lang in words.LANGUAGES}
    script = f"""
        import {{ formatNumber, useDecimalSeparator }} from {json.dumps(str(ROOT / "static/js/lib/numbers.js"))};
        for (const [lang, mark] of Object.entries({json.dumps(separators)})) useDecimalSeparator(lang, mark);
        const cases = JSON.parse(process.argv[1]).map(([v, lang, places]) => [v === "inf" ? Infinity : v === "-inf" ? -Infinity : v === "nan" ? NaN : v, lang, places]);
        console.log(JSON.stringify(cases.map(([v, lang, places]) => formatNumber(v, lang, places))));
    """
    encoded = json.dumps(
        [
            [("inf" if v == float("inf") else "-inf" if v == float("-inf") else "nan" if v != v else v), lang, places]
            for v, lang, places in cases
        ]
    )
    out = subprocess.run(
        [node(), "--input-type=module", "-e", script, encoded], capture_output=True, text=True, check=True, timeout=30
    )
    return json.loads(out.stdout)


def test_the_server_and_the_page_format_numbers_alike():
    cases = [(v, lang, None) for v in VALUES for lang in ("en", "ru")] + [
        (v, lang, p) for v, p in PLACES for lang in ("en", "ru")
    ]
    python = [format_number(v, lang, places) for v, lang, places in cases]
    assert js_formats(cases) == python


def test_how_numbers_read():
    assert [format_number(v, "en") for v in (1024, 0.0003, 1.0625, 1 / 3)] == ["1024", "0.0003", "1.063", "0.3333"]
    assert [format_number(v, "ru") for v in (1024, 0.0003, 2.5)] == ["1024", "0,0003", "2,5"]
    assert format_number(0.8, "ru", 2) == "0,80"
    with pytest.raises(TypeError):
        format_number(True, "en")


def js_table_numbers(values: list[float]) -> dict[str, list[list[str]]]:
    """The page's table cells (compactNumber) and error sizes (errorSize) of `values`, by language."""
    separators = {lang: words.t(lang, "number-decimal-separator") for lang in words.LANGUAGES}
    script = f"""
        import {{ compactNumber, errorSize, useDecimalSeparator }} from {json.dumps(str(ROOT / "static/js/lib/numbers.js"))};
        const marks = {json.dumps(separators)};
        for (const [lang, mark] of Object.entries(marks)) useDecimalSeparator(lang, mark);
        const values = JSON.parse(process.argv[1]);
        const out = {{}};
        for (const lang of Object.keys(marks)) out[lang] = [values.map((v) => compactNumber(v, lang)), values.map((v) => errorSize(v, lang))];
        console.log(JSON.stringify(out));
    """
    out = subprocess.run(
        [node(), "--input-type=module", "-e", script, json.dumps(values)],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return json.loads(out.stdout)


def test_the_pages_tables_write_numbers_in_the_pages_language():
    """A figure's numbers table, the whole tensor's pages, the Jacobian's rows and the gradient
    check's table (lib/dom.js formatNumber, formatError) carry the language's decimal mark: in a
    Russian page a comma, as in its sentences; English as before."""
    values = [0, 0.5, -1.25, 3.14159, 1.2e-5, 123456.0, 42.0]
    cells = js_table_numbers(values)
    assert cells["en"] == [
        ["0", "0.5", "-1.25", "3.142", "1.20e-5", "1.23e+5", "42"],
        ["0.0e+0", "5.0e-1", "-1.3e+0", "3.1e+0", "1.2e-5", "1.2e+5", "4.2e+1"],
    ]
    assert cells["ru"] == [
        ["0", "0,5", "-1,25", "3,142", "1,20e-5", "1,23e+5", "42"],
        ["0,0e+0", "5,0e-1", "-1,3e+0", "3,1e+0", "1,2e-5", "1,2e+5", "4,2e+1"],
    ]
