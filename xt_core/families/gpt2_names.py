"""The GPT-2 family's rows of the table of recorded tensors (xt_core/names.py): every tensor its
model script (xt_core/families/gpt2.py) records, with its axes, role and words. The attention's
inner steps (scores, softmax, heads, concat), the residuals and the head are Llama's rows, the
same tensors by the same names; what differs has its own row or words."""

from __future__ import annotations

from dataclasses import replace

from xt_core.families.llama_names import ROWS as LLAMA_ROWS
from xt_core.recorded import Recorded

_LLAMA = {row.pattern: row for row in LLAMA_ROWS}
_BTC = ("B", "T", "C")


def _llama(pattern: str, **words) -> Recorded:
    """Llama's row of `pattern`, with the words that differ for GPT-2."""
    return replace(_LLAMA[pattern], **words)


# In execution order: the model script (xt_core/families/gpt2.py) makes them in this order.
ROWS: tuple[Recorded, ...] = (
    _llama("embedding"),
    Recorded(
        "embedding_positions",
        _BTC,
        "embedding",
        "embedding",
        "Learned position embedding added",
        "token + position embeddings",
        "x",
    ),
    _llama(
        "layers.{L}.attention_norm.out",
        title="LayerNorm before attention",
        label="LayerNorm output of layer {L}, before attention",
    ),
    _llama("layers.{L}.attention.q", title="Query projection q = n·Wq + bq"),
    _llama("layers.{L}.attention.k", title="Key projection k = n·Wk + bk"),
    _llama("layers.{L}.attention.v", title="Value projection v = n·Wv + bv"),
    _llama("layers.{L}.attention.scores"),
    _llama("layers.{L}.attention.probs"),
    _llama("layers.{L}.attention.heads"),
    _llama("layers.{L}.attention.concat"),
    _llama("layers.{L}.attention.out", title="Attention output projection ·Wo + bo"),
    _llama("layers.{L}.attention_residual"),
    _llama(
        "layers.{L}.ffn_norm.out",
        title="LayerNorm before the feed-forward",
        label="LayerNorm output of layer {L}, before the feed-forward",
    ),
    _llama(
        "layers.{L}.feed_forward.up",
        title="Up projection ·W1 + b1",
        about="the up projection a, which goes through GELU",
    ),
    Recorded(
        "layers.{L}.feed_forward.gelu",
        ("B", "T", "F"),
        "activation",
        "ffn",
        "GELU activation",
        "layer {L} GELU activation",
    ),
    _llama("layers.{L}.feed_forward.out", title="Down projection ·W2 + b2"),
    _llama("layers.{L}.ffn_residual"),
    _llama("norm.out", title="Final LayerNorm", label="final LayerNorm output"),
    _llama("logits"),
    _llama("output_probs"),
    _llama("token_loss"),
    _llama("loss"),
)
