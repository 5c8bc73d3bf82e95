"""The working bytes of the jobs run on a built trace, beyond what the trace keeps (Trace.nbytes),
and where they are held in the one budget (app.traces.admission: Admission.hold), so that a class's
mix stays within cache_bytes + 512 MB + the weights (issue 35, finding 7).

    view      a step's view, a head, a Jacobian, an update's figures, a summary: the segment it
              replays (xt_core.recompute; the head's keeps four (B, T, V) arrays), the figures,
              their tables and JSON (the output softmax's backward: four float64 (B, T, V) more)
    diff      a faulty step against the correct trace's: a view's work on each trace, the
              step's own segment replayed (a layer's, or the head's)
    compare   two traces' same step: the segment replayed on each, and B − A
              (app.steps.compare.working_bytes)
    tensor    a recorded tensor or its gradient (.npy, JSON, a slice): its segment replayed; a
              parameter's gradient, a second reader's part and their sum; a .npy's array until
              its last piece is sent
    check     a step's gradient check, in float64: the float32 trace's twin while it is built, or
              the float64 segments a check replays (as large); a step of the head's, its float64
              replays, the LM head's weight moved whole and a direction's block; the update
              step's check, its two replays at θ ± h u besides

Measured with tracemalloc (the peak over what was traced before the request, one request at a time,
its segment replayed afresh: no recomputed segment, no free kept buffer; SmolLM2-135M):
`.venv/bin/python benchmarks/working_bytes.py` (the mix's texts: 85 positions, float64 43) and
`... --positions 256` (float64 55, the most it takes). SmolLM2, float32, 85 / 256 positions: views
≤ 204 / 590 MiB (the output softmax's backward: its replay's four (B, T, V) arrays and the identity
check's four float64 ones; the logits' backward 198 / 350: the (V, C) weight's gradient), a diff
≤ 73 / 121 MiB for a layer's step, ≤ 361 / 652 for the head's, a compare of the logits 242 / 630,
the logits' gradient as .npy 66 / 196, the embedding's 391 / 521 (its array, 108 MiB, held on
while it streams: Held.keep), a check of a layer's step ≤ 485 / 679 (481 / 580 for the first: the
twin), of the head's 345-861 / 606-1,402 (the LM head's weight), the update step's check (AdamW, 85
positions) 736-980 MiB over seven runs; float64 at 43 / 55 positions: views ≤ 306 / 325, the head's
checks ≤ 593 / 621 MiB. Each under its estimate (the benchmark's table). The class preset's view
with its check: 39 MiB.

Where a job's bytes are held (app.traces.room): on the event loop before the job is queued
(`Room.held`; a check: app.services twin_room, hold_checking), never in a worker thread (one waiting for bytes would keep
every job behind it waiting: a tiny spec's summary behind a SmolLM2 view, or a build behind a check).
A job of the views pool (one thread) past small_build_bytes holds them one at a time: a second one
held while it waits for the thread would count its bytes twice and keep a build waiting for nothing.
A small one (a tiny spec's view) holds its bytes at once, past large ones waiting, in the small lane's
room (app.traces.admission). While a job waits for its bytes, or its turn, its request lets go of
the traces the job reads (Room.hold_for): they stay cached and evictable."""

from __future__ import annotations

import numpy as np

from app.spec.cost import largest_param_bytes
from xt_core import Trace
from xt_core.checks.directions import BLOCK
from xt_core.checks.f64 import LARGE
from xt_core.checks.twin import KEPT_FORWARD_BYTES
from xt_core.config import Config
from xt_core.model import param_shapes
from xt_core.names import BUILD_COPIES, estimate_build_bytes, recorded_elements

MiB = 1 << 20
# What a view's figures, tables and their JSON take whatever the model (the class preset's norm
# views: 23 MiB; SmolLM2's feed-forward views: 28 MiB).
VIEW_FLOOR = 32 * MiB
# (B, T, V) arrays a replay of the head's segment holds at once (head_bytes)
HEAD_ARRAYS = 4
# float64 (B, T, V) arrays the output softmax's backward view makes at once beside them (view_bytes)
IDENTITY_ARRAYS = 4
# What a check of the head's step holds beyond its (B, T, V) and (V, C) arrays: the segment's (B, T, C)
# values and gradients in float64, a block of the weight cast at a time, its answer (head_check_bytes)
CHECK_FLOOR = 16 * MiB


