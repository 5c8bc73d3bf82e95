"""One recorded training step of the model a config names: forward, loss, backward.

The model itself is its family's script (xt_core/families: Llama's is xt_core/families/llama.py,
the math in its docstring), chosen by cfg.family; this module runs it: it checks the parameters
and token ids, runs the tape forward and backward and returns the Trace. Recorded tensors are
declared in xt_core/names.py (name, axes, role, words), which the tape's nodes are made from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

import numpy as np

from xt_core.config import Config
from xt_core.families.registry import family_of
from xt_core.handover import HandOver
from xt_core.memory import keep_freed_memory
from xt_core.names import TOKEN_IDS
from xt_core.recompute import RECOMPUTED, Boundaries, Segments, activation_of, built_forwards, forward_finite
from xt_core.tape import KeepOnly, Node, accumulate, run_backward, run_forward
from xt_core.trace import Trace

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def param_shapes(cfg: Config) -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape, as the config's family declares them; Linear weights are
    (in, out): y = x @ W."""
    return family_of(cfg).param_shapes(cfg)


def init_params(cfg: Config, seed: int = 0, dtype=np.float32) -> dict[str, np.ndarray]:
    """Seeded random init: norm gains 1; Qwen2's q/k/v biases N(0, 1/C), GPT-2's biases 0; weights N(0, 1/fan_in)
    so activations keep unit scale and a random model's attention is not uniform; embeddings (GPT-2's position
    table too) N(0, 1/C) so tied
    logits start near unit scale. Drawn in float64, then cast: float32 and float64 models
    of one seed hold the same numbers."""
    dtype = np.dtype(dtype)
    if dtype not in FLOAT_DTYPES:
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**63:
        raise ValueError(f"seed must be an integer in [0, 2^63), got {seed!r}")
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in param_shapes(cfg).items():
        if len(shape) == 1 and cfg.family == "gpt2":  # GPT-2's init: gains 1, biases 0
            value = np.zeros(shape) if _is_bias(name) else np.ones(shape)
        elif name.endswith((".bq", ".bk", ".bv")):  # Qwen2's biases: small, not 0, so the step shows them
            value = rng.standard_normal(shape) / np.sqrt(cfg.n_embd)
        elif len(shape) == 1:
            value = np.ones(shape)
        elif name in ("tok_embeddings", "output", "pos_embeddings"):
            value = rng.standard_normal(shape) / np.sqrt(cfg.n_embd)
        else:
            value = rng.standard_normal(shape) / np.sqrt(shape[0])
        params[name] = value.astype(dtype)
    return params


def _is_bias(name: str) -> bool:
    """A bias of GPT-2's parameters: a norm's (attention_norm_bias) or a linear's (attention.bq, feed_forward.b1)."""
    last = name.rsplit(".", 1)[-1]
    return last.endswith("_bias") or (len(last) == 2 and last[0] == "b")


def build_tape(cfg: Config) -> list[Node]:
    """The step's ops in execution order, as the config's family's script makes them; each node is
    named after the tensor it produces (xt_core/names.py: its axes, role and words)."""
    return family_of(cfg).build_tape(cfg)


def check_params(cfg: Config, params: dict[str, np.ndarray]) -> np.dtype:
    """Names, shapes and one common float dtype; returns that dtype."""
    expected = param_shapes(cfg)
    missing = sorted(set(expected) - set(params))
    extra = sorted(set(params) - set(expected))
    if missing or extra:
        raise ValueError(f"params do not match the config: missing {missing}, unexpected {extra}")
    dtypes = {np.asarray(v).dtype for v in params.values()}
    if len(dtypes) != 1 or next(iter(dtypes)) not in FLOAT_DTYPES:
        raise ValueError(f"params must all be float32 or all float64, got {sorted(map(str, dtypes))}")
    for name, shape in expected.items():
        if np.shape(params[name]) != shape:
            raise ValueError(f"param {name} has shape {np.shape(params[name])}, expected {shape}")
    return next(iter(dtypes))


def check_tokens(cfg: Config, inputs, targets) -> tuple[np.ndarray, np.ndarray]:
    """Accepts (T,) or (n_seq, T) integer arrays; returns both as (n_seq, T) int64."""
    checked = []
    for field_name, ids in (("inputs", inputs), ("targets", targets)):
        ids = np.asarray(ids)
        if ids.dtype.kind not in "iu":
            raise ValueError(f"{field_name} must be integer token ids, got dtype {ids.dtype}")
        if ids.ndim == 1:
            ids = ids[None, :]
        if ids.ndim != 2:
            raise ValueError(f"{field_name} must have shape (T,) or (n_seq, T), got {ids.shape}")
        if ids.shape[0] < 1 or ids.shape[1] < 1:
            raise ValueError(f"{field_name} must hold at least one token, got shape {ids.shape}")
        if ids.shape[1] > cfg.seq_len:
            raise ValueError(f"{field_name} has T = {ids.shape[1]} positions, more than seq_len = {cfg.seq_len}")
        bad = np.flatnonzero((ids < 0) | (ids >= cfg.vocab_size))
        if bad.size:
            where = np.unravel_index(bad[0], ids.shape)
            raise ValueError(
                f"{field_name} holds token id {int(ids[where])} at {tuple(map(int, where))}, "
                f"outside [0, vocab_size = {cfg.vocab_size})"
            )
        checked.append(ids.astype(np.int64, copy=False))
    if checked[0].shape != checked[1].shape:
        raise ValueError(f"targets shape {checked[1].shape} differs from inputs shape {checked[0].shape}")
    return checked[0], checked[1]


