"""The Llama family's rows of the table of recorded tensors (xt_core/names.py): every tensor its
model script (xt_core/families/llama.py) records, with its axes, role, block and symbol. Their words
(title, label, what an explanation says of them) are in the catalogues, app/words/locales/*/names.ftl,
by each row's `words` id. Parameter names follow Meta/llama2.c (xt_core.families.llama.param_shapes). Rows with a `part`
are Qwen's, recorded only where the config switches it on: Qwen2's q, k, v biases (qkv_bias) and
Qwen3's QK-norm (qk_norm)."""

from __future__ import annotations

from xt_core.recorded import Recorded

_BTC = ("B", "T", "C")
_HEADS = ("B", "H", "T", "T")

# In execution order: the model script (xt_core/families/llama.py) makes them in this order.
ROWS: tuple[Recorded, ...] = (
    Recorded("embedding", _BTC, "embedding", "embedding", symbol="x"),
    Recorded("layers.{L}.attention_norm.out", _BTC, "norm out", "attention", symbol="n"),
    Recorded("layers.{L}.attention.q", ("B", "T", "H*hd"), "projection", "attention"),
    Recorded(
        "layers.{L}.attention.q_biased", ("B", "T", "H*hd"), "bias added", "attention", symbol="q", part="qkv_bias"
    ),
    Recorded("layers.{L}.attention.k", ("B", "T", "K*hd"), "projection", "attention"),
    Recorded(
        "layers.{L}.attention.k_biased", ("B", "T", "K*hd"), "bias added", "attention", symbol="k", part="qkv_bias"
    ),
    Recorded("layers.{L}.attention.v", ("B", "T", "K*hd"), "projection", "attention"),
    Recorded(
        "layers.{L}.attention.v_biased", ("B", "T", "K*hd"), "bias added", "attention", symbol="v", part="qkv_bias"
    ),
    Recorded(
        "layers.{L}.attention.q_norm.out", ("B", "T", "H*hd"), "head norm out", "attention", symbol="q", part="qk_norm"
    ),
    Recorded(
        "layers.{L}.attention.k_norm.out", ("B", "T", "K*hd"), "head norm out", "attention", symbol="k", part="qk_norm"
    ),
    Recorded("layers.{L}.attention.q_rot", ("B", "T", "H*hd"), "rotated", "attention"),
    Recorded("layers.{L}.attention.k_rot", ("B", "T", "K*hd"), "rotated", "attention"),
    Recorded("layers.{L}.attention.scores", _HEADS, "attention scores", "attention"),
    Recorded("layers.{L}.attention.probs", _HEADS, "attention probs", "attention", symbol="p"),
    Recorded("layers.{L}.attention.heads", ("B", "H", "T", "hd"), "head outputs", "attention"),
    Recorded("layers.{L}.attention.concat", ("B", "T", "H*hd"), "concat", "attention"),
    Recorded("layers.{L}.attention.out", _BTC, "branch out", "attention", symbol="attention"),
    Recorded("layers.{L}.attention_residual", _BTC, "residual", "attention", symbol="h"),
    Recorded("layers.{L}.ffn_norm.out", _BTC, "norm out", "ffn", symbol="n"),
    Recorded("layers.{L}.feed_forward.gate", ("B", "T", "F"), "projection", "ffn"),
    Recorded("layers.{L}.feed_forward.up", ("B", "T", "F"), "projection", "ffn"),
    Recorded("layers.{L}.feed_forward.swiglu", ("B", "T", "F"), "activation", "ffn"),
    Recorded("layers.{L}.feed_forward.out", _BTC, "branch out", "ffn", symbol="feed-forward"),
    Recorded("layers.{L}.ffn_residual", _BTC, "residual", "ffn", symbol="x′"),
    Recorded("norm.out", _BTC, "norm out", "norm", symbol="n"),
    Recorded("logits", ("B", "T", "V"), "logits", "head", symbol="logit"),
    Recorded("output_probs", ("B", "T", "V"), "output probs", "loss", symbol="p", phase="loss"),
    Recorded("token_loss", ("B", "T"), "token loss", "loss", symbol="ℓ", phase="loss"),
    Recorded("loss", (), "loss", "loss", phase="loss"),
)
