"""The model families xt computes, by the name a config gives (Config.family): each a model script
(its parameters' shapes and its tape of ops) and its rows of recorded tensors (xt_core/names.py
reads them from here). What its script computes of each part of the config (positions, norm,
activation, biases) is xt_core.config.FAMILY_PARTS; both tables hold the same names
(tests/core/test_families.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xt_core.config import Config
from xt_core.families import gpt2, gpt2_names, llama, llama_names
from xt_core.recorded import Recorded
from xt_core.tape import Node


@dataclass(frozen=True)
class Family:
    name: str
    param_shapes: Callable[[Config], dict[str, tuple[int, ...]]]  # every parameter's name and shape
    build_tape: Callable[[Config], list[Node]]  # the step's ops in execution order
    rows: tuple[Recorded, ...]  # its rows of the table of recorded tensors, in the order its tape makes them


FAMILIES: dict[str, Family] = {
    llama.FAMILY: Family(llama.FAMILY, llama.param_shapes, llama.build_tape, llama_names.ROWS),
    gpt2.FAMILY: Family(gpt2.FAMILY, gpt2.param_shapes, gpt2.build_tape, gpt2_names.ROWS),
}


def family_of(cfg: Config) -> Family:
    """The family a config names (Config has checked that it is one of FAMILIES)."""
    return FAMILIES[cfg.family]
