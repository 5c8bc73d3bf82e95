"""The bug lab's catalogue as the app lists it, and what a bug-lab page shows of its spec."""

from __future__ import annotations

from xt_core import Config
from xt_core.lab.faults import Fault


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