def vocab_elements(cfg: Config, n_seq: int, T: int) -> int:
    """Entries of one (B, T, V) array: the logits, the probabilities, or a gradient of either."""
    return n_seq * T * cfg.vocab_size


def head_bytes(cfg: Config, n_seq: int, T: int, itemsize: int) -> int:
    """The largest segment a job replays, the head's (xt_core.recompute.replay keeps every value and
    gradient of its segment: EveryGradient): HEAD_ARRAYS (B, T, V) arrays at once, the logits and the
    probabilities (ops.basic.unembed_forward, ops.attention.softmax_forward), dL/dprobs
    (ops.loss.token_loss_backward) and dL/dlogits (softmax_backward: a buffer of its own, dL/dprobs
    kept beside it), and its (V, C) weight's gradient once read (the largest parameter, made when
    read: recompute.DeferredParams)."""
    return largest_param_bytes(cfg, itemsize) + HEAD_ARRAYS * vocab_elements(cfg, n_seq, T) * itemsize


def _head(trace: Trace) -> int:
    n_seq, T = trace.tokens.shape
    return head_bytes(trace.cfg, n_seq, T, trace.dtype.itemsize)


def view_bytes(trace: Trace, index: int | None = None) -> int:
    """A view of step `index` of the trace: a layer's step, its segment replayed (step_bytes) and its
    figures; a step outside the layers, or any step (None), the largest: the head's backward. Beside the head's
    HEAD_ARRAYS (B, T, V) arrays, either the logits' (the (V, C) weight's gradient, and |dL/dlogits|
    of one sequence, which picks the vocabulary's columns drawn: app.steps.axes) or the output
    softmax's (Trace.logits_identity_error in float64: the probabilities cast, (p − onehot)/N,
    dL/dlogits minus that, and its |·|: IDENTITY_ARRAYS at once, one fewer in a float64 trace, whose
    probabilities are not cast). SmolLM2, float32: 85 positions 223 MiB (measured ≤ 204), 256
    positions 608 MiB (≤ 590); float64, 43 positions 329 MiB (≤ 306)."""
    if index is not None and trace.records[index].layer is not None:
        return _layer_view(trace, index)
    n_seq, T = trace.tokens.shape
    cfg, itemsize = trace.cfg, trace.dtype.itemsize
    one = vocab_elements(cfg, n_seq, T)
    logits = largest_param_bytes(cfg, itemsize) + T * cfg.vocab_size * itemsize
    identity = (IDENTITY_ARRAYS - (itemsize == 8)) * one * 8
    head = HEAD_ARRAYS * one * itemsize + max(logits, identity) + VIEW_FLOOR
    layer_step = next((r.index for r in trace.records if r.layer is not None), None) if index is None else None
    return (
        head if layer_step is None else max(head, _layer_view(trace, layer_step))
    )  # a small model's layer may weigh more


def _layer_view(trace: Trace, index: int) -> int:
    """A view of a layer's step: its segment replayed and its figures (SmolLM2: 54 MiB at 85
    positions, measured ≤ 41; 76 at 256, ≤ 65)."""
    return step_bytes(trace, index) + VIEW_FLOOR


def step_bytes(trace: Trace, index: int) -> int:
    """The segment a view of step `index` replays: a layer's values and gradients (BUILD_COPIES of
    its recorded entries) and its weights' gradients, or, for a step outside the layers (the
    embedding, the final norm, the head, the loss), the head's (head_bytes)."""
    layer = trace.records[index].layer
    if layer is None:
        return _head(trace)
    cfg, (n_seq, T), itemsize = trace.cfg, trace.tokens.shape, trace.dtype.itemsize
    entries = recorded_elements(cfg, n_seq, T, where=lambda row: row.per_layer) // cfg.n_layer
    prefix = f"layers.{layer}."  # xt_core.recorded.LAYER_PREFIX
    weights = sum(int(np.prod(shape)) for name, shape in param_shapes(cfg).items() if name.startswith(prefix))
    return (BUILD_COPIES * entries + weights) * itemsize


def diff_bytes(faulty: Trace, index: int) -> int:
    """A diff of step `index`: a view's work on the faulty trace and on its correct twin (the same
    sizes), each the step's segment (SmolLM2 at 85 positions: a layer's step 107 MiB, measured ≤ 73,
    a step of the head's 408, measured ≤ 361; at 256 positions 152 and 664, measured ≤ 121 and 652)."""
    return 2 * (step_bytes(faulty, index) + VIEW_FLOOR)


