"""The GPT-2 family's rows of the table of recorded tensors (xt_core/names.py): every tensor its
model script (xt_core/families/gpt2.py) records, with its axes, role, block and symbol. The
attention's inner steps (softmax, heads, concat), the residuals and the head are Llama's rows, the
same tensors by the same names and words; what differs has its own row, or its own words id
("names-gpt2-…": its title, label and about in app/words/locales/*/names.ftl)."""

from __future__ import annotations

from dataclasses import replace

from xt_core.families.llama_names import ROWS as LLAMA_ROWS
from xt_core.recorded import Recorded

_LLAMA = {row.pattern: row for row in LLAMA_ROWS}
_BTC = ("B", "T", "C")


def _llama(pattern: str, words: str = "") -> Recorded:
    """Llama's row of `pattern`; with `words`, worded as GPT-2's (its words id in names.ftl)."""
    return replace(_LLAMA[pattern], words=words) if words else _LLAMA[pattern]


# In execution order: the model script (xt_core/families/gpt2.py) makes them in this order.
ROWS: tuple[Recorded, ...] = (
    _llama("embedding"),
    Recorded("embedding_positions", _BTC, "embedding", "embedding", symbol="x", words="names-gpt2-embedding-positions"),
    _llama("layers.{L}.attention_norm.out", "names-gpt2-attention-norm-out"),
    _llama("layers.{L}.attention.q", "names-gpt2-attention-q"),
    _llama("layers.{L}.attention.k", "names-gpt2-attention-k"),
    _llama("layers.{L}.attention.v", "names-gpt2-attention-v"),
    _llama("layers.{L}.attention.scores", "names-gpt2-attention-scores"),  # no RoPE: q·kᵀ, not q̃·k̃ᵀ
    _llama("layers.{L}.attention.probs"),
    _llama("layers.{L}.attention.heads"),
    _llama("layers.{L}.attention.concat"),
    _llama("layers.{L}.attention.out", "names-gpt2-attention-out"),
    _llama("layers.{L}.attention_residual"),
    _llama("layers.{L}.ffn_norm.out", "names-gpt2-ffn-norm-out"),
    _llama("layers.{L}.feed_forward.up", "names-gpt2-feed-forward-up"),
    Recorded(
        "layers.{L}.feed_forward.gelu", ("B", "T", "F"), "activation", "ffn", words="names-gpt2-feed-forward-gelu"
    ),
    _llama("layers.{L}.feed_forward.out", "names-gpt2-feed-forward-out"),
    _llama("layers.{L}.ffn_residual"),
    _llama("norm.out", "names-gpt2-norm-out"),
    _llama("logits"),
    _llama("output_probs"),
    _llama("token_loss"),
    _llama("loss"),
)
