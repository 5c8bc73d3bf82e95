"""The words of the step views in Russian (issue 32): every step title, figure title, axis title,
colour-bar name, hover text, legend name, panel caption and the figures' own notes (pooling, a
vocabulary drawn in part), in a context whose language is Russian, hold no English word outside a
stated allow-list; the block diagram, the timeline's groups and the step list too. The notes under
the figures and the numbers tables' words are the steps' helper's (tests/app/steps/test_russian.py
there). The English words of the same views are pinned by tests/app/steps/test_snapshot.py.

Allowed (not English words a translation would change): the recorded tensors' symbols and names
(xt_core's table; a symbol that is a word is the catalogue's, names-value-*: "attention" on an
English colour bar is "attn" on a Russian one, the symbol of the residual's formula), the
parameters' symbols and names (Wq; "norm", "output" on their colour bars), formula
names and hyperparameters (diag, log, silu, onehot, lr), and model-part names written as they are (RMSNorm, RoPE, SwiGLU, LM: not matched, they are not words).
The batch is token ids, so no token's text is an English word."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from app.steps import axes, titles
from app.steps import view as views
from app.steps.context import TraceContext
from app.steps.jacobian import jacobian_view
from tests.helpers.client import post_trace
from tests.helpers.specs import SMALL_CONFIG
from xt_core import names

SPEC = {
    "config": {**SMALL_CONFIG, "vocab_size": 12, "tie_embeddings": False},
    "tokens": [[1, 2, 3, 4, 5, 6, 7, 8], [8, 7, 6, 5, 4, 3, 2, 1]],
    "optimizer": {"name": "adamw"},
    "train_steps": 2,
}
# A Latin word: a letter and lower-case letters, not inside an identifier or after "d"/"/" (dL/dlogits).
LATIN_WORD = re.compile(r"(?<![\w/.\[])[A-Za-z][a-z]+(?![\w(\[])")
SYMBOLS = {word for rows in names.ROWS.values() for row in rows for word in re.findall(r"[a-z]+", row.short)}
# the weights' symbols (W1, W2, W3 are not words) and the parameters named on their colour bars by name
PARAMETERS = {"wq", "wk", "wv", "wo", "norm", "output"}
# the branches' outputs as the formulas write them (h = x + attn, x′ = h + ffn): their colour bars' names
FORMULA_SYMBOLS = {"attn", "ffn"}
ALLOWED = SYMBOLS | PARAMETERS | FORMULA_SYMBOLS | {"diag", "log", "silu", "onehot", "lr", "hd"}
MARKUP = re.compile(r"<[^>]*>")  # Plotly's <br>, <extra></extra>
READ_KEYS = {"title", "text", "hovertemplate", "name", "note"}
# Words inside a figure that the steps' helper moves (steps-figures.ftl): the identity chart's legend.
STEPS_WORDS = {"recorded dL/dlogits"}


def english_words(text: str) -> set[str]:
    for theirs in STEPS_WORDS:
        text = text.replace(theirs, "")
    return {word for word in LATIN_WORD.findall(MARKUP.sub(" ", text)) if word.lower() not in ALLOWED}


def read_texts(node) -> list[str]:
    """Every text a person reads in a figure's JSON: titles (of the plot, its axes, its colour
    bar), hover templates, trace names (legends), annotations and notes."""
    if isinstance(node, dict):
        out = []
        for key, value in node.items():
            if key in READ_KEYS and isinstance(value, str):
                out.append(value)
            elif isinstance(value, dict | list):
                out += read_texts(value)
        return out
    if isinstance(node, list):
        return [text for item in node for text in read_texts(item)]
    return []


@pytest.fixture(scope="module")
def ctx(client) -> TraceContext:
    summary = post_trace(client, SPEC)
    store = client.app.state.services.store
    spec = store.spec(summary["id"])
    return TraceContext(spec, store.get(spec), client.app.state.settings, lang="ru")


@pytest.fixture()
def small_vocabulary_drawn_in_part(monkeypatch):
    """A vocabulary beyond VOCAB_WHOLE is drawn in part with a note saying which tokens: make the
    12-token one such, so its notes are read too."""
    monkeypatch.setattr(axes, "VOCAB_WHOLE", 4)
    monkeypatch.setattr(axes, "VOCAB_SHOWN", 6)
    monkeypatch.setattr(axes, "VOCAB_TOP", 2)


def test_every_step_views_figure_words_are_russian(ctx):
    found = {}
    assert ctx.trace.records[-1].phase == "update"
    for record in ctx.trace.records:
        view = views.step_view(
            ctx, record.index, 0, 3, None, max_cells=40, lang="ru"
        )  # pooled: the pooling's words too
        texts = [view["title"], *(f["title"] for f in view["figures"])]
        texts += read_texts([figure["figure"] for figure in view["figures"]])
        english = set().union(*(english_words(text) for text in texts))
        if english:
            found[f"{record.name} {record.phase}"] = sorted(english)
    assert found == {}


def test_the_notes_on_a_vocabulary_drawn_in_part_are_russian(ctx, small_vocabulary_drawn_in_part):
    trace = ctx.trace
    logits = np.asarray(trace["logits"])[0]
    drawn = [
        axes.activation_axes(ctx, "logits", 0, logits),
        axes.activation_axes(ctx, "logits", 0, np.asarray(trace.grad("logits"))[0], gradient=True),
        axes.param_axes(ctx, "output", trace["output"]),
        axes.param_axes(ctx, "tok_embeddings", trace["tok_embeddings"]),
        axes.param_axes(ctx, "tok_embeddings", trace.grad("tok_embeddings"), gradient=True),
        axes.param_axes(ctx, "output", trace.grad("output"), gradient=True),
    ]
    notes = [a.note for a in drawn]
    assert all(notes), notes
    assert {note: english_words(note) for note in notes if english_words(note)} == {}
    english = replace(ctx, lang="en")
    assert axes.activation_axes(english, "logits", 0, logits).note.startswith("6 of the 12 tokens are drawn")


def test_the_jacobian_panels_words_are_russian(ctx):
    for layer in (0, None):
        view = jacobian_view(ctx, layer, 1, 0, 5, 4, lang="ru")
        texts = [*read_texts(view["figure"]), *read_texts(view["vectors_figure"])]
        assert set().union(*(english_words(text) for text in texts)) == set(), layer


def test_the_bug_labs_charts_are_russian():
    from app.figures.buglab import check_errors_chart, diff_panels
    from app.figures.serialize import figure_json

    chart = check_errors_chart(
        [1e-9, np.nan, 0.5], [True, False, False], ["a", "b", "c"], ["forward", "loss", "backward"],
        tolerance=1e-4, first_failing=2, lang="ru",
    )  # fmt: skip
    panels = diff_panels(
        np.ones((3, 4)), np.ones((3, 4)), None, None, title="т", value_name="dL/dx", row_title="позиция",
        col_title="признак", max_cells=6, lang="ru",
    )  # fmt: skip
    texts = [*read_texts(figure_json(chart)[0]), *read_texts(figure_json(panels)[0])]
    assert "первый непройденный: шаг 2" in texts
    assert {text: english_words(text) for text in texts if english_words(text)} == {}


def test_the_walkthroughs_structure_is_russian(ctx):
    cfg = ctx.trace.cfg
    parts = [*titles.blocks(cfg, "ru"), *titles.groups(cfg, True, "ru"), titles.update_block("ru")]
    texts = [part["label"] for part in parts]
    texts += [text for step in titles.steps(ctx.trace, "ru") for text in (step["title"], step["op_title"])]
    assert {text: english_words(text) for text in texts if english_words(text)} == {}
    assert titles.blocks(cfg, "ru")[1]["label"] == "Слой 0 · внимание"


def test_the_english_words_are_todays(ctx):
    """The same context in English words its figures as before the words moved (the snapshot
    pins every answer; these few read plainly)."""
    english = replace(ctx, lang="en")
    probs = next(r for r in ctx.trace.records if r.name == "layers.0.attention.probs" and r.phase == "backward")
    assert titles.title(probs) == "Layer 0 · Attention softmax over keys — backward"
    assert titles.one_head_title(titles.output_title("layers.0.attention.probs"), 2) == (
        "Layer 0 attention probabilities, head 2"
    )
    square = (4, ctx.T, ctx.T)
    assert axes.head_axes(english, square, 0).col_title == "key"
    assert axes.head_axes(ctx, square, 0).col_title == "ключ"
