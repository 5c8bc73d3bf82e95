"""What the film draws beyond a run's curves (docs/film.md): the attention frames on the probe sequence
(a bounded stretch, read from attention.npz: milliseconds) and which gradients build the head at a step
(xt_core.film.composition.composition_at: a replay, seconds; bounded by MAX_AHEAD and the run's
checkpoints, one at a time in the process (another asked meanwhile is a 503 to retry), each answer kept
in a small cache)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from fastapi import HTTPException

from app.errors import SpecError, check_between
from app.films.runs import opened
from app.settings import Settings
from app.words.said import Said
from xt_core.film.attention import LEVELS, read_frames
from xt_core.film.composition import composition_at
from xt_core.film.files import Run, RunError
from xt_core.film.rebuild import replayed_steps
from xt_core.lab.tasks import TASKS

MAX_FRAMES = 256  # frames one answer holds at most (a plan keeps at most MAX_ATTENTION_FRAMES: all of them)
MAX_AHEAD = 100  # the steps after `step` a composition answer replays and sums at most
CACHED = 32  # composition answers kept (each a few kB)
BUSY_RETRY_S = 5  # a composition asked while another replays: retry after this


def frames_answer(settings: Settings, name: str, start: int, stop: int | None) -> dict:
    """The frames of run `name` at steps in [start, stop): the probe's tokens and every head's
    attention (0..LEVELS per probability, the causal lower triangle row by row)."""
    run = opened(settings, name)
    stop = run.plan.steps if stop is None else stop
    check_between(("query", "start"), start, 0, run.plan.steps - 1)
    check_between(("query", "stop"), stop, start + 1, run.plan.steps)
    try:
        frames = read_frames(run.folder, run.plan, run.cfg)
    except (OSError, ValueError) as exc:
        raise HTTPException(404, detail=Said("film-error-unreadable-run", name=name)) from exc
    if frames is None:
        raise HTTPException(404, detail=Said("film-view-error-no-frames", name=name))
    picked = [i for i, s in enumerate(frames.step.tolist()) if start <= s < stop][:MAX_FRAMES]
    _, tokenizer, _ = TASKS[run.plan.task].setup(batch=1, seed=0)
    return {
        "name": name,
        "probe": {
            "period": run.plan.probe_period,
            "tokens": frames.tokens.tolist(),
            "labels": [tokenizer.decode([int(t)]) for t in frames.tokens],
        },
        "levels": LEVELS,
        "n_layer": run.cfg.n_layer,
        "n_head": run.cfg.n_head,
        "seq_len": run.cfg.seq_len,
        "step": frames.step[picked].tolist(),
        "probs": frames.probs[picked].tolist(),
    }


_cache: OrderedDict = OrderedDict()
_lock = threading.Lock()
_measuring = threading.Semaphore(1)  # a replay of up to 600 steps holds a build worker: one at a time


def composition_answer(settings: Settings, name: str, step: int, layer: int, ahead: int) -> dict:
    """composition_at(run, step, layer, ahead) with its cost (the steps replayed to reach step, the
    steps replayed after it, the seconds taken); the same question again answered from the cache."""
    run = opened(settings, name)
    check_composition(run, step, layer, ahead)
    key = (str(run.folder.resolve()), int(run.log.digest[-1]), step, layer, ahead)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return {**_cache[key], "cached": True}
    if not _measuring.acquire(blocking=False):
        said = Said("film-view-error-busy", seconds=BUSY_RETRY_S)  # as app.traces.admission.Overloaded answers
        raise HTTPException(503, detail=said, headers={"Retry-After": str(BUSY_RETRY_S)})
    began = time.perf_counter()
    try:
        found = composition_at(run, step, layer, ahead)
    except RunError as exc:
        raise HTTPException(409, detail=Said("film-view-error-replay", name=name, step=step)) from exc
    finally:
        _measuring.release()
    found |= {
        "name": name,
        "replayed": replayed_steps(run, step),
        "seconds": round(time.perf_counter() - began, 3),
        "previous": run.log.previous[step, :layer].tolist(),  # of the heads whose writes the split names
    }
    with _lock:
        _cache[key] = found
        while len(_cache) > CACHED:
            _cache.popitem(last=False)
    return {**found, "cached": False}


def check_composition(run: Run, step: int, layer: int, ahead: int) -> None:
    """Each field within its bound, named when not (422)."""
    cfg = run.cfg
    if cfg.family != "llama" or cfg.qkv_bias or cfg.qk_norm:  # the split reads RMSNorm'd writes, bias-free
        raise SpecError(("path", "name"), Said("film-view-error-family", family=cfg.family))
    last = run.plan.steps - 2  # a step needs one step after it
    check_between(("query", "step"), step, 0, last)
    check_between(("query", "layer"), layer, 1, run.cfg.n_layer - 1)
    most = min(MAX_AHEAD, run.plan.steps - 1 - step)
    if not 1 <= ahead <= most:
        raise SpecError(("query", "ahead"), Said("film-view-error-ahead", most=most, step=step, value=ahead))