def check_override(nodes: list[Node], table) -> dict[str, Callable]:
    """An override table (step name -> backward rule) naming steps of this tape; returns a copy
    (the caller's table may change after, the trace's may not)."""
    if table is not None and not isinstance(table, Mapping):
        raise ValueError(f"backward_override must map step names to backward rules, got {type(table).__name__}")
    unknown = sorted(set(table or ()) - {node.name for node in nodes})
    if unknown:
        raise ValueError(f"backward_override names no step of this model: {', '.join(unknown)}")
    return dict(table or {})


def forward_backward(
    cfg: Config,
    params: dict[str, np.ndarray],
    inputs,
    targets,
    backward_override: Mapping[str, Callable] | None = None,
    keep_param_grads: bool = False,
    precision=None,
) -> Trace:
    """One recorded training step: forward, loss, backward. The trace keeps what it cannot
    recompute (xt_core.recompute: each segment's output and its gradient, the parameters and the
    token ids) and recomputes the rest when read, bit-identical to a full recording. Nothing is
    copied for recording; the parameters themselves are kept (a read-only array, e.g. a loaded
    checkpoint's, is shared, not counted in Trace.nbytes).

    backward_override: step name -> the rule that replaces that op's backward, (dout, cache,
    grads) -> gradients like the op's own, grads holding every gradient so far: the bug lab's
    faults (xt_core.lab.faults.overrides) or an exercise's backward, handed in from outside.
    keep_param_grads: the parameters' gradients are made now and held (a training step's update
    reads them all; Trace.release_param_grads drops them), else only the activations' backward
    runs here.
    precision: a low-precision step's rounding model (xt_core.precision.Precision: bfloat16 or
    float16 over float32 master weights, loss scaling), consulted by every op; None computes in
    the parameters' dtype."""
    if not isinstance(cfg, Config):
        raise ValueError(f"cfg must be an xt_core.Config, got {type(cfg).__name__}")
    dtype = check_params(cfg, params)
    if precision is not None and dtype != np.float32:
        raise ValueError(f"a {precision.name} step keeps float32 master weights, got {dtype} params")
    tokens, targets = check_tokens(cfg, inputs, targets)
    keep_freed_memory()
    nodes = build_tape(cfg) if precision is None else precision.bind(build_tape(cfg))
    backward_override = check_override(nodes, backward_override)
    env = {name: np.asarray(value) for name, value in params.items()}
    env["tokens"], env["targets"] = tokens, targets
    caches = run_forward(nodes, env)
    shapes = {node.name: np.shape(env[node.name]) for node in nodes}
    keep_freed_memory(_step_bytes(env, params, keep_param_grads))
    finite = forward_finite(nodes, env)
    param_grads = {} if keep_param_grads else None
    # the activations' gradients (the parameters' summed into param_grads if kept), a layer at a
    # time, keeping dL/d each layer's output (xt_core.recompute.Boundaries)
    sink = None if param_grads is None else partial(accumulate, param_grads)
    keep = KeepOnly(activation_of(params), sink, check_finite=True)
    segs = Segments.of(nodes, params)
    plain = precision is None and not backward_override and not keep_param_grads
    forwards, handover = _to_hand_over(nodes, segs, env, caches, params, keep, plain)
    # with room left, the backward also records each segment as a gradient's read would replay it
    at_boundaries = handover or Boundaries(nodes, segs, env)
    seed = np.ones((), dtype=dtype)
    boundary_grads, _ = run_backward(nodes, caches, seed, backward_override, handover or keep, at_boundaries)
    finite &= keep.finite
    trace = Trace(cfg, nodes, env, boundary_grads, shapes, list(params), backward_override, param_grads)
    trace.all_finite = finite  # every value and activation gradient (app.steps.nonfinite reads it)
    trace.hold_forwards(forwards)
    trace.hold_replays(handover.replays if handover else [])
    return trace


def _step_bytes(env: dict, params, keep_param_grads: bool) -> int:
    """The bytes a step holds at its peak: its forward's arrays, and with keep_param_grads a
    gradient the size of every parameter. Counted with them, a training step's gradients (SmolLM2's:
    513 MB) come back from the heap at the next step instead of fresh pages (93,000 page faults a step
    at 32 positions, a fifth of its time: docs/performance.md)."""
    forward = sum(a.nbytes for a in env.values() if isinstance(a, np.ndarray) and a.flags.writeable)
    return forward + (sum(np.asarray(p).nbytes for p in params.values()) if keep_param_grads else 0)


def _to_hand_over(nodes: list[Node], segs: Segments, env: dict, caches: list, params, keep: KeepOnly, plain: bool):
    """What the build hands to the cache of recomputed segments in its free room: the forward of its
    first segments (recompute.built_forwards), and a HandOver that records, while room is left, each
    segment's backward as a gradient's read would replay it (xt_core.handover). Reading the step in
    order then replays no forward and no backward that fit (each is read before the next replay
    needs its room: an in-order read evicts only what it has read), and no other trace's entry is
    evicted for them. Not for a low-precision step or an overridden backward (a fault's or an
    exercise's rule, a rounding policy: none is held to leave its cache unwritten), nor for a
    training step (its caches hold the weights its update frees one by one: xt_core.training.loop)."""
    if not plain:
        return [], None
    room = RECOMPUTED.bound() - RECOMPUTED.nbytes  # a server's: its free room, if more than the floor
    ids = {id(env[name]) for name in (*params, *TOKEN_IDS, *segs.boundaries(nodes))}  # what the trace holds
    held = lambda a: id(a) in ids  # noqa: E731
    forwards = built_forwards(nodes, segs, env, caches, room, held)
    room -= sum(size for *_, size in forwards)
    return forwards, HandOver(nodes, segs, env, keep, room, held, {s: size for s, _, size in forwards})
