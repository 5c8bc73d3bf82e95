"""The training step's last part, the update, and short training runs.

trace = train_step(cfg, params, inputs, targets, AdamW(lr=3e-3), state)
trace.update.params   # the parameters after the step; trace.update.loss_after on the same batch
"""

from __future__ import annotations

import dataclasses
import math
from collections import ChainMap
from collections.abc import Callable, Iterator, Mapping

import numpy as np

from xt_core.config import Config
from xt_core.memory import reusable_empty
from xt_core.model import build_tape, check_params, check_tokens, forward_backward
from xt_core.tape import Node, lookup_of_rows, replay_loss, replay_losses
from xt_core.trace import Trace
from xt_core.training.optim import AdamW, PerParam, apply_update, param_step
from xt_core.training.update_blocks import stepped

SGD_TEX = r"b \leftarrow \mu b + g, \qquad W \leftarrow W - \eta\, b"
ADAMW_TEX = (
    r"m \leftarrow \beta_1 m + (1-\beta_1) g, \quad v \leftarrow \beta_2 v + (1-\beta_2) g^2, \quad "
    r"W \leftarrow W - \eta \Big(\frac{m / (1-\beta_1^t)}{\sqrt{v / (1-\beta_2^t)} + \epsilon_{\mathrm{adam}}} + \lambda_W W\Big), "
    r"\ \lambda_W = \lambda \text{ (a matrix)},\ 0 \text{ (a norm gain)}"
)


def forward_loss(cfg: Config, params: Mapping, inputs, targets) -> float:
    """The loss alone (no backward, nothing kept). `params` may be computed on demand (an
    Update's new weights, weights moved along -g): each is built when an op reads it and
    dropped after, so a real model's forward never holds a second copy of its weights."""
    if isinstance(params, dict):
        check_params(cfg, params)
    tokens, targets = check_tokens(cfg, inputs, targets)
    return replay_loss(build_tape(cfg), {"tokens": tokens, "targets": targets}, 0, replace=params)


def train_step(cfg: Config, params: dict, inputs, targets, optimizer, state: dict | None = None, **kwargs) -> Trace:
    """forward_backward, then one optimizer update, recorded as the trace's last step."""
    trace = forward_backward(cfg, params, inputs, targets, keep_param_grads=True, **kwargs)
    # not held: the views recompute ΔW per parameter (a real model's would double the trace)
    update = apply_update(optimizer, params, trace.grads, state, trace.loss, hold=False)
    update.loss_after = _loss_after(
        cfg, trace, update, lambda table, rows: stepped(optimizer, table, params, trace.grads, state or {}, rows=rows)
    )
    tex = ADAMW_TEX if isinstance(optimizer, AdamW) else SGD_TEX
    trace.attach_update(update, tex)
    trace.release_param_grads()  # read again (a view's ΔW), each is recomputed with its layer
    return trace


def lr_schedule(lr: float, steps: int, warmup: int = 0, decay: str = "constant") -> Callable[[int], float]:
    """step -> learning rate: linear warm-up from lr / warmup to lr over the first `warmup` steps,
    then constant or a cosine from lr down to lr / 2 * (1 + cos(pi * (steps - 1) / steps)), never 0."""
    if decay not in ("constant", "cosine"):
        raise ValueError(f'decay must be "constant" or "cosine", got {decay!r}')
    if isinstance(warmup, bool) or not isinstance(warmup, int) or not 0 <= warmup <= steps:
        raise ValueError(f"warmup must be an integer in [0, steps = {steps}], got {warmup!r}")

    def at(step: int) -> float:
        scale = (step + 1) / warmup if step < warmup else 1.0
        if decay == "cosine":
            scale *= 0.5 * (1 + math.cos(math.pi * step / steps))
        return lr * scale

    return at


def train(
    cfg: Config,
    params: dict,
    optimizer,
    batches: Iterator[tuple[np.ndarray, np.ndarray]],
    steps: int,
    progress: Callable[[int, float], None] | None = None,
    lr_at: Callable[[int], float] | None = None,
) -> tuple[dict, dict, list[float]]:
    """`steps` updates on successive batches; returns (params, optimizer state, losses).
    lr_at(step) (e.g. lr_schedule) replaces the optimizer's lr at each step; without it lr is constant.
    Deterministic: the same params, optimizer and batches give the same bits."""
    state: dict = {}
    losses = []
    params = dict(params)  # this loop's own dict (emptied by each update): the caller's is not changed
    for step in range(steps):
        inputs, targets = next(batches)
        trace = forward_backward(cfg, params, inputs, targets, keep_param_grads=True)
        stepper = optimizer if lr_at is None else dataclasses.replace(optimizer, lr=lr_at(step))
        loss = trace.loss
        params, state = _stepped_in_turn(stepper, params, trace, state)
        losses.append(loss)
        if progress:
            progress(step, loss)
        del trace  # before the next step's trace is made: one step's at a time
    return params, state, losses


