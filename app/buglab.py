"""The bug lab's catalogue as the app shows it, and the quiz's hidden choice.

A leaf module (xt_core only): app.spec resolves `faults` and `quiz` with it. What a fault
does to a trace is xt_core's business (xt_core.faults); this module decides which fault a
quiz hides and how the catalogue is listed for a given config.
"""

from __future__ import annotations

import hashlib
import secrets

from xt_core import Config
from xt_core.faults import CATALOGUE, Fault


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


def fault_json(fault: Fault, cfg: Config, layer: int, step_title: str | None = None) -> dict:
    """One catalogue entry: `op` is the walkthrough step whose backward the fault changes."""
    reason = fault.requires(cfg)
    return {
        "name": fault.name,
        "op": fault.step_name(layer),
        "op_title": step_title,
        "description": fault.description,
        "correct": fault.correct,
        "faulty": fault.faulty,
        "applies": reason is None,
        "reason": reason,
    }


def new_quiz_seed() -> int:
    """A fresh quiz for /quiz and the home form's "quiz" choice (small: the permalink stays short)."""
    return secrets.randbelow(1_000_000)
