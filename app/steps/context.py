"""A trace with the spec it was built from and the server's display limits: what every view
reads, with the labels of its positions, predictions and vocabulary."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, replace

import numpy as np

import xt_core
from app.checkpoints.registry import measured, registry
from app.figures.serialize import figure_json, table
from app.settings import Settings
from app.spec.resolve import ResolvedSpec
from app.steps.wording import numbers_note


def unique_labels(labels: list[str]) -> list[str]:
    """A categorical axis merges equal labels: tag repeats with their index."""
    seen: set[str] = set()
    out = []
    for i, label in enumerate(labels):
        out.append(label if label not in seen else f"{label} #{i}")
        seen.add(label)
    return out


_VOCABS: OrderedDict[int, tuple[object, list[str]]] = OrderedDict()  # by tokenizer: (it, its labels)
_VOCABS_KEPT = 8
_vocabs_lock = threading.Lock()


def _vocab(tokenizer, vocab_size: int) -> list[str]:
    key = hash((id(tokenizer), vocab_size))
    with _vocabs_lock:
        hit = _VOCABS.get(key)
        if hit is not None and hit[0] is tokenizer and len(hit[1]) == vocab_size:
            _VOCABS.move_to_end(key)
            return hit[1]
    known = tokenizer.vocab_size if tokenizer is not None else 0
    labels = unique_labels([tokenizer.token_label(i) if i < known else f"#{i}" for i in range(vocab_size)])
    with _vocabs_lock:
        _VOCABS[key] = (tokenizer, labels)  # holds the tokenizer: its id cannot be reused meanwhile
        while len(_VOCABS) > _VOCABS_KEPT:
            _VOCABS.popitem(last=False)
    return labels


@dataclass
class TraceContext:
    """A trace with the spec it was built from and the server's display limits. `trace` is None while
    a request waits for its job's working bytes (app.traces.room: let go, then taken again)."""

    spec: ResolvedSpec
    trace: xt_core.Trace
    settings: Settings
    lang: str = "en"  # the language of the words it writes (axes, figure titles): app/words

    @property
    def n_seq(self) -> int:
        return int(self.trace.tokens.shape[0])

    @property
    def T(self) -> int:
        return int(self.trace.tokens.shape[1])

    def input_labels(self, seq: int) -> list[str]:
        return self.spec.token_labels(self.spec.inputs[seq])

    def target_labels(self, seq: int) -> list[str]:
        return self.spec.token_labels(self.spec.targets[seq])

    def positions(self, seq: int) -> list[str]:
        """ "i token" for every input position: unique axis labels that name the token."""
        return [f"{i} {label}" for i, label in enumerate(self.input_labels(seq))]

    def predictions(self, seq: int) -> list[str]:
        """ "i input→target" for the loss charts."""
        return [
            f"{i} {a}→{b}" for i, (a, b) in enumerate(zip(self.input_labels(seq), self.target_labels(seq), strict=True))
        ]

    @property
    def vocab(self) -> list[str]:
        """A label for every token id of the model's vocabulary (built once per tokenizer: a real
        model's 49,152 take a noticeable fraction of a second)."""
        return _vocab(self.spec.tokenizer, self.trace.cfg.vocab_size)

    def token_label(self, token_id: int) -> str:
        """One token's text, whitespace drawn visibly ("␣Paris"); "#id" beyond the tokenizer's."""
        tokenizer = self.spec.tokenizer
        known = tokenizer.vocab_size if tokenizer is not None else 0
        return tokenizer.token_label(int(token_id)) if token_id < known else f"#{int(token_id)}"

    def vocab_labels(self, ids) -> list[str]:
        """Labels of some tokens of a large vocabulary, unique along one axis."""
        return unique_labels([self.token_label(i) for i in ids])

    def measured(self) -> dict:
        """What the checkpoint's training measured (app.checkpoints.registry.measured), or {}."""
        info = self.spec.checkpoint
        if info is None:
            return {}
        return measured(registry(self.settings).summary(info).meta)

    def is_param(self, name: str) -> bool:
        return name in self.trace.param_names

    def entry(self, figure_id: str, title: str, role: str, figure, tab, notes=(), heads: dict | None = None) -> dict:
        """One element of the step's "figures" list. `heads`: set on a grid of attention
        heads (how each head was downsampled; the page fetches a head's every value)."""
        fig_json, fig_note = figure_json(figure)
        table_json, table_note = tab if tab is not None else (None, None)
        note = " ".join(n for n in (fig_note, table_note, *notes) if n) or None
        return {
            "id": figure_id,
            "title": title,
            "role": role,
            "figure": fig_json,
            "table": table_json,
            "note": note,
            "heads": heads,
        }

    def table(self, matrix, index, columns, lang: str = "en"):
        """The 'numbers' table beside a figure, and what it leaves out in words of `lang` (or None)."""
        table_json, _ = table(matrix, index, columns, self.settings.max_table_rows, self.settings.max_table_cols)
        full = np.shape(matrix) if np.ndim(matrix) == 2 else (int(np.size(matrix)), 1)
        return table_json, numbers_note((len(table_json["index"]), len(table_json["columns"])), full, lang)


def in_language(ctx: TraceContext, lang: str) -> TraceContext:
    """The context writing its words in `lang`: an answer's language reaches the titles, axes and
    figures that read ctx.lang, and the prose that takes `lang` (one trace, many languages)."""
    return ctx if ctx.lang == lang else replace(ctx, lang=lang)
