"""The optimizer update step's gradient check: the gradient the optimizer used, all parameters
at once, along one random direction of the whole parameter space (xt_core.checks.directions.Direction:
windows of one random block), against float64 central differences of the true loss."""

from __future__ import annotations

import math
import os
import threading
from collections import ChainMap
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from xt_core.checks import directions
from xt_core.checks.directional import REL_STEP, DirectionCheck, measured
from xt_core.checks.directions import Direction, lookup_rows, moved_pair
from xt_core.checks.twin import param_grad_dot, twin_of
from xt_core.tape import replay_losses
from xt_core.trace import Trace

# The replays run on a second thread (numpy releases the GIL in its loops and matmuls) while the
# caller's runs the float64 forward and backward: on two free cores the check takes the longer of
# the two (SmolLM2: ~1.6 s of ~3.0 s CPU), on a busy machine about their sum. One thread for the
# process, not one per check: its malloc arena (~150 MB of freed memory kept) is made once.
_replays: dict[int, ThreadPoolExecutor] = {}  # by process id: a forked child starts its own
_replays_lock = threading.Lock()


def _replay_thread() -> ThreadPoolExecutor:
    with _replays_lock:
        pid = os.getpid()
        if pid not in _replays:
            _replays.clear()
            _replays[pid] = ThreadPoolExecutor(max_workers=1, thread_name_prefix="xt-update-replays")
        return _replays[pid]


def update_check(trace: Trace, seed: int, shown: bool) -> DirectionCheck:
    """<dL/dθ, u> of the step's parameter gradients. A float32 trace's float64 gradient comes
    from one float64 forward and backward that dots each parameter gradient as it is made
    (xt_core.checks.twin.param_grad_dot: no twin needed); the two replays at θ ± h u run in lockstep,
    u cut once per weight, and only the rows the tokens read of the embedding table are moved."""
    nodes, names = trace.nodes, trace.param_names
    params = {name: trace.values[name] for name in names}
    direction = Direction(seed, params)
    eps = REL_STEP * max(min(_rms(params[n]) for n in names), 1e-3)
    ids = {"tokens": trace.tokens, "targets": trace.targets}
    lookup = nodes[0].kind == "embedding" and nodes[0].inputs[0] == "tokens" and nodes[0].inputs[1] in params

    # The replays' (V, C) weights moved in float64 (226 MB each for SmolLM2) wait until the float64
    # backward has dotted its own (V, C) gradient (and dropped it and the LM head's cast weight):
    # never both threads' at once, whatever the machine's load does to their timing.
    large_done = threading.Event()

    def losses(h: float) -> tuple[float, float]:
        sides = list(moved_pair(params, direction, h, large_done.wait))
        if lookup:  # the replays start after the lookup
            looked_up = lookup_rows(nodes[0], params, trace.tokens, direction, h)
            sides = [ChainMap({nodes[0].name: x}, side) for x, side in zip(looked_up, sides, strict=True)]
        plus, minus = replay_losses(nodes, ids, 1 if lookup else 0, sides, dtype=np.float64)
        return plus, minus

    def numeric_and_shown() -> tuple[tuple[float, float], float | None]:
        """The replays at θ ± eps u; then <the float32 gradient on screen, u> (param_grad_dot's sum)."""
        at_eps = losses(eps)
        return at_eps, sum(direction.dots(n, trace.grads[n])[0] for n in names) if shown else None

    def dotted(name: str) -> None:  # the LM head's (V, C) gradient is the first large one the backward makes
        if np.size(params[name]) > directions.LARGE:  # (the lookup's comes last, zero but for the batch's rows)
            large_done.set()

    side = _replay_thread().submit(numeric_and_shown)
    try:
        analytic = _analytic(trace, params, ids, direction, dotted)
    finally:
        large_done.set()  # never leaves the replay thread waiting (the backward may raise)
    at_eps, on_screen = side.result()
    known = {eps: at_eps}
    return measured("parameters", eps, lambda h: known.pop(h) if h in known else losses(h), analytic, on_screen)


def _analytic(trace: Trace, params: dict, ids: dict, direction: Direction, dotted) -> float:
    """<dL/dθ, u> in float64; dotted(name) as each parameter gradient is dotted (float32 traces)."""
    if trace.dtype == np.float64:
        return twin_of(trace).param_grad_dot(direction)[0]
    return param_grad_dot(trace.nodes, params, *ids.values(), direction, None, trace.backward_override, dotted)[0]


def _rms(x: np.ndarray) -> float:
    """RMS of x's finite entries, one dot product in x's own dtype if all are finite (plenty for a
    step size; a float64 cast of a real model's 135M weights cost its update check ~0.4 s)."""
    flat = np.reshape(x, -1)
    q = float(np.dot(flat, flat))
    if not math.isfinite(q):
        flat = np.asarray(flat[np.isfinite(flat)], np.float64)
        q = float(np.dot(flat, flat))
    return math.sqrt(q / flat.size) if flat.size else 1.0
