"""The bug lab's catalogue as the app shows it, and the quiz's hidden choice.

A leaf module (xt_core only): app.spec resolves `faults` and `quiz` with it. What a fault
does to a trace is xt_core's business (xt_core.lab.faults); this module decides which fault a
quiz hides and how the catalogue is listed for a given config.
"""

from __future__ import annotations

import hashlib
import secrets

from app.errors import SpecError, check_between, shown_number
from app.settings import Settings
from app.spec.schema import TraceSpec
from xt_core import Config
from xt_core.lab.faults import CATALOGUE, fault_override


def default_fault_layer(cfg: Config) -> int:
    """Faults hit the last layer unless told otherwise: nearest the loss, so the damage then
    flows through every earlier layer."""
    return cfg.n_layer - 1


def applicable_faults(cfg: Config) -> list[str]:
    return sorted(name for name, fault in CATALOGUE.items() if fault.requires(cfg) is None)


def quiz_fault(seed: int, cfg: Config) -> str:
    """The fault a quiz hides, chosen by its seed among those that apply to the config.

    Only the server calls this: the spec, the trace id and the page carry the seed, never
    the name. The seed is hashed (not taken modulo the catalogue) so that neighbouring
    seeds do not walk through the catalogue in order."""
    names = applicable_faults(cfg)
    digest = hashlib.sha256(f"xt bug-lab quiz {seed}".encode()).digest()
    return names[int.from_bytes(digest[:8], "big") % len(names)]


def new_quiz_seed() -> int:
    """A fresh quiz for /quiz and the home form's "quiz" choice (small: the permalink stays short)."""
    return secrets.randbelow(1_000_000)


def resolve_faults(spec: TraceSpec, cfg: Config, settings: Settings) -> tuple[tuple[str, ...], int | None]:
    """(the faults the backward runs with, sorted; their layer), or ((), None) without any.
    A quiz's fault is chosen here, from its seed, and stays out of the canonical spec."""
    if spec.quiz is not None:
        if spec.faults:
            raise SpecError(("body", "quiz"), "a quiz hides its own fault: send faults = [] with quiz, or drop quiz")
        check_between(("body", "quiz"), spec.quiz, 0, settings.max_seed)
    elif not spec.faults:
        return (), None  # fault_layer alone changes nothing: the canonical spec drops it
    layer = default_fault_layer(cfg) if spec.fault_layer is None else spec.fault_layer
    if not 0 <= layer < cfg.n_layer:
        raise SpecError(
            ("body", "fault_layer"),
            f"fault_layer must be between 0 and {cfg.n_layer - 1} (the model has {cfg.n_layer} layer(s)), got {shown_number(layer)}",
        )
    if spec.quiz is not None:
        return (quiz_fault(spec.quiz, cfg),), layer
    names = tuple(sorted(set(spec.faults)))
    for name in names:
        fault = CATALOGUE.get(name)
        if fault is None:
            raise SpecError(
                ("body", "faults"), f"unknown fault {name!r}; GET /api/faults lists them: {', '.join(CATALOGUE)}"
            )
        reason = fault.requires(cfg)
        if reason:
            raise SpecError(("body", "faults"), f"fault {name!r} does not apply to this config: it {reason}")
    try:
        fault_override(cfg, names, layer)  # two faults on one step
    except ValueError as exc:
        raise SpecError(("body", "faults"), str(exc)) from None
    return names, layer
