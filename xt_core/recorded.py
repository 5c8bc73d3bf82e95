"""One row of the table of recorded tensors (xt_core/names.py): a tensor's name pattern, axes,
role and words. Each model family declares its rows (xt_core/families/<family>_names.py); this
module holds only their type, so a family's rows and the table's lookups both import it.

Axes: B = n_seq, T = positions, C = n_embd, H = n_head, K = n_kv_head, hd = head_dim (n_embd / n_head
unless the config sets it), F = ffn_hidden, V = vocab_size; an axis "H*hd" is one axis of H times
hd entries (xt_core.names.dims gives each size).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

LAYER_PREFIX = "layers.{L}."


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
    part: str = ""  # the config's boolean part that makes it (Qwen's "qkv_bias", "qk_norm"); "": every config

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

    def made_for(self, cfg) -> bool:
        """Whether a config's step records it: always, or when its part is switched on."""
        return not self.part or bool(getattr(cfg, self.part))

    def name(self, layer: int | None = None) -> str:
        return self.pattern.format(L=layer) if self.per_layer else self.pattern

    def elements(self, dims: dict[str, int]) -> int:
        """Entries of one such tensor (one layer's) for the sizes `dims` (see dims())."""
        return math.prod(math.prod(dims[d] for d in axis.split("*")) for axis in self.axes)
