"""The forward and backward rule beside each step, in the symbols of docs/notation.md. Most
come straight from the op table (xt_core.ops.registry); an op used in two places with two
meanings (the two residual adds, the attention and output softmaxes) gets the symbols of its
place, so a formula, its title and its colour bars name the same tensor the same way."""

from __future__ import annotations

import re

from app.steps.titles import local_name
from app.steps.wording import t
from xt_core.ops.attention import ROPE_BACKWARD_TEX, ROPE_FORWARD_TEX
from xt_core.trace import Record

_D = r"\frac{\partial L}{\partial %s}"

_ATTENTION_SOFTMAX = (
    r"P_{m,i,j} = \frac{e^{S_{m,i,j} - \max_{j'} S_{m,i,j'}}}{\sum_{j' \le i} e^{S_{m,i,j'} - \max_{j'} S_{m,i,j'}}}",
    _D % r"S_{m,i,:}"
    + " = J "
    + _D % r"P_{m,i,:}"
    + r", \quad J = \mathrm{diag}(p) - p p^{\top} = J^{\top}, \ p = P_{m,i,:} \quad\Longrightarrow\quad "
    + _D % r"S_{m,i,j}"
    + r" = P_{m,i,j}\Big("
    + _D % r"P_{m,i,j}"
    + r" - \sum_{j'} P_{m,i,j'} "
    + _D % r"P_{m,i,j'}"
    + r"\Big)",
)
_OUTPUT_SOFTMAX = (
    r"p_{t,v} = \frac{e^{z_{t,v} - \max_w z_{t,w}}}{\sum_{w} e^{z_{t,w} - \max_w z_{t,w}}}, \quad z = \mathrm{logits}",
    _D % r"z_{t}"
    + " = J "
    + _D % r"p_{t}"
    + r", \quad J = \mathrm{diag}(p_t) - p_t p_t^{\top} = J^{\top} \quad\Longrightarrow\quad "
    + _D % r"z_{t,v}"
    + r" = p_{t,v}\Big("
    + _D % r"p_{t,v}"
    + r" - \sum_w p_{t,w} "
    + _D % r"p_{t,w}"
    + r"\Big)",
)


def _residual(out: str, skip: str, branch: str) -> tuple[str, str]:
    forward = rf"{out} = {skip} + \mathrm{{{branch}}}"
    backward = (
        _D % skip
        + r" \mathrel{+}= "
        + _D % out
        + rf"\ \ \big(\partial {out}/\partial {skip} = I\big), \qquad "
        + _D % rf"\mathrm{{{branch}}}"
        + " = "
        + _D % out
    )
    return forward, backward


# RoPE on the keys: the op's rule (attention.ROPE_*_TEX) is written for the queries.
_ROPE_KEYS = (
    ROPE_FORWARD_TEX.replace("q_", "k_").replace(r"\tilde{q}", r"\tilde{k}").replace("keys alike", "queries alike"),
    ROPE_BACKWARD_TEX.replace("q_", "k_").replace(r"\tilde{q}", r"\tilde{k}"),
)

_BY_NAME = {
    "attention.k_rot": _ROPE_KEYS,
    "attention_residual": _residual("h", "x", "attn"),
    "ffn_residual": _residual("x'", "h", "ffn"),
    "attention.probs": _ATTENTION_SOFTMAX,
}


# The words inside the rules (\text{...}), by their English (the catalogue's en text): a rule's
# LaTeX is xt_core's, in English; each language's words replace them (app/words: steps-formulas.ftl).
_WORDS = (
    "step-formula-keys-alike",
    "step-formula-queries-alike",
    "step-formula-rotate-back",
    "step-formula-for",
    "step-formula-every",
    "step-formula-also",
    "step-formula-a-matrix",
    "step-formula-a-norm-gain",
    # GPT-2 and Qwen: QK-norm's "(each head m of q or k)"
    "step-formula-each-head",
    "step-formula-of",
    "step-formula-or",
)
_TEXT = re.compile(r"\\text\{([^{}]*)\}")


def in_words_of(latex: str | None, lang: str) -> str | None:
    """`latex` with the words of its \text{...} in `lang` (the spaces around them kept)."""
    if latex is None:
        return None
    messages = {t("en", message): message for message in _WORDS}

    def translate(match: re.Match) -> str:
        text = match.group(1)
        words = text.strip()
        if words not in messages:
            return match.group(0)
        lead, tail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
        return rf"\text{{{lead}{t(lang, messages[words])}{tail}}}"

    return _TEXT.sub(translate, latex)


def rules(record: Record, lang: str = "en") -> tuple[str, str]:
    """(forward LaTeX, backward LaTeX) of a recorded op, in this step's symbols, its words in `lang`."""
    name = local_name(record.name)
    if name in _BY_NAME:
        forward, backward = _BY_NAME[name]
    elif record.kind == "softmax":  # the output softmax (its recorded name is the model's to choose)
        forward, backward = _OUTPUT_SOFTMAX
    else:
        forward, backward = record.forward_latex, record.backward_latex
    return in_words_of(forward, lang), in_words_of(backward, lang)
