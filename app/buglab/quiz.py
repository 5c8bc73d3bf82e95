"""The quiz keeps its verdict from each learner until that learner answers. Before the answer,
a quiz trace's answers carry the numbers (every tensor, gradient, figure) but no verdict: no
gradient check result, no "the check failed" warning, no chain-rule ✓/✗, no "this op is the
broken one", no chart of every step's check, no comparison with the correct backward. A learner
may spend up to `Settings.quiz_probes` probes: each runs the gradient check of one step of their
choice, or compares it with the correct backward, counted here on the server per trace and per
learner (an identity the server issued: app.sessions.voters), so a reload does not refund them
and one learner's probes or answer unseal nothing for another.

A class's quiz (app.spec.faults.is_class_quiz) is answered in the class's poll, and only the
presenter's reveal unseals it, for every learner of its trace.

The ledger lives in the server process (bounded, least recently used first out): a restart
forgets probes and answers, and the page posts its remembered answer again."""

from __future__ import annotations

from dataclasses import dataclass, field

from app import words
from app.traces.cache import LRU

QUIZ_LEARNERS = 100_000  # (quiz trace, learner) pairs remembered (a few hundred bytes each)
REVEALED_TRACES = 10_000  # class quizzes their presenter revealed


class ProbesSpent(Exception):
    """Every probe of this learner is used: they answer, or probe a step already probed. The
    route words it in the request's language (buglab-probes-spent)."""

    def __init__(self, most: int, probed: list[int]):
        self.most, self.probed = most, probed
        super().__init__(most, probed)

    def words(self, lang: str) -> str:
        return words.t(lang, "buglab-probes-spent", most=self.most, steps=", ".join(map(str, self.probed)))


@dataclass
class QuizState:
    probed: list[int] = field(default_factory=list)  # step indices, in the order probed
    answered: bool = False

    def json(self, max_probes: int) -> dict:
        return {
            "answered": self.answered,
            "probes": {"used": list(self.probed), "max": max_probes, "left": max(0, max_probes - len(self.probed))},
        }


class QuizLedger:
    """Per quiz trace id and learner: the steps probed and whether they answered; per trace,
    whether its class's presenter revealed it. Touched only on the event loop (async routes),
    so no lock beyond the LRU's own. A request without an identity is a learner who has
    neither probed nor answered."""

    def __init__(self, max_probes: int, entries: int = QUIZ_LEARNERS):
        self.max_probes = max_probes
        self._states: LRU[QuizState] = LRU(entries)
        self._revealed: LRU[bool] = LRU(REVEALED_TRACES)

    def state(self, trace_id: str, learner: str | None) -> QuizState:
        if learner is None:
            return QuizState()
        state = self._states.get((trace_id, learner))
        if state is None:
            state = QuizState()
            self._states.put((trace_id, learner), state)
        return state

    def sealed(self, trace_id: str, learner: str | None, index: int | None = None) -> bool:
        """True while the verdict is hidden from `learner`: not revealed to the class, not
        answered, and (given a step) not probed there."""
        if self._revealed.get(trace_id):
            return False
        state = self.state(trace_id, learner)
        return not state.answered and (index is None or index not in state.probed)

    def probe(self, trace_id: str, learner: str, index: int) -> QuizState:
        """Spends one of the learner's probes on step `index` (free once unsealed there)."""
        state = self.state(trace_id, learner)
        if not self.sealed(trace_id, learner, index):
            return state
        if len(state.probed) >= self.max_probes:
            raise ProbesSpent(self.max_probes, list(state.probed))
        state.probed.append(index)
        return state

    def answer(self, trace_id: str, learner: str) -> QuizState:
        state = self.state(trace_id, learner)
        state.answered = True
        return state

    def reveal(self, trace_id: str) -> None:
        """The class's presenter revealed the fault: every learner of the trace sees every verdict."""
        self._revealed.put(trace_id, True)


# ---------------------------------------------------------------------- what a sealed answer omits
# (applied by app.answers to the answer itself, before it is encoded)

SEALED_CHECK = {"sealed": True}


def seal_step(view: dict) -> dict:
    """A step view without its verdict: the gradient check becomes {"sealed": true} and the
    warnings go (they include "The gradient check failed" and the softmax identity's
    deviation; a diverged run's NaN/inf is also in the trace summary's `first_nonfinite`)."""
    return view | {"gradcheck": SEALED_CHECK, "warnings": []}


# What a sealed Jacobian holds back: the recorded gradient beside J·dL/dp, their differences and
# the verdict. Side by side they are that op's gradient check, which a probe buys; p, dL/dp
# and J·dL/dp stay (each is worked out from what the step views show).
JACOBIAN_VERDICT = ("recorded", "max_abs_error", "max_rel_error", "ok", "vectors_figure")


def seal_jacobian(view: dict) -> dict:
    """The Jacobian and J·dL/dp without the comparison with the recorded gradient."""
    return {key: value for key, value in view.items() if key not in JACOBIAN_VERDICT} | {"sealed": True}
