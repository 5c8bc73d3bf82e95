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

The probes spent and the answers are counted where every worker sees them (app.buglab.probes: in
Redis with the sessions, else in this process), and bounded per client address as well as per
learner; each process keeps its learners' states for sealing (bounded, least recently used first
out), brought up to date by the probe, the answer and GET .../quiz. In-process counts: a restart
forgets them, and the page posts its remembered answer again."""

from __future__ import annotations

from dataclasses import dataclass, field

from fastapi import HTTPException

from app import words
from app.buglab.probes import MemoryProbeCounts, Spent
from app.traces.cache import LRU
from app.words.said import Said

QUIZ_LEARNERS = 100_000  # (quiz trace, learner) pairs remembered (a few hundred bytes each)
REVEALED_TRACES = 10_000  # class quizzes their presenter revealed


class ProbesSpent(Exception):
    """Every probe of this learner is used (or every new step the learners of its address may
    probe: app.buglab.probes): they answer, or probe a step already probed. The route words it in
    the request's language (buglab-probes-spent, quiz-probes-spent-address)."""

    def __init__(self, most: int, probed: list[int], by_address: bool = False):
        self.most, self.probed, self.by_address = most, probed, by_address
        super().__init__(most, probed, by_address)

    def words(self, lang: str) -> str:
        if self.by_address:
            return words.t(lang, "quiz-probes-spent-address", most=self.most)
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

    def __init__(self, max_probes: int, entries: int = QUIZ_LEARNERS, per_address: int | None = None, counts=None):
        self.max_probes = max_probes
        self.per_address = max_probes if per_address is None else per_address
        self.counts = counts or MemoryProbeCounts()  # the probes spent, as every worker sees them
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

    async def probe(self, trace_id: str, learner: str, address: str, index: int) -> QuizState:
        """Spends one of the learner's probes on step `index` (free once unsealed there), counted
        with every worker's (app.buglab.probes): within max_probes for the learner and
        per_address new steps for the learners of its address."""
        state = self.state(trace_id, learner)
        if not self.sealed(trace_id, learner, index):
            return state
        spent, probed = await self.counts.spend(trace_id, learner, address, index, self.max_probes, self.per_address)
        state.probed[:] = probed
        state.answered = state.answered or spent == Spent.ANSWERED
        if spent in (Spent.LEARNER, Spent.ADDRESS):
            most = self.max_probes if spent == Spent.LEARNER else self.per_address
            raise ProbesSpent(most, list(probed), by_address=spent == Spent.ADDRESS)
        return state

    async def answer(self, trace_id: str, learner: str) -> QuizState:
        await self.counts.answered(trace_id, learner)
        state = self.state(trace_id, learner)
        state.answered = True
        return state

    async def refresh(self, trace_id: str, learner: str | None) -> QuizState:
        """The learner's state as every worker counted it (a probe or an answer given to another)."""
        state = self.state(trace_id, learner)
        if learner is not None:
            probed, answered = await self.counts.load(trace_id, learner)
            state.probed[:] = probed or state.probed
            state.answered = state.answered or answered
        return state

    def reveal(self, trace_id: str) -> None:
        """The class's presenter revealed the fault: every learner of the trace sees every verdict."""
        self._revealed.put(trace_id, True)


# ---------------------------------------------------------------------- what a sealed answer omits
# (applied by app.answers to the answer itself, before it is encoded)

SEALED_CHECK = {"sealed": True}


def seal_step(view: dict, hidden: frozenset[str] = frozenset()) -> dict:
    """A step view without its verdict: the gradient check becomes {"sealed": true} and the
    warnings go (they include "The gradient check failed" and the softmax identity's
    deviation; a diverged run's NaN/inf is also in the trace summary's `first_nonfinite`).
    The figures of `hidden` (hidden_figures: a quiz's own weights) go too."""
    return without_figures(view, hidden) | {"gradcheck": SEALED_CHECK, "warnings": []}


def without_figures(view: dict, hidden: frozenset[str]) -> dict:
    """The step view without the figures of `hidden` (ids)."""
    if not hidden:
        return view
    return view | {"figures": [figure for figure in view.get("figures", []) if figure["id"] not in hidden]}


# What a sealed Jacobian holds back: the recorded gradient beside J·dL/dp, their differences and
# the verdict. Side by side they are that op's gradient check, which a probe buys; p, dL/dp
# and J·dL/dp stay (each is worked out from what the step views show).
JACOBIAN_VERDICT = ("recorded", "max_abs_error", "max_rel_error", "ok", "vectors_figure")


def seal_jacobian(view: dict) -> dict:
    """The Jacobian and J·dL/dp without the comparison with the recorded gradient."""
    return {key: value for key, value in view.items() if key not in JACOBIAN_VERDICT} | {"sealed": True}


# ---------------------------------------------------------------------- a quiz's own weights
# A quiz trace runs on weights of its own (xt_core.lab.quiz_weights), which neither its spec nor
# anything sent before the answer gives away: with them, the correct trace could be rebuilt and
# compared step by step, which points at the broken op without checking any rule. Its
# parameters' values (a tensor, a slice, a step's picture of them, the update's ΔW: weight decay
# moves a weight by a share of itself) are refused or left out until the learner answered or the
# class's presenter revealed. Their gradients stay: each is checked from the step's own numbers.


def hides_weights(spec) -> bool:
    """Whether a trace runs on a quiz's hidden weights (a quiz, or its correct twin for the diff)."""
    return spec.hidden_weights is not None


def hidden_figures(ctx) -> frozenset[str]:
    """The step-view figures that show a quiz's own weights: every parameter drawn as an input,
    and the update's ΔW (app.steps.forward, app.steps.update)."""
    if not hides_weights(ctx.spec):
        return frozenset()
    return frozenset(f"input.{name}" for name in ctx.trace.param_names) | {"update.delta"}


def weights_refused(trace_id: str, name: str | None = None) -> HTTPException:
    """The 403 for a parameter's value (`name`) or the update step's ΔW (None) of a trace whose
    weights are hidden from the request's learner, in the request's language."""
    if name is None:
        return HTTPException(403, detail=Said("quiz-update-hidden"))
    return HTTPException(403, detail=Said("quiz-weights-hidden", name=name, trace_id=trace_id))
