"""The bug lab's catalogue as the app lists it, and what a bug-lab page shows of its spec. A
fault's words (its name as people read it, its description, why it cannot apply) are in the
catalogues, keyed by its id (app/words/locales/<lang>/buglab.ftl); xt_core/lab/faults.py keeps
its structure: the step it breaks and the two lines."""

from __future__ import annotations

from app import words
from xt_core import Config
from xt_core.lab.faults import Fault


def fault_words(name: str) -> str:
    """The fault's message id (buglab-fault-<id>): its value is its name in words."""
    return f"buglab-fault-{name}"


def description(fault: Fault, lang: str = words.DEFAULT) -> str:
    return words.t(lang, f"{fault_words(fault.name)}.description")


def fault_json(fault: Fault, cfg: Config, layer: int, step_title: str | None = None, lang: str = words.DEFAULT) -> dict:
    """One catalogue entry: `op` is the walkthrough step whose backward the fault changes."""
    reason = fault.requires(cfg)
    return {
        "name": fault.name,
        "op": fault.step_name(layer),
        "op_title": step_title,
        "description": description(fault, lang),
        "correct": fault.correct,
        "faulty": fault.faulty,
        "applies": reason is None,
        "reason": words.t(lang, f"{fault_words(fault.name)}.reason") if reason else None,
    }
