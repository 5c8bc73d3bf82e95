"""Every term a first-year student may not know, defined once. The walk page carries this table
(templates/walk.html, `xt-glossary`) in the page's language and marks the first use of each term on
a step (static/js/lib/glossary.js): the term becomes a button whose definition shows on hover,
keyboard focus and tap. The words are in the catalogues (app/words/locales/<lang>/glossary.ftl:
the term, `.forms`, the spellings the page looks for in the order tried, each case a sentence may
use, and `.definition`); here the terms and their order."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from app import words

KEYS = (
    "cpp-backward-pass", "jacobian", "onehot", "sigma", "rope", "swiglu", "gqa", "lm-head", "residual-stream",
    "iverson-bracket", "projection-term", "fan-out", "gemm-tn", "np-add-at", "fancy-index-assignment", "inv",
    "dres", "float64-twin", "first-order-prediction", "curvature", "richardson-extrapolation", "bias-correction",
    "decoupled-weight-decay", "central-difference",
)  # fmt: skip


@dataclass(frozen=True)
class Term:
    term: str
    forms: tuple[str, ...]
    definition: str


def terms(lang: str = words.DEFAULT) -> tuple[Term, ...]:
    """The glossary in `lang`, in the order the page tries the terms."""
    return tuple(
        Term(
            words.t(lang, f"glossary-{key}"),
            tuple(form.strip() for form in words.t(lang, f"glossary-{key}.forms").split("|")),
            words.t(lang, f"glossary-{key}.definition"),
        )
        for key in KEYS
    )


TERMS = terms()  # in English, as the explanations' tests read them


def table(lang: str = words.DEFAULT) -> list[dict]:
    """The glossary as the page carries it (JSON)."""
    return [{**asdict(t), "forms": list(t.forms)} for t in terms(lang)]
