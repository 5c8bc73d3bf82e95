"""What every checkpoint format shares: the error, the loaded checkpoint, and the checks a
loader runs cheapest first, so that a file whose header lies costs O(1):

    1. the config (O(1)) and its values' bounds, then the caller's `limits(cfg)`;
    2. the tensor count the config implies against the count the file holds (O(1));
    3. names and shapes from the file's headers (O(tensors), no tensor read yet);
    4. the values themselves (finite), read one tensor at a time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from xt_core.config import Config
from xt_core.text.byte_char import ByteTokenizer, CharTokenizer


class CheckpointError(ValueError):
    """The file is not a checkpoint xt can load; the message says why."""


Limits = Callable[[Config], None]
"""A caller's limits on a checkpoint's config (e.g. the server's): raises CheckpointError.
Every loader calls it right after parsing the config, before any tensor is read."""


@dataclass
class Checkpoint:
    cfg: Config
    params: dict[str, np.ndarray]
    tokenizer: ByteTokenizer | CharTokenizer | None = None
    meta: dict = field(default_factory=dict)  # how it was trained: keys and types in metadata.META_FIELDS


@dataclass(frozen=True)
class Header:
    """What a file format's reader gives first (xt_core.checkpoint.formats): the config, tokenizer
    and meta, every check before a tensor made; checkpoint() then reads the tensors, under xt's
    parameter names. A format that cannot split the two reads everything first (Header.holding)."""

    cfg: Config
    tokenizer: object | None  # a tokenizer of xt_core.text; None: token ids only
    meta: dict
    read: Callable[[], Checkpoint]

    def checkpoint(self) -> Checkpoint:
        return self.read()

    @classmethod
    def holding(cls, ckpt: Checkpoint) -> Header:
        return cls(ckpt.cfg, ckpt.tokenizer, ckpt.meta, lambda: ckpt)


# A stored config may hold any value Config accepts, within these bounds: beyond them no
# model was ever trained (theta < 1 makes RoPE's "slow" pairs turn fastest; eps > 1 drowns
# the activations' mean square), and 1e300 only serves to overflow. A server narrows them
# further through `limits`.
VALUE_BOUNDS = {"rope_theta": (1.0, 1e12), "norm_eps": (1e-20, 1.0)}


def config_from_fields(fields: dict, source: str, limits: Limits | None, part: str = "config", names=None) -> Config:
    """Config(**fields), its values' bounds, then the caller's limits: the config step of every
    file format but GGUF's (xt_core.checkpoint.formats). `part` is the part of the file the fields
    were read from, `names` maps xt's field names to the file's own (e.g. norm_eps -> rms_norm_eps),
    both for the messages."""
    names = names or {}
    try:
        cfg = Config.from_dict(fields)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"{source}: {part} is not a valid config: {exc}") from None
    for key, (low, high) in VALUE_BOUNDS.items():
        value = getattr(cfg, key)
        if not (math.isfinite(value) and low <= value <= high):
            raise CheckpointError(
                f"{source}: {names.get(key, key)} = {value!r} is outside [{low:g}, {high:g}], "
                "the range a checkpoint may hold"
            )
    if limits is not None:
        limits(cfg)
    return cfg


def tensor_count(cfg: Config) -> int:
    """len(param_shapes(cfg)) in O(1): embeddings, 9 tensors per layer (+ 3 biases: Qwen2, + 2
    QK-norm gains: Qwen3), final norm, untied head."""
    per_layer = 9 + (3 if cfg.qkv_bias else 0) + (2 if cfg.qk_norm else 0)
    return 2 + per_layer * cfg.n_layer + (0 if cfg.tie_embeddings else 1)


def check_count(cfg: Config, held: int, source: str) -> None:
    """Before anything proportional to n_layer: a config that implies far more tensors than
    the file holds (a lying header) is refused in O(1). A few missing or extra tensors pass
    here, for check_names to name them."""
    needed = tensor_count(cfg)
    if needed > 2 * held + 8:
        raise CheckpointError(
            f"{source}: the config (n_layer = {cfg.n_layer}, tie_embeddings = {cfg.tie_embeddings}) needs "
            f"{needed} tensors; the file holds {held}"
        )


def listing(names: Iterable[str], shown: int = 4) -> str:
    """A few names, then how many more: an error message stays short whatever the file holds."""
    names = sorted(names)
    head = ", ".join(names[:shown])
    return head + (f" and {len(names) - shown} more" if len(names) > shown else "")


def check_names(expected: Iterable[str], held: Iterable[str], source: str) -> None:
    expected, held = set(expected), set(held)
    missing, extra = expected - held, held - expected
    if missing or extra:
        parts = [f"missing {listing(missing)}" if missing else "", f"unexpected {listing(extra)}" if extra else ""]
        raise CheckpointError(f"{source}: tensors do not match the config: {'; '.join(p for p in parts if p)}")


def check_finite(name: str, array: np.ndarray, source: str) -> np.ndarray:
    if not np.all(np.isfinite(array)):
        raise CheckpointError(f"{source}: tensor {name} holds NaN or inf")
    return array


def short(value, width: int = 60) -> str:
    """repr(value) cut to `width` characters: a message may quote a value, never a megabyte."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."
