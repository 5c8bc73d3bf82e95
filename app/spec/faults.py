"""The bug lab's catalogue as the app shows it, and the quiz's hidden choice.

A leaf module (xt_core only): app.spec resolves `faults` and `quiz` with it. What a fault
does to a trace is xt_core's business (xt_core.lab.faults); this module decides which fault a
quiz hides and how the catalogue is listed for a given config.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets

from app.errors import SpecError, check_between, shown_number
from app.settings import Settings
from app.spec.core_words import core_said
from app.spec.schema import TraceSpec
from app.words.said import Said
from xt_core import Config
from xt_core.lab.faults import CATALOGUE, overrides


def default_fault_layer(cfg: Config) -> int:
    """Faults hit the last layer unless told otherwise: nearest the loss, so the damage then
    flows through every earlier layer."""
    return cfg.n_layer - 1


def applicable_faults(cfg: Config) -> list[str]:
    return sorted(name for name, fault in CATALOGUE.items() if fault.requires(cfg) is None)


def quiz_key(settings: Settings) -> bytes:
    """The server's secret that turns a quiz's number into its fault: settings.quiz_secret, else
    one derived from the admin key (every worker `xt serve` starts shares it), else this
    process's own. Without it the number tells nothing: not the fault, not its layer."""
    if settings.quiz_secret:
        return settings.quiz_secret.encode()
    if settings.admin_key:
        return hmac.new(settings.admin_key.encode(), b"xt quiz secret", hashlib.sha256).digest()
    return _PROCESS_QUIZ_KEY


# A server without XT_QUIZ_SECRET or an admin key (one person on loopback) keeps its quizzes'
# faults for as long as it runs; workers of one class need XT_QUIZ_SECRET or an admin key.
_PROCESS_QUIZ_KEY = secrets.token_bytes(32)


def quiz_fault(quiz: int, cfg: Config, settings: Settings) -> tuple[str, int]:
    """(the fault a quiz hides, its layer), chosen by the quiz's number and the server's secret
    (quiz_key) among the faults that apply to the config, and for a layer-specific fault among
    the model's layers.

    Only the server calls this: the spec, the trace id and the page carry the number, never
    the name or the layer, and the number alone (the spec run offline) cannot give them."""
    names = applicable_faults(cfg)
    digest = hmac.new(quiz_key(settings), f"xt bug-lab quiz {quiz}".encode(), hashlib.sha256).digest()
    name = names[int.from_bytes(digest[:8], "big") % len(names)]
    layered = "{L}" in CATALOGUE[name].step
    layer = int.from_bytes(digest[8:16], "big") % cfg.n_layer if layered else default_fault_layer(cfg)
    return name, layer


def quiz_weights_seed(canonical: dict, settings: Settings) -> int:
    """The seed of a quiz trace's own weights (xt_core.lab.quiz_weights): the server's secret
    (quiz_key) and the whole canonical spec, so another text, batch or quiz number of the same
    model runs on other weights, and no spec a client can send runs on these."""
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    digest = hmac.new(quiz_key(settings), b"xt-quiz-weights:" + text.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


def new_quiz_seed() -> int:
    """A fresh quiz for /quiz and the home form's "quiz" choice (small: the permalink stays short)."""
    return secrets.randbelow(CLASS_QUIZ_FLOOR)


# A class's quiz numbers (drawn per session) lie at or above this; a learner's own below. A
# class's quiz is revealed by its presenter only: an answer through the trace routes is refused.
CLASS_QUIZ_FLOOR = 2**31


def new_class_quiz() -> int:
    return CLASS_QUIZ_FLOOR + secrets.randbelow(CLASS_QUIZ_FLOOR)


def is_class_quiz(quiz: int | None) -> bool:
    return quiz is not None and quiz >= CLASS_QUIZ_FLOOR


def resolve_faults(spec: TraceSpec, cfg: Config, settings: Settings) -> tuple[tuple[str, ...], int | None]:
    """(the faults the backward runs with, sorted; their layer), or ((), None) without any.
    A quiz's fault and layer are chosen here, from its number and the server's secret, and stay
    out of the canonical spec (a quiz with fault_layer is refused: the layer is hidden too)."""
    if spec.quiz is not None:
        if spec.faults:
            raise SpecError(("body", "quiz"), Said("error-quiz-with-faults"))
        if spec.fault_layer is not None:
            raise SpecError(("body", "fault_layer"), Said("error-quiz-with-layer"))
        check_between(("body", "quiz"), spec.quiz, 0, settings.max_seed)
        name, layer = quiz_fault(spec.quiz, cfg, settings)
        return (name,), layer
    if not spec.faults:
        return (), None  # fault_layer alone changes nothing: the canonical spec drops it
    layer = default_fault_layer(cfg) if spec.fault_layer is None else spec.fault_layer
    if not 0 <= layer < cfg.n_layer:
        raise SpecError(
            ("body", "fault_layer"),
            Said("error-fault-layer", last=str(cfg.n_layer - 1), layers=cfg.n_layer, value=shown_number(layer)),
        )
    names = tuple(sorted(set(spec.faults)))
    for name in names:
        fault = CATALOGUE.get(name)
        if fault is None:
            raise SpecError(
                ("body", "faults"), Said("error-unknown-fault", fault=repr(name), known=", ".join(CATALOGUE))
            )
        reason = fault.requires(cfg)
        if reason:
            raise SpecError(("body", "faults"), Said("error-fault-not-applicable", fault=repr(name), reason=reason))
    try:
        overrides(cfg, names, layer)  # two faults on one step
    except ValueError as exc:
        raise SpecError(("body", "faults"), core_said(str(exc))) from None
    return names, layer
