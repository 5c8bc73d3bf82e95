"""A trace with the spec it was built from and the server's display limits: what every view
reads, with the labels of its positions, predictions and vocabulary."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import xt_core
from app.checkpoints.registry import measured, registry
from app.figures.serialize import figure_json, table
from app.settings import Settings
from app.spec.resolve import ResolvedSpec


def unique_labels(labels: list[str]) -> list[str]:
    """A categorical axis merges equal labels: tag repeats with their index."""
    seen: set[str] = set()
    out = []
    for i, label in enumerate(labels):
        out.append(label if label not in seen else f"{label} #{i}")
        seen.add(label)
    return out


@dataclass
class TraceContext:
    """A trace with the spec it was built from and the server's display limits."""

    spec: ResolvedSpec
    trace: xt_core.Trace
    settings: Settings

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

    @cached_property
    def vocab(self) -> list[str]:
        """A label for every token id of the model's vocabulary."""
        tokenizer = self.spec.tokenizer
        known = tokenizer.vocab_size if tokenizer is not None else 0
        labels = [tokenizer.token_label(i) if i < known else f"#{i}" for i in range(self.trace.cfg.vocab_size)]
        return unique_labels(labels)

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

    def table(self, matrix, index, columns):
        return table(matrix, index, columns, self.settings.max_table_rows, self.settings.max_table_cols)
