"""Every recorded tensor, declared once: its name, axes, role and words. The model script
(xt_core/model.py) makes each tensor by its name here; titles, explanations, axes, the size
estimates, the bug lab's faults and the PyTorch reference read this table instead of typing the
names again. `trace[name]` is the forward value and `trace.grad(name)` its gradient (same shape);
parameters work the same way (their names: xt_core.model.param_shapes).

Axes: B = n_seq, T = positions, C = n_embd, H = n_head, K = n_kv_head, hd = C/H, F = ffn_hidden,
V = vocab_size; an axis "H*hd" is one axis of H times hd entries. A per-layer tensor's pattern
holds "{L}", the layer index: "layers.{L}.attention.probs" -> "layers.0.attention.probs".

Token ids are `tokens` and `targets`, (B, T) int64, and have no gradient.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from xt_core.config import Config

LAYER_PREFIX = "layers.{L}."
TOKEN_IDS = ("tokens", "targets")  # the batch's token ids: int64, no gradient


@dataclass(frozen=True)
class Recorded:
    pattern: str  # "logits", or "layers.{L}.attention.probs" for one per layer
    axes: tuple[str, ...]  # ("B", "H", "T", "T")
    role: str  # what kind of thing it is: "residual", "norm out", "attention probs", "output probs", ...
    block: str  # the model part it belongs to: "attention" or "ffn" within a layer, else embedding, norm, head, loss
    title: str  # what the op making it computes: "Attention softmax over keys"
    label: str  # what it holds, in words ("{L}": the layer): "layer {L} attention probabilities, all heads"
    symbol: str = ""  # its entries on a colour bar or value axis ("p"); "": the name's last part
    about: str = ""  # what an explanation says of it: what a projection computes, or what reads a norm's output
    phase: str = "forward"  # "forward", or "loss" for the softmax and cross-entropy after the logits

    @property
    def per_layer(self) -> bool:
        return self.pattern.startswith(LAYER_PREFIX)

    @property
    def local(self) -> str:
        """The name without "layers.{L}.": "attention.probs"."""
        return self.pattern.removeprefix(LAYER_PREFIX)

    @property
    def short(self) -> str:
        return self.symbol or self.pattern.rsplit(".", 1)[-1]

    def name(self, layer: int | None = None) -> str:
        return self.pattern.format(L=layer) if self.per_layer else self.pattern

    def elements(self, dims: dict[str, int]) -> int:
        """Entries of one such tensor (one layer's) for the sizes `dims` (see dims())."""
        return math.prod(math.prod(dims[d] for d in axis.split("*")) for axis in self.axes)


_BTC = ("B", "T", "C")
_HEADS = ("B", "H", "T", "T")

# In execution order: the tape (xt_core.model.build_tape) makes them in this order.
RECORDED: tuple[Recorded, ...] = (
    Recorded("embedding", _BTC, "embedding", "embedding", "Token embedding lookup", "token embeddings", "x"),
    Recorded(
        "layers.{L}.attention_norm.out",
        _BTC,
        "norm out",
        "attention",
        "RMSNorm before attention",
        "RMSNorm output of layer {L}, before attention",
        "n",
        about="attention",
    ),
    Recorded(
        "layers.{L}.attention.q",
        ("B", "T", "H*hd"),
        "projection",
        "attention",
        "Query projection q = n·Wq",
        "layer {L} queries",
        about="queries: what each position is looking for",
    ),
    Recorded(
        "layers.{L}.attention.k",
        ("B", "T", "K*hd"),
        "projection",
        "attention",
        "Key projection k = n·Wk",
        "layer {L} keys",
        about="keys: what each position offers to be found by",
    ),
    Recorded(
        "layers.{L}.attention.v",
        ("B", "T", "K*hd"),
        "projection",
        "attention",
        "Value projection v = n·Wv",
        "layer {L} values",
        about="values: what each position passes on when it is attended to",
    ),
    Recorded(
        "layers.{L}.attention.q_rot",
        ("B", "T", "H*hd"),
        "rotated",
        "attention",
        "RoPE rotates the queries",
        "layer {L} queries after RoPE",
    ),
    Recorded(
        "layers.{L}.attention.k_rot",
        ("B", "T", "K*hd"),
        "rotated",
        "attention",
        "RoPE rotates the keys",
        "layer {L} keys after RoPE",
    ),
    Recorded(
        "layers.{L}.attention.scores",
        _HEADS,
        "attention scores",
        "attention",
        "Attention scores q̃·k̃ᵀ/√hd, causal mask",
        "layer {L} attention scores, all heads",
    ),
    Recorded(
        "layers.{L}.attention.probs",
        _HEADS,
        "attention probs",
        "attention",
        "Attention softmax over keys",
        "layer {L} attention probabilities, all heads",
        "p",
    ),
    Recorded(
        "layers.{L}.attention.heads",
        ("B", "H", "T", "hd"),
        "head outputs",
        "attention",
        "Weighted sum of values, per head",
        "layer {L} attention outputs, all heads",
    ),
    Recorded(
        "layers.{L}.attention.concat",
        ("B", "T", "H*hd"),
        "concat",
        "attention",
        "Concatenate the heads",
        "layer {L} heads side by side",
    ),
    Recorded(
        "layers.{L}.attention.out",
        _BTC,
        "branch out",
        "attention",
        "Attention output projection ·Wo",
        "layer {L} attention output",
        "attention",
        about="the attention output: the concatenated heads mixed back into the C-wide residual stream",
    ),
    Recorded(
        "layers.{L}.attention_residual",
        _BTC,
        "residual",
        "attention",
        "Residual add h = x + attention",
        "residual stream after layer {L} attention",
        "h",
    ),
    Recorded(
        "layers.{L}.ffn_norm.out",
        _BTC,
        "norm out",
        "ffn",
        "RMSNorm before the feed-forward",
        "RMSNorm output of layer {L}, before the feed-forward",
        "n",
        about="the feed-forward",
    ),
    Recorded(
        "layers.{L}.feed_forward.gate",
        ("B", "T", "F"),
        "projection",
        "ffn",
        "Gate projection ·W1",
        "layer {L} gate projection",
        about="the gate pre-activation a, which goes through silu",
    ),
    Recorded(
        "layers.{L}.feed_forward.up",
        ("B", "T", "F"),
        "projection",
        "ffn",
        "Up projection ·W3",
        "layer {L} up projection",
        about="the up projection u, which the gate will scale",
    ),
    Recorded(
        "layers.{L}.feed_forward.swiglu",
        ("B", "T", "F"),
        "activation",
        "ffn",
        "SwiGLU silu(gate) ⊙ up",
        "layer {L} SwiGLU activation",
    ),
    Recorded(
        "layers.{L}.feed_forward.out",
        _BTC,
        "branch out",
        "ffn",
        "Down projection ·W2",
        "layer {L} feed-forward output",
        "feed-forward",
        about="the feed-forward output: the F-wide hidden vector projected back to C features",
    ),
    Recorded(
        "layers.{L}.ffn_residual",
        _BTC,
        "residual",
        "ffn",
        "Residual add x′ = h + feed-forward",
        "residual stream after layer {L}",
        "x′",
    ),
    Recorded("norm.out", _BTC, "norm out", "norm", "Final RMSNorm", "final RMSNorm output", "n", about="the LM head"),
    Recorded("logits", ("B", "T", "V"), "logits", "head", "Logits: LM head", "next-token logits", "logit"),
    Recorded(
        "output_probs",
        ("B", "T", "V"),
        "output probs",
        "loss",
        "Output softmax: next-token probabilities",
        "next-token probabilities",
        "p",
        phase="loss",
    ),
    Recorded(
        "token_loss",
        ("B", "T"),
        "token loss",
        "loss",
        "Per-token loss −log p(target)",
        "loss per position",
        "ℓ",
        phase="loss",
    ),
    Recorded("loss", (), "loss", "loss", "Mean loss over all positions", "mean loss L", phase="loss"),
)

BY_PATTERN: dict[str, Recorded] = {r.pattern: r for r in RECORDED}
BY_LOCAL: dict[str, Recorded] = {r.local: r for r in RECORDED}
# The few tensors code outside the model reads by name.
LOGITS = BY_PATTERN["logits"].pattern
OUTPUT_PROBS = BY_PATTERN["output_probs"].pattern
TOKEN_LOSS = BY_PATTERN["token_loss"].pattern
LOSS = BY_PATTERN["loss"].pattern

_LAYER = re.compile(r"^layers\.(\d+)\.")


def entry(pattern: str) -> Recorded:
    """The table's entry of a pattern ("layers.{L}.attention.probs"); KeyError naming the known ones."""
    try:
        return BY_PATTERN[pattern]
    except KeyError:
        raise KeyError(f"{pattern!r} is not a recorded tensor; known: {', '.join(BY_PATTERN)}") from None


def lookup(name: str) -> Recorded | None:
    """The entry of a recorded tensor's name ("layers.3.attention.q"), None for any other name
    (a parameter, token ids, "update")."""
    found = BY_LOCAL.get(_LAYER.sub("", name))
    if found is None or found.per_layer != bool(_LAYER.match(name)):
        return None
    return found


def role_of(name: str) -> str | None:
    found = lookup(name)
    return found.role if found else None


def is_attention_scores(name: str) -> bool:
    """Whether `name` is a layer's attention scores (future keys masked to -inf)."""
    return role_of(name) == "attention scores"


def is_output_softmax(name: str) -> bool:
    """Whether `name` is the output softmax's (the next-token probabilities), not an attention one."""
    return role_of(name) == "output probs"


def dims(cfg: Config, n_seq: int, T: int) -> dict[str, int]:
    """The size of every axis name of the table."""
    return {
        "B": n_seq,
        "T": T,
        "C": cfg.n_embd,
        "H": cfg.n_head,
        "K": cfg.n_kv_head,
        "hd": cfg.head_dim,
        "F": cfg.ffn_hidden,
        "V": cfg.vocab_size,
    }


def tensor_names(cfg: Config) -> list[str]:
    """Every recorded forward tensor of a config, in execution order."""
    layer = [r for r in RECORDED if r.per_layer]  # one run of entries, between the embedding and the final norm
    first = RECORDED.index(layer[0])
    before, after = RECORDED[:first], RECORDED[first + len(layer) :]
    per_layer = [r.name(L) for L in range(cfg.n_layer) for r in layer]
    return [r.name() for r in before] + per_layer + [r.name() for r in after]


def recorded_elements(cfg: Config, n_seq: int, T: int, where=lambda r: True) -> int:
    """Entries of every recorded forward tensor (of those `where(entry)` picks) for a batch of n_seq × T."""
    sizes = dims(cfg, n_seq, T)
    return sum(r.elements(sizes) * (cfg.n_layer if r.per_layer else 1) for r in RECORDED if where(r))


def estimate_trace_bytes(cfg: Config, n_seq: int, T: int, itemsize: int = 4, shared_params: bool = False) -> int:
    """What Trace.nbytes() will report for this step, known before building it (an upper bound
    within 30%, tests/core/test_trace_bytes.py): a trace holds its segment boundaries
    (xt_core.recompute: the residual stream after the embedding and after each layer, the loss,
    and dL/d each), the token ids, the weights unless borrowed (shared_params: a loaded
    checkpoint's, read-only), and for a float32 trace (itemsize 4) its float64 twin's boundaries.
    Everything else is recomputed when read, in the process's bounded cache of recomputed segments."""
    boundaries = 2 * ((cfg.n_layer + 1) * n_seq * T * cfg.n_embd + 1) * itemsize
    ids = 2 * n_seq * T * 8
    params = 0 if shared_params else cfg.n_params() * itemsize
    twin = 2 * boundaries if itemsize == 4 else 0
    return boundaries + ids + params + twin


# Measured peak of a build (tracemalloc) over the recorded entries' bytes: 1.3-1.8 (every forward
# value with its op's cache, then one segment's backward at a time); 2 keeps it an upper bound.
BUILD_COPIES = 2


def estimate_build_bytes(cfg: Config, n_seq: int, T: int, itemsize: int = 4, shared_params: bool = False) -> int:
    """The most a build holds while it runs (xt_core.model.forward_backward): the forward's every
    value and cache at once, beside what the trace will keep."""
    held = estimate_trace_bytes(cfg, n_seq, T, itemsize, shared_params)
    return int(BUILD_COPIES * recorded_elements(cfg, n_seq, T) * itemsize) + held + (64 << 10)
