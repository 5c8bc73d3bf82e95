"""A run lesson's claims about its recorded run (app.lessons.run_schema), measured from the run: its
log of every step (the loss, every head's induction and previous-token score: xt_core.film) or, for
K-composition, its steps replayed (xt_core.film.composition.composition_at, cached). Each kind is
one function returning app.lessons.claims.Measured, as a trace's claims do."""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from app.lessons import run_schema, sentences
from app.lessons.claims import ClaimError, Measured, within
from xt_core.film.composition import composition_at
from xt_core.film.files import Run
from xt_core.film.rebuild import replayed_steps

SCORE_CLAIMED = {
    ("crossing", "induction"): "lesson-run-claim-crossing-induction",
    ("crossing", "previous"): "lesson-run-claim-crossing-previous",
    ("score", "induction"): "lesson-run-claim-score-induction",
    ("score", "previous"): "lesson-run-claim-score-previous",
    ("heads", "induction"): "lesson-run-claim-heads-induction",
    ("heads", "previous"): "lesson-run-claim-heads-previous",
}
COMPOSITION_CLAIMED = {  # by (over, aligns_best)
    ("summed", False): "lesson-run-claim-composition-summed",
    ("summed", True): "lesson-run-claim-composition-summed-best",
    ("one_step", False): "lesson-run-claim-composition-one-step",
    ("one_step", True): "lesson-run-claim-composition-one-step-best",
}


def _step(run: Run, step: int, field: str) -> int:
    if step >= run.plan.steps:
        raise ClaimError(f"{field} = {step}: the run has steps 0 to {run.plan.steps - 1}")
    return step


def _scores(run: Run, claim) -> np.ndarray:
    """(steps, heads): layer claim.layer's heads' scores over the run."""
    scores = run.log.induction if claim.score == "induction" else run.log.previous
    if claim.layer >= scores.shape[1]:
        raise ClaimError(f"layer = {claim.layer}: the run's model has layers 0 to {scores.shape[1] - 1}")
    return np.asarray(scores[:, claim.layer], np.float64)


def _flat_stretches(fall: np.ndarray, first: int) -> list[tuple[int, int]]:
    """Each maximal stretch of True in `fall` as (first step, last step); fall[i] is step first + i."""
    edges = np.diff(np.concatenate([[0], fall.astype(np.int8), [0]]))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
    return [(first + int(a), first + int(b)) for a, b in zip(starts, stops, strict=True)]


def plateau(claim: run_schema.PlateauClaim, run: Run) -> Measured:
    """At step t the loss falls at (mean of the w steps before t − mean of the w steps from t) · 100 / w
    per 100 steps; the plateau is the longest stretch below max_fall ending before the steepest fall."""
    loss, w = np.asarray(run.log.loss, np.float64), claim.window
    if 2 * w >= len(loss):
        raise ClaimError(f"window = {w}: the run's {len(loss)} steps hold no two windows")
    sums = np.concatenate([[0.0], np.cumsum(loss)])
    t = np.arange(w, len(loss) - w + 1)
    fall = ((sums[t] - sums[t - w]) - (sums[t + w] - sums[t])) / w * 100 / w
    steepest = int(run.steepest["step"])
    stretches = [s for s in _flat_stretches(fall < claim.max_fall, w) if s[1] < steepest]
    if not stretches:
        said = sentences.Said("lesson-run-measured-plateau-none", {"steepest": steepest})
        values = {"length": 0, "first": -1, "last": -1, "loss": float("nan"), "steepest": steepest}
        values |= {"max_fall": claim.max_fall, "window": w}
        return Measured(False, values, "length", _plateau_claimed(claim), said)
    first, last = max(stretches, key=lambda s: s[1] - s[0])
    length = last - first + 1
    values = {"length": length, "first": first, "last": last, "loss": float(loss[first : last + 1].mean())}
    values |= {"max_fall": claim.max_fall, "window": w}
    said = sentences.Said("lesson-run-measured-plateau", {"first": first, "last": last, "length": length})
    return Measured(within(length, claim.min, claim.max), values | {"steepest": steepest}, "length",
                    _plateau_claimed(claim), said)  # fmt: skip