def _stepped_in_turn(optimizer, params: dict, trace: Trace, state: dict) -> tuple[dict, dict]:
    """apply_update's new weights and state (the same bits: p + ΔW from the same param_step), made one
    parameter at a time, each old weight and gradient let go once its new weight is made: the
    update holds one parameter's ΔW beside the weights and gradients, not new weights and every
    ΔW beside the old (SmolLM2: 1.1 GB less). `params` is emptied (train's own dict); a borrowed
    checkpoint's weights stay with their owner."""
    new_params, new_state = {}, {}
    for name in list(params):
        p, g = params.pop(name), trace.hand_over_param(name)
        delta, new_state[name] = param_step(optimizer, name, p, g, state)
        new_params[name] = p + delta
        del p, g, delta
    return new_params, new_state


def line_search(cfg: Config, trace: Trace, params: dict, etas, grad_norm_sq: float | None = None) -> dict:
    """loss(θ - η g) along the gradient, beside the first-order prediction loss - η ||g||²
    (grad_norm_sq: ||g||², if the caller has it). The forwards of every η run op by op in
    lockstep (each weight and its gradient read from memory once for all of them, not once per
    η), and the embedding lookup moves only the rows its tokens read."""
    grads = trace.grads
    g2 = grad_norm_sq if grad_norm_sq is not None else squared_norm(grads.values())
    nodes = build_tape(cfg)
    lookup_rows = [lambda t, rows, eta=eta: _moved(np.asarray(params[t])[rows], grads[t][rows], eta) for eta in etas]
    start, looked_up = _given_lookups(nodes[0], trace.tokens, lookup_rows)
    # every other parameter moved by -eta * g, built when an op reads it
    moved = [
        ChainMap(first, PerParam(params, lambda n, eta=eta: _moved(params[n], grads[n], eta)))
        for first, eta in zip(looked_up, etas, strict=True)
    ]
    tensors = {"tokens": trace.tokens, "targets": trace.targets}
    actual = replay_losses(nodes, tensors, start, moved) if moved else []
    return {
        "eta": [float(e) for e in etas],
        "loss": actual,
        "first_order": [trace.loss - float(e) * g2 for e in etas],
        "grad_norm_sq": g2,
    }


def _given_lookups(first: Node, tokens: np.ndarray, tables: list[Callable]) -> tuple[int, list[dict]]:
    """(where replays start, what each replay takes as given): where the tape starts with an
    embedding lookup, its output from only the rows the tokens read, `tables[k](table name, rows)`
    being those rows as replay k sees the table (the same bits as those rows of the whole table
    built: a vocabulary's is 49,152 rows), and the replays start after it; else (0, nothing)."""
    if first.kind != "embedding" or first.inputs[0] != "tokens":
        return 0, [{} for _ in tables]
    table = first.inputs[1]
    rows, lookup = lookup_of_rows(first, tokens)
    return 1, [{first.name: lookup(table_rows(table, rows))} for table_rows in tables]


def _loss_after(cfg: Config, trace: Trace, update, table_rows: Callable) -> float:
    """forward_loss at the update's new weights (built as each op reads them), the lookup's
    from the rows its tokens read (table_rows(table name, rows))."""
    nodes = build_tape(cfg)
    start, given = _given_lookups(nodes[0], trace.tokens, [table_rows])
    tensors = {"tokens": trace.tokens, "targets": trace.targets}
    return replay_losses(nodes, tensors, start, [ChainMap(given[0], update.params)])[0]


def squared_norm(arrays) -> float:
    """Σ a² over every array, accumulated in float64."""
    return sum(float(np.sum(np.square(a, dtype=np.float64))) for a in arrays)


def _moved(p: np.ndarray, g: np.ndarray, eta: float) -> np.ndarray:
    """p - eta g as one new array (a vocabulary's (V, C) one in reused memory, not fresh pages:
    xt_core.memory; the lockstep replays each drop theirs before the next builds its own)."""
    moved = np.multiply(g, -p.dtype.type(eta), out=reusable_empty(np.shape(p), np.result_type(g, p)))
    moved += p
    return moved
