"""The quiz keeps its verdict until the learner answers. Before the answer, a quiz trace's
answers carry the numbers (every tensor, gradient, figure, the comparison with the correct
backward) but no verdict: no gradient check result, no "the check failed" warning, no
chain-rule ✓/✗, no "this op is the broken one", no chart of every step's check. A learner
may spend up to `Settings.quiz_probes` probes: each runs the gradient check of one step of
their choice, counted here on the server per trace (a reload does not refund them).

The ledger lives in the server process (bounded, least recently used first out): a restart
forgets probes and answers, and the page posts its remembered answer again."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.traces.cache import LRU

QUIZ_TRACES = 10_000  # quiz traces remembered (a few hundred bytes each)


class ProbesSpent(Exception):
    """Every probe of this quiz is used: the learner answers, or probes a step already probed."""


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
    """Per quiz trace id: the steps probed and whether the quiz was answered. Touched only on
    the event loop (async routes), so no lock beyond the LRU's own."""

    def __init__(self, max_probes: int, entries: int = QUIZ_TRACES):
        self.max_probes = max_probes
        self._states: LRU[QuizState] = LRU(entries)

    def state(self, trace_id: str) -> QuizState:
        state = self._states.get(trace_id)
        if state is None:
            state = QuizState()
            self._states.put(trace_id, state)
        return state

    def sealed(self, trace_id: str, index: int | None = None) -> bool:
        """True while the verdict is hidden: not answered, and (given a step) not probed there."""
        state = self.state(trace_id)
        return not state.answered and (index is None or index not in state.probed)

    def probe(self, trace_id: str, index: int) -> QuizState:
        """Spends a probe on step `index` (free once answered, or on a step already probed)."""
        state = self.state(trace_id)
        if state.answered or index in state.probed:
            return state
        if len(state.probed) >= self.max_probes:
            raise ProbesSpent(
                f"all {self.max_probes} probes of this quiz are spent (steps "
                f"{', '.join(map(str, state.probed))}); answer the quiz to see every check"
            )
        state.probed.append(index)
        return state

    def answer(self, trace_id: str) -> QuizState:
        state = self.state(trace_id)
        state.answered = True
        return state


# ---------------------------------------------------------------------- what a sealed answer omits
# (applied by app.steps.answers to the answer itself, before it is encoded)

SEALED_CHECK = {"sealed": True}


def seal_step(view: dict) -> dict:
    """A step view without its verdict: the gradient check becomes {"sealed": true} and the
    warnings go (they include "The gradient check failed" and the softmax identity's
    deviation; a diverged run's NaN/inf is also in the trace summary's `first_nonfinite`)."""
    return view | {"gradcheck": SEALED_CHECK, "warnings": []}


def seal_jacobian(view: dict) -> dict:
    """The Jacobian's numbers without the chain rule's ✓/✗."""
    return {key: value for key, value in view.items() if key != "ok"}


def seal_diff(view: dict) -> dict:
    """Faulty against correct, tensor by tensor, without the sentence that names the broken op."""
    return {key: value for key, value in view.items() if key != "verdict"}