def _plateau_claimed(claim: run_schema.PlateauClaim) -> sentences.Said:
    condition = sentences.bounds(claim.min, claim.max)
    return sentences.Said(
        "lesson-run-claim-plateau", {"fall": claim.max_fall, "window": claim.window, "condition": condition}
    )


def loss(claim: run_schema.LossClaim, run: Run) -> Measured:
    _step(run, claim.to, "to")
    mean = float(np.mean(run.log.loss[claim.from_ : claim.to + 1], dtype=np.float64))
    said = {"first": claim.from_, "last": claim.to, "condition": sentences.bounds(claim.min, claim.max)}
    return Measured(
        within(mean, claim.min, claim.max),
        {"loss": mean, "from": claim.from_, "to": claim.to},
        "loss",
        sentences.Said("lesson-run-claim-loss", said),
        sentences.Said("lesson-measured-value", {"value": mean}),
    )


def crossing(claim: run_schema.CrossingClaim, run: Run) -> Measured:
    scores = _scores(run, claim)
    past = np.flatnonzero(scores.max(axis=1) > claim.above)
    said = {"layer": claim.layer, "above": claim.above, "condition": sentences.bounds(claim.min, claim.max)}
    claimed = sentences.Said(SCORE_CLAIMED[("crossing", claim.score)], said)
    if not past.size:
        values = {"step": -1, "head": -1, "score": float(scores.max()), "above": claim.above}
        return Measured(False, values, "step", claimed, sentences.Said("lesson-run-measured-crossing-never"))
    step = int(past[0])
    head = int(np.argmax(scores[step]))
    values = {"step": step, "head": head, "score": float(scores[step, head])}
    told = sentences.Said("lesson-run-measured-crossing", dict(values))
    values["above"] = claim.above
    return Measured(within(step, claim.min, claim.max), values, "step", claimed, told)


def score(claim: run_schema.ScoreClaim, run: Run) -> Measured:
    scores = _scores(run, claim)
    if claim.head >= scores.shape[1]:
        raise ClaimError(f"head = {claim.head}: layer {claim.layer} has heads 0 to {scores.shape[1] - 1}")
    x = float(scores[_step(run, claim.at, "at"), claim.head])
    said = {"layer": claim.layer, "head": claim.head, "step": claim.at}
    return Measured(
        within(x, claim.min, claim.max),
        {"score": x, "at": claim.at, "head": claim.head},
        "score",
        sentences.Said(
            SCORE_CLAIMED[("score", claim.score)], said | {"condition": sentences.bounds(claim.min, claim.max)}
        ),
        sentences.Said("lesson-measured-value", {"value": x}),
    )


def _listed(heads: list[int]):
    return ", ".join(map(str, heads)) if heads else sentences.Said("lesson-run-no-heads")


def heads(claim: run_schema.HeadsClaim, run: Run) -> Measured:
    scores = _scores(run, claim)[_step(run, claim.at, "at")]
    above = [h for h in range(len(scores)) if scores[h] > claim.above]
    rest = [float(scores[h]) for h in range(len(scores)) if h not in above]
    values = {
        "heads": ", ".join(map(str, above)) or "-",
        "count": len(above),
        "least": float(min(scores[above])) if above else float("nan"),
        "rest": max(rest) if rest else float("nan"),
        "above": claim.above,
        "at": claim.at,
    }
    said = {"layer": claim.layer, "step": claim.at, "above": claim.above, "heads": _listed(claim.equals)}
    return Measured(
        above == claim.equals,
        values,
        "heads",
        sentences.Said(SCORE_CLAIMED[("heads", claim.score)], said),
        sentences.Said("lesson-run-measured-heads", {"heads": _listed(above)}),
    )


