"""One row of the table of recorded tensors (xt_core/names.py): a tensor's name pattern, axes,
role, block and symbol: structure only. Each model family declares its rows
(xt_core/families/<family>_names.py); this module holds only their type, so a family's rows and
the table's lookups both import it.

What a person reads of a row (its title, its label, what an explanation says of it) is in the
catalogues, app/words/locales/<lang>/names.ftl, under the row's `words` id: "names-attention-probs"
-title, -label (with $layer) and -about. A family whose tensor is worded differently from another
family's of the same name gives its row its own `words` id.

Axes: B = n_seq, T = positions, C = n_embd, H = n_head, K = n_kv_head, hd = head_dim (n_embd / n_head
unless the config sets it), F = ffn_hidden, V = vocab_size; an axis "H*hd" is one axis of H times
hd entries (xt_core.names.dims gives each size).
"""

from __future__ import annotations

import math
import re
from dataclasses import KW_ONLY, dataclass

LAYER_PREFIX = "layers.{L}."


@dataclass(frozen=True)
class Recorded:
    pattern: str  # "logits", or "layers.{L}.attention.probs" for one per layer
    axes: tuple[str, ...]  # ("B", "H", "T", "T")
    role: str  # what kind of thing it is: "residual", "norm out", "attention probs", "output probs", ...
    block: str  # the model part it belongs to: "attention" or "ffn" within a layer, else embedding, norm, head, loss
    _: KW_ONLY
    symbol: str = ""  # its entries on a colour bar or value axis ("p"); "": the name's last part
    phase: str = "forward"  # "forward", or "loss" for the softmax and cross-entropy after the logits
    part: str = ""  # the config's boolean part that makes it (Qwen's "qkv_bias", "qk_norm"); "": every config
    words: str = ""  # its words' id in the catalogues; "": "names-" and the local name ("names-attention-probs")

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

    @property
    def words_id(self) -> str:
        """The stem of its messages in names.ftl: "names-attention-probs" (-title, -label, -about)."""
        return self.words or "names-" + re.sub(r"[._]", "-", self.local)

    def name(self, layer: int | None = None) -> str:
        return self.pattern.format(L=layer) if self.per_layer else self.pattern

    def elements(self, dims: dict[str, int]) -> int:
        """Entries of one such tensor (one layer's) for the sizes `dims` (see dims())."""
        return math.prod(math.prod(dims[d] for d in axis.split("*")) for axis in self.axes)