def compare_bytes(a: Trace, difference: int) -> int:
    """A compare of two aligned traces (the same sizes): on each, the step's segment replayed (the
    head's at most) and its figures, and B − A."""
    return 2 * (_head(a) + VIEW_FLOOR) + difference


def tensor_bytes(trace: Trace, name: str, grad: bool) -> int:
    """A recorded tensor or its gradient: the head's segment replayed at most; a parameter's gradient,
    the part of a second reader and their sum besides, each as large as the parameter (SmolLM2's tied
    embedding: the lookup's (V, C) part and the head's, recompute.summed_param_grad)."""
    summed = 2 * largest_param_bytes(trace.cfg, trace.dtype.itemsize) if grad and name in trace.param_names else 0
    return _head(trace) + summed + VIEW_FLOOR


def twin_build_bytes(cfg: Config, n_seq: int, T: int) -> int:
    """The most a float32 trace's float64 twin holds while it is built (xt_core.checks.twin), beyond
    the boundaries Trace.nbytes counts up front: its latest segments' forward up to
    KEPT_FORWARD_BYTES, three segments' worth more for its backward, and a float64 copy of the
    largest parameter. SmolLM2: 32 positions 442 MiB (tracemalloc peak 356 MB, docs/performance.md),
    85 positions 536 MiB (481), 256 positions 700 MiB (580)."""
    forward = estimate_build_bytes(cfg, n_seq, T, 8, shared_params=True)
    segment = forward // max(1, cfg.n_layer)
    return min(forward, KEPT_FORWARD_BYTES + 3 * segment) + largest_param_bytes(cfg, 8)


def head_check_bytes(cfg: Config, n_seq: int, T: int, itemsize: int) -> int:
    """A check of a step of the head's segment (xt_core.checks.gradcheck.check_record): the float64
    twin's head segment replayed (HEAD_ARRAYS float64 (B, T, V) arrays), a float32 trace's own beside
    it (the gradient on screen), and either an activation's check (its input moved both ways and the
    loss replayed from each: HEAD_ARRAYS float64 (B, T, V) arrays more) or, for a weight beyond LARGE
    entries (the LM head's: directional_large), its gradient in both replays, the weight moved whole
    in float64, the direction's block (BLOCK entries, drawn in float32 then cast) and the logits and
    probabilities replayed from the moved weight with their temporaries (three float64 (B, T, V)
    arrays); CHECK_FLOOR besides. SmolLM2, float32: 85 positions 907 MiB (the logits' backward
    measured 861), 256 positions 1,484 MiB (1,402)."""
    one, shown = vocab_elements(cfg, n_seq, T), itemsize < 8
    replays = HEAD_ARRAYS * one * (8 + (itemsize if shown else 0))
    activation = HEAD_ARRAYS * one * 8
    weight = 0
    if largest_param_bytes(cfg, 1) > LARGE:
        on_screen = largest_param_bytes(cfg, itemsize) if shown else 0
        weight = 2 * largest_param_bytes(cfg, 8) + on_screen + BLOCK * 8 + max(BLOCK * 4, 3 * one * 8)
    return replays + max(activation, weight) + CHECK_FLOOR


def _last_layer_node(trace: Trace) -> int:
    """The index of the last node of the layers: the head's segment (the final norm .. the loss) after it."""
    return max(i for i, node in enumerate(trace.nodes) if node.layer is not None)


def check_bytes(trace: Trace, index: int | None = None) -> int:
    """A gradient check of step `index` (None: of every step, a check job), float32 or float64: the
    twin's build covers the float64 segments every later check of a layer's or the embedding's step
    replays (≤ 485 MiB for SmolLM2 at 85 positions, 679 at 256); a step of the head's segment replays
    the head's (head_check_bytes); the update step's check runs a float64 forward and backward as
    large as the twin's build beside its two replays at θ ± h u (xt_core.checks.update_check: the
    largest parameter moved in float64 on each side, each side's logits and probabilities)."""
    (n_seq, T), cfg = trace.tokens.shape, trace.cfg
    record = None if index is None else trace.records[index]
    head = record is None or (record.phase != "update" and record.node > _last_layer_node(trace))
    outside = head_check_bytes(cfg, n_seq, T, trace.dtype.itemsize) if head else 0
    update = trace.update is not None and (record is None or record.phase == "update")
    sides = 2 * largest_param_bytes(cfg, 8) + 2 * 2 * vocab_elements(cfg, n_seq, T) * 8 if update else 0
    return max(twin_build_bytes(cfg, n_seq, T) + sides, outside)
