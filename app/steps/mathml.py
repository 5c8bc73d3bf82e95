"""LaTeX -> MathML for the formulas beside each step (browsers render MathML natively, so
the app needs no math JavaScript and works offline).

latex2mathml wraps `\\mathrel{...}` in an <mo> holding an <mrow> of <mo>s, which is not
valid MathML (an <mo> holds text only); `repair` flattens those into one operator.
"""

from __future__ import annotations

import re
from functools import lru_cache

from latex2mathml.converter import convert

# <mo><mrow><mo>+</mo></mrow></mo>  or  <mo><mrow><mo>+</mo><mo>=</mo></mrow></mo>
_NESTED_OPERATOR = re.compile(r"<mo>\s*<mrow>((?:\s*<mo[^>]*>[^<]*</mo>)+)\s*</mrow>\s*</mo>")
_OPERATOR_TEXT = re.compile(r"<mo[^>]*>([^<]*)</mo>")
# "\mathrel{+}=" is "+=" (add into): one relation, not a plus followed by an equals sign.
_PLUS_EQUALS = re.compile(r"<mo>(&#x0002B;|\+)</mo>\s*<mo>(&#x0003D;|=)</mo>")


def repair(mathml: str) -> str:
    """Makes latex2mathml's output valid MathML where it is known not to be."""
    mathml = _NESTED_OPERATOR.sub(lambda m: "<mo>" + "".join(_OPERATOR_TEXT.findall(m.group(1))) + "</mo>", mathml)
    return _PLUS_EQUALS.sub("<mo>&#x0002B;&#x0003D;</mo>", mathml)


@lru_cache(maxsize=256)
def to_mathml(latex: str, display: str = "block") -> str:
    """MathML for a LaTeX formula (cached: every step of every trace shows one of a few
    dozen formulas). Raises ValueError when latex2mathml cannot parse it."""
    try:
        return repair(convert(latex, display=display))
    except Exception as exc:  # latex2mathml raises its own exception types and plain errors
        raise ValueError(f"cannot convert LaTeX to MathML: {exc}") from exc


def formula(latex: str) -> dict:
    """{"latex", "mathml"} as the step JSON carries it."""
    return {"latex": latex, "mathml": to_mathml(latex)}