# composition_at replays the run (about 25 ms of CPU a step): each answer is kept, by the run's
# folder and the recorded weights it starts and ends at, so a lesson is measured once per process
_composition: OrderedDict[tuple, dict] = OrderedDict()
_composition_lock = threading.Lock()
KEEP_COMPOSITIONS = 32


def composition_of(run: Run, step: int, layer: int, ahead: int) -> dict:
    """composition_at(run, step, layer, ahead, verify=False), cached (bounded: MAX_REPLAYED steps)."""
    _step(run, step + ahead, "step + ahead")
    replayed = replayed_steps(run, step) + ahead
    if replayed > run_schema.MAX_REPLAYED:
        raise ClaimError(
            f"step = {step}, ahead = {ahead} replay {replayed} steps of the run (from its checkpoint at "
            f"{step - replayed_steps(run, step)}), over {run_schema.MAX_REPLAYED}: choose a step nearer a checkpoint"
        )
    digests = (int(run.log.digest[step]), int(run.log.digest[step + ahead]))
    key = (str(run.folder.resolve()), digests, step, layer, ahead)
    with _composition_lock:
        if key in _composition:
            _composition.move_to_end(key)
            return _composition[key]
    answer = composition_at(run, step, layer, ahead, verify=False)
    with _composition_lock:
        _composition[key] = answer
        while len(_composition) > KEEP_COMPOSITIONS:
            _composition.popitem(last=False)
    return answer


def composition(claim: run_schema.CompositionClaim, run: Run) -> Measured:
    n_head, before = run.cfg.n_head, claim.layer - 1
    if claim.layer >= run.cfg.n_layer or any(h >= n_head for h in claim.heads):
        raise ClaimError(
            f"layer {claim.layer}, heads {claim.heads}: the model has {run.cfg.n_layer} layers of {n_head} heads"
        )
    try:
        answer = composition_of(run, claim.step, claim.layer, claim.ahead)
    except ValueError as exc:  # a step or layer composition_at refuses
        raise ClaimError(str(exc)) from None
    parts = answer["projections"][claim.projection][claim.over]["writes"]
    share = sum(parts[f"L{before}.head{h}"]["share"] for h in claim.heads)
    cosines = [parts[f"L{before}.head{h}"]["cosine_with_change"] for h in claim.heads]
    others = [parts[f"L{before}.head{h}"]["cosine_with_change"] for h in range(n_head) if h not in claim.heads]
    best = min(cosines) > max(others, default=-1.0)
    values = {
        "share": share, "cosine": min(cosines), "others": max(others, default=float("nan")),
        "step": claim.step, "ahead": claim.ahead, "exact": "yes" if answer["exact"] else "no",
        "heads": ", ".join(map(str, claim.heads)),
    }  # fmt: skip
    said = {
        "step": claim.step, "layer": claim.layer, "before": before, "heads": _listed(claim.heads),
        "weight": "W_K" if claim.projection == "wk" else "W_Q", "ahead": claim.ahead,
        "condition": sentences.bounds(claim.min, claim.max),
    }  # fmt: skip
    return Measured(
        within(share, claim.min, claim.max) and (best or not claim.aligns_best),
        values,
        "share",
        sentences.Said(COMPOSITION_CLAIMED[(claim.over, claim.aligns_best)], said),
        sentences.Said(
            "lesson-run-measured-composition", {"share": share, "cosine": min(cosines), "others": values["others"]}
        ),
    )


KINDS = {
    run_schema.PlateauClaim: plateau,
    run_schema.LossClaim: loss,
    run_schema.CrossingClaim: crossing,
    run_schema.ScoreClaim: score,
    run_schema.HeadsClaim: heads,
    run_schema.CompositionClaim: composition,
}


def measure(claim, run: Run) -> Measured:
    """The claim measured on the run (ClaimError when it names a step, layer or head the run lacks)."""
    return KINDS[type(claim)](claim, run)
