"""Every op's formulas convert to valid MathML."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from app.steps.mathml import formula, repair, to_mathml
from xt_core.ops import OPS

FORMULAS = [
    (f"{kind}.{side}", getattr(op, f"{side}_latex")) for kind, op in OPS.items() for side in ("forward", "backward")
]


@pytest.mark.parametrize(("label", "latex"), FORMULAS, ids=[label for label, _ in FORMULAS])
def test_every_op_formula_converts_to_valid_mathml(label, latex):
    mathml = to_mathml(latex)
    root = ET.fromstring(mathml)
    assert root.tag.endswith("math") and root.get("display") == "block"
    mo = "{http://www.w3.org/1998/Math/MathML}mo"
    for operator in root.iter(mo):
        assert len(operator) == 0, f"{label}: an <mo> holding elements is not valid MathML"
    assert "\\" not in "".join(root.itertext()), f"{label}: an unconverted LaTeX command"


def test_add_into_is_one_operator():
    assert "<mo>&#x0002B;&#x0003D;</mo>" in to_mathml(r"a \mathrel{+}= b")
    assert repair("<mo><mrow><mo>+</mo></mrow></mo>") == "<mo>+</mo>"


def test_formula_carries_both_forms_and_is_cached():
    assert formula("Y = X W") == {"latex": "Y = X W", "mathml": to_mathml("Y = X W")}
    assert to_mathml("Y = X W") is to_mathml("Y = X W")


def test_unparsable_latex_raises_value_error():
    with pytest.raises(ValueError, match="cannot convert"):
        to_mathml(r"\frac{1}{")
