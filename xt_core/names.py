"""Every recorded tensor, declared once: its name, axes, role, block and symbol (its words are in
the catalogues, app/words/locales/*/names.ftl, by the row's words id). A model family's script
(xt_core/families/) makes each tensor by its name here; titles, explanations, axes, the size
estimates, the bug lab's faults and the PyTorch reference read this table instead of typing the
names again. `trace[name]` is the forward value and `trace.grad(name)` its gradient (same shape);
parameters work the same way (their names: xt_core.model.param_shapes).

The table holds one run of rows per model family (ROWS, from xt_core/families/registry.py; Llama's
are xt_core/families/llama_names.py), each a Recorded (xt_core/recorded.py explains the axes'
letters). A per-layer tensor's pattern holds "{L}", the layer index ("layers.{L}.attention.probs"
-> "layers.0.attention.probs"). The lookups by name take the family: Llama's by default, the one
family xt computes today.

Token ids are `tokens` and `targets`, (B, T) int64, and have no gradient.
"""

from __future__ import annotations

import re

from xt_core.config import DEFAULT_FAMILY, Config
from xt_core.families.registry import FAMILIES
from xt_core.recorded import Recorded

TOKEN_IDS = ("tokens", "targets")  # the batch's token ids: int64, no gradient

# Each family's rows, in the order its script records them (xt_core/families/registry.py).
ROWS: dict[str, tuple[Recorded, ...]] = {name: family.rows for name, family in FAMILIES.items()}
RECORDED = ROWS[DEFAULT_FAMILY]
BY_PATTERN: dict[str, dict[str, Recorded]] = {family: {r.pattern: r for r in rows} for family, rows in ROWS.items()}
BY_LOCAL: dict[str, dict[str, Recorded]] = {family: {r.local: r for r in rows} for family, rows in ROWS.items()}
# The few tensors code outside the model reads by name: every family's head records these.
LOGITS = BY_PATTERN[DEFAULT_FAMILY]["logits"].pattern
OUTPUT_PROBS = BY_PATTERN[DEFAULT_FAMILY]["output_probs"].pattern
TOKEN_LOSS = BY_PATTERN[DEFAULT_FAMILY]["token_loss"].pattern
LOSS = BY_PATTERN[DEFAULT_FAMILY]["loss"].pattern

_LAYER = re.compile(r"^layers\.(\d+)\.")


def entry(pattern: str, family: str = DEFAULT_FAMILY) -> Recorded:
    """The table's entry of a pattern ("layers.{L}.attention.probs"); KeyError naming the known ones."""
    try:
        return BY_PATTERN[family][pattern]
    except KeyError:
        known = ", ".join(BY_PATTERN.get(family, ()))
        raise KeyError(f"{pattern!r} is not a recorded tensor; known: {known} (family {family!r})") from None


def lookup(name: str, family: str = DEFAULT_FAMILY) -> Recorded | None:
    """The entry of a recorded tensor's name ("layers.3.attention.q"), None for any other name
    (a parameter, token ids, "update")."""
    found = BY_LOCAL[family].get(_LAYER.sub("", name))
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


def rows_of(cfg: Config) -> list[Recorded]:
    """The rows a config's step records: its family's, less those of parts it leaves off
    (Recorded.part: Qwen2's biases, Qwen3's QK-norm), in execution order."""
    return [r for r in ROWS[cfg.family] if r.made_for(cfg)]


def tensor_names(cfg: Config) -> list[str]:
    """Every recorded forward tensor of a config, in execution order."""
    rows = rows_of(cfg)
    layer = [r for r in rows if r.per_layer]  # one run of entries, between the embedding and the final norm
    first = rows.index(layer[0])
    before, after = rows[:first], rows[first + len(layer) :]
    per_layer = [r.name(L) for L in range(cfg.n_layer) for r in layer]
    return [r.name() for r in before] + per_layer + [r.name() for r in after]


def recorded_elements(cfg: Config, n_seq: int, T: int, where=lambda r: True) -> int:
    """Entries of every recorded forward tensor (of those `where(entry)` picks) for a batch of n_seq × T."""
    sizes = dims(cfg, n_seq, T)
    return sum(r.elements(sizes) * (cfg.n_layer if r.per_layer else 1) for r in rows_of(cfg) if where(r))


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
