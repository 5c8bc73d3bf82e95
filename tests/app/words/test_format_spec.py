"""FORMAT($x, spec: ".2g") reads alike on the server (app/words/__init__.py format_spec: Python's
format) and in the page (static/js/lib/format_spec.js): node runs the page's copy on the same
values and specs, ties and exponents included; a spec outside .Ne, .Nf, .Ng is refused."""

from __future__ import annotations

import json
import subprocess

import pytest

from app import words
from tests.app.words.test_numbers import node
from tests.test_code_shape import ROOT

VALUES = [
    0, 1, -1, 7, 23, 1024, 0.5, 1.5, 2.5, -2.5, 0.125, 0.375, -0.125, 0.0455, 0.045454545, 1 / 3, 2 / 3, 0.599,
    0.99995, 9.9995, 123456.789, 1e-5, 3.1e-8, 1.25e-7, 6.02214076e23, 1e21, 0.0001, 0.00012345, 5e-324, -0.0,
    float("inf"), float("-inf"), float("nan"),
]  # fmt: skip
SPECS = [".0e", ".1e", ".2e", ".0f", ".2f", ".3f", ".4f", ".1g", ".2g", ".3g", ".4g"]


def _python(value, spec: str, lang: str) -> str:
    number = words._value(value, lang)
    return words.format_spec(number, spec)


def test_the_server_and_the_page_format_alike():
    cases = [(v, spec, lang) for v in VALUES for spec in SPECS for lang in ("en", "ru")]
    script = f"""
        import {{ formatSpec }} from {json.dumps(str(ROOT / "static/js/lib/format_spec.js"))};
        const read = (v) => (v === "inf" ? Infinity : v === "-inf" ? -Infinity : v === "nan" ? NaN : v === "-0" ? -0 : v);
        const cases = JSON.parse(process.argv[1]);
        console.log(JSON.stringify(cases.map(([v, spec, lang]) => formatSpec(read(v), spec, lang))));
    """
    encoded = json.dumps(
        [
            [
                "inf"
                if v == float("inf")
                else "-inf"
                if v == float("-inf")
                else "nan"
                if v != v
                else "-0"
                if (v == 0 and str(v).startswith("-"))
                else v,
                spec,
                lang,
            ]
            for v, spec, lang in cases
        ]
    )
    out = subprocess.run(
        [node(), "--input-type=module", "-e", script, encoded], capture_output=True, text=True, check=True, timeout=30
    )
    page = json.loads(out.stdout)
    differ = [(c, p, _python(*c)) for c, p in zip(cases, page, strict=True) if p != _python(*c)]
    assert differ == [], "\n".join(map(str, differ))


def test_a_spec_is_one_of_three_and_russian_writes_a_comma():
    assert words.t("ru", "lesson-measured-gradcheck-fails", error=0.0123, tolerance=1e-5).startswith(
        "не проходит: отн. ошибка 0,012 (допуск 1e-05)"
    )
    with pytest.raises(ValueError, match="is not .Ne, .Nf or .Ng"):
        words.format_spec(words._value(1.5, "en"), ",.2f")
