"""A trace keeps its segment boundaries and recomputes the rest (xt_core.recompute): every recorded
tensor, gradient and contribution it answers, and every float64 value and gradient its checks read,
is bit for bit what a full recording of the same step holds."""

from __future__ import annotations

import dataclasses
import gc
import threading
import weakref

import numpy as np
import pytest

import xt_core
from app.settings import Settings
from app.spec import TraceSpec
from app.spec.resolve import resolve
from app.traces.store import build_trace
from tests.helpers.gguf_files import STAND_IN, STAND_IN_TEXT
from tests.helpers.specs import make_batch
from xt_core.checks import twin as twin_module
from xt_core.checks.gradcheck import check_record
from xt_core.checks.twin import F64, _args, twin_of
from xt_core.lab import faults
from xt_core.lab.faults import CATALOGUE
from xt_core.model import build_tape
from xt_core.ops import OPS
from xt_core.recompute import RECOMPUTED, Segments, activation_of, replay_forward
from xt_core.tape import run_backward, run_backward_sparse, run_forward
from xt_core.training.loop import train_step
from xt_core.training.optim import AdamW

GQA = xt_core.Config(vocab_size=48, n_layer=3, n_head=6, n_kv_head=2, n_embd=24, ffn_hidden=40, seq_len=12)


@pytest.fixture(autouse=True)
def small_recompute_cache():
    """A bound of a few segments: answers come from replays evicted and replayed again."""
    saved = RECOMPUTED.max_bytes
    RECOMPUTED.resize(20_000)
    yield
    RECOMPUTED.resize(saved)


def full_recording(trace):
    """What the step recorded before boundaries: every value, gradient and contribution held."""
    nodes = build_tape(trace.cfg)
    env = {name: trace.values[name] for name in trace.param_names}
    env["tokens"], env["targets"] = trace.tokens, trace.targets
    caches = run_forward(nodes, env)
    grads, contributions = run_backward(nodes, caches, np.ones((), trace.dtype), trace.backward_override)
    return env, grads, contributions


def full_twin(trace):
    """The float64 twin as it was built before boundaries: every activation and its gradient."""
    values = {name: trace.values[name] for name in trace.param_names}
    values["tokens"], values["targets"] = trace.tokens, trace.targets
    caches = []
    for node in trace.nodes:
        out, cache = node.run(_args(node, values))
        values[node.name] = np.asarray(out, dtype=F64)  # the embedding looks up float32 rows
        caches.append(cache)
    wanted = activation_of(trace.param_names)
    grads = run_backward_sparse(trace.nodes, caches, np.ones((), F64), wanted, trace.backward_override)
    return values, grads


def same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def assert_bit_identical(trace):
    values, grads, contributions = full_recording(trace)
    order = list(range(len(trace.nodes)))
    for i in order[::2] + order[1::2]:  # out of order: segments evicted and replayed in any order
        name = trace.nodes[i].name
        assert same(trace[name], values[name]), name
        assert same(trace.grad(name), grads[name]), f"dL/d {name}"
    for name in trace.param_names[::-1]:
        assert same(trace.grads[name], grads[name]), f"dL/d {name}"
    for record in trace.records:
        if record.phase == "backward":
            assert sorted(record.contributions) == sorted(contributions[record.node]), record.name
            for name, grad in contributions[record.node].items():
                assert same(record.contributions[name], grad), f"{record.name} -> {name}"
    if trace.dtype == np.float32:
        twin_values, twin_grads = full_twin(trace)
        for node in trace.nodes[::-1]:
            assert same(twin_of(trace).values[node.name], twin_values[node.name]), node.name
            assert same(twin_of(trace).grad(node.name), twin_grads[node.name]), node.name


def default_walkthrough(dtype="float32"):
    spec = resolve(TraceSpec(dtype=dtype), Settings())
    return build_trace(spec)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_default_walkthrough_recomputes_every_recorded_tensor_bit_for_bit(dtype):
    assert_bit_identical(default_walkthrough(dtype))


# The float64 twin's forward keeps its latest segments up to KEPT_FORWARD_BYTES, which a toy's whole
# forward fits: 0 keeps none, so its backward runs every segment's forward again.
TWIN_KEEPS = pytest.mark.parametrize("twin_keeps", ["its whole forward", "no segment"])


@pytest.fixture
def twin_keeps(request, monkeypatch):
    if request.param == "no segment":
        monkeypatch.setattr(twin_module, "KEPT_FORWARD_BYTES", 0)
    return request.param


@TWIN_KEEPS
def test_a_gqa_config_the_smollm2_stand_in_and_gpt2_recompute_bit_for_bit(twin_keeps):
    for cfg, seed in ((GQA, 3), (STAND_IN, 7), (xt_core.PRESETS["gpt2-tiny"], 1)):  # GPT-2: its biases' gradients
        inputs, targets = make_batch(cfg, 2 if cfg is GQA else 1, len(STAND_IN_TEXT) // 3, seed=seed)
        assert_bit_identical(xt_core.forward_backward(cfg, xt_core.init_params(cfg, seed=seed), inputs, targets))


@TWIN_KEEPS
@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_fault_replays_bit_for_bit(name, twin_keeps):
    # a fault rewrites one family's op: planted on the preset of that family
    cfg = next(c for c in (xt_core.PRESETS["tiny"], xt_core.PRESETS["gpt2-tiny"]) if not CATALOGUE[name].requires(c))
    inputs, targets = make_batch(cfg, 1, 6, seed=4)
    planted = faults.overrides(cfg, [name], 0)
    trace = xt_core.forward_backward(cfg, xt_core.init_params(cfg), inputs, targets, backward_override=planted)
    assert list(trace.backward_override) == [CATALOGUE[name].step_name(0)]
    assert_bit_identical(trace)


def test_a_training_step_replays_bit_for_bit_and_its_held_gradients_are_the_recomputed_ones():
    cfg = GQA
    params = xt_core.init_params(cfg, seed=1)
    inputs, targets = make_batch(cfg, 1, 8, seed=1)
    trace = train_step(cfg, params, inputs, targets, AdamW(lr=1e-2))
    assert trace.records[-1].phase == "update"
    assert_bit_identical(trace)
    held = xt_core.forward_backward(cfg, params, inputs, targets, keep_param_grads=True)
    recomputed = xt_core.forward_backward(cfg, params, inputs, targets)
    for name in trace.param_names:
        assert same(held.grads[name], recomputed.grads[name]), name


@pytest.mark.parametrize("bound", [1 << 30, 50_000])  # 50 KB: two of three layers' 22 KB forwards
def test_reading_every_value_then_every_gradient_runs_each_segment_forward_once(monkeypatch, bound):
    """The build hands its first segments' forward to the cache (as much as its free room holds:
    all of this step's under the large bound, some under the small one); a value's read replays the
    forward of the others alone; the gradients' read runs the backward from those caches (cached,
    counted once), not the forward again: the same bits."""
    from xt_core import trace as trace_module

    forwards = []
    monkeypatch.setattr(
        trace_module,
        "replay_forward",
        lambda nodes, span, env: forwards.append(span) or replay_forward(nodes, span, env),
    )
    RECOMPUTED.clear()
    RECOMPUTED.resize(bound)  # the fixture restores the bound
    inputs, targets = make_batch(GQA, 1, 8, seed=5)
    trace = xt_core.forward_backward(GQA, xt_core.init_params(GQA, seed=5), inputs, targets)
    values, grads, _ = full_recording(trace)
    for node in trace.nodes:
        assert same(trace[node.name], values[node.name]), node.name
    held = RECOMPUTED.nbytes
    for node in trace.nodes[::-1]:
        assert same(trace.grad(node.name), grads[node.name]), f"dL/d {node.name}"
    spans = Segments.of(trace.nodes, trace.param_names).spans
    replayed = sorted(forwards, key=lambda span: span[0])
    if bound > 1 << 20:
        assert replayed == []  # every forward was the build's
        assert RECOMPUTED.nbytes == held  # and every whole replay: the gradients' reads made none
    else:  # the first ones were the build's (the embedding's at least), the rest replayed in order
        assert 0 < len(replayed) < len(spans) - 1 and replayed == list(spans[len(spans) - len(replayed) :])


def test_a_build_with_room_hands_over_its_backward_and_reading_every_gradient_replays_nothing(monkeypatch):
    """With room in the cache, the build's backward is each segment's whole replay (xt_core.handover):
    reading every gradient after it runs no replay, and each, every contribution, parameter gradient
    and value has the bits a trace built without that room recomputes (and a full recording holds)."""
    from xt_core import trace as trace_module

    inputs, targets = make_batch(GQA, 1, 8, seed=5)
    params = xt_core.init_params(GQA, seed=5)
    RECOMPUTED.clear()
    RECOMPUTED.resize(0)  # no room: the build hands nothing over, every read replays
    fresh = xt_core.forward_backward(GQA, params, inputs, targets)
    assert RECOMPUTED.nbytes == 0
    RECOMPUTED.resize(1 << 30)  # the fixture restores the bound
    trace = xt_core.forward_backward(GQA, params, inputs, targets)
    replays = []
    for name in ("replay", "replay_forward"):
        real = getattr(trace_module, name)
        monkeypatch.setattr(trace_module, name, lambda *a, real=real, **k: replays.append(a[1]) or real(*a, **k))
    reads = [(r, r.name) for r in trace.records if r.phase == "backward"]
    got = {name: trace.grad(name) for _, name in reads}
    assert replays == []
    # the lookup's table gradient is no activation's: the build never ran that op's backward, so
    # its contribution, and the tied embedding's gradient, replay the embedding's segment alone
    contributions = {name: dict(record.contributions) for record, name in reads}
    got_params = {name: trace.grads[name] for name in trace.param_names}
    assert replays == [range(0, 1)]
    _, grads, _ = full_recording(trace)
    monkeypatch.undo()
    RECOMPUTED.resize(20_000)
    for record, name in reads:
        assert same(got[name], fresh.grad(name)) and same(got[name], grads[name]), f"dL/d {name}"
        want = fresh.records[record.index].contributions
        assert sorted(contributions[name]) == sorted(want), name
        assert all(same(contributions[name][n], want[n]) for n in want), name
    for name in trace.param_names:
        assert same(got_params[name], fresh.grads[name]), f"dL/d {name}"
    for node in trace.nodes:
        assert same(trace[node.name], fresh[node.name]), node.name


def test_a_replay_makes_a_weights_gradient_only_when_it_is_read(monkeypatch):
    """Reading values and activation gradients runs no weight-gradient product (DeferredParams); a
    contribution or a parameter's gradient read makes it once, with the full recording's bits, and
    the cache counts its bytes."""
    made = []
    for kind in ("linear", "unembed"):
        apart = OPS[kind].param_backward
        spy = lambda dy, cache, apart=apart, kind=kind: made.append(kind) or apart(dy, cache)  # noqa: E731
        monkeypatch.setitem(OPS, kind, dataclasses.replace(OPS[kind], param_backward=spy))
    RECOMPUTED.clear()
    RECOMPUTED.resize(1 << 30)  # nothing evicted: the fixture restores the bound
    inputs, targets = make_batch(GQA, 1, 8, seed=5)
    trace = xt_core.forward_backward(GQA, xt_core.init_params(GQA, seed=5), inputs, targets)
    values, grads, contributions = full_recording(trace)
    for node in trace.nodes[::-1]:
        assert same(trace[node.name], values[node.name]) and same(trace.grad(node.name), grads[node.name])
    assert made == []
    held = RECOMPUTED.nbytes
    q = next(r for r in trace.records if r.phase == "backward" and r.name == "layers.1.attention.q")
    for _ in range(2):
        assert same(q.contributions["layers.1.attention.wq"], contributions[q.node]["layers.1.attention.wq"])
        assert same(trace.grads["layers.1.attention.wq"], grads["layers.1.attention.wq"])
    assert made == ["linear"] and RECOMPUTED.nbytes == held + GQA.n_embd * GQA.n_embd * 4
    assert same(trace.grads["tok_embeddings"], grads["tok_embeddings"])  # the tied head's part and the lookup's
    assert made == ["linear", "unembed"]


def test_checks_pass_on_recomputed_segments_and_a_fault_still_fails_at_its_own_op():
    cfg = xt_core.PRESETS["tiny"]
    inputs, targets = make_batch(cfg, 1, 6, seed=2)
    params = xt_core.init_params(cfg)
    clean = xt_core.forward_backward(cfg, params, inputs, targets)
    assert all(check_record(clean, r.index).passed for r in clean.records[:: max(1, len(clean.records) // 12)])
    planted = faults.overrides(cfg, ["softmax_missing_sum_term"], 0)
    faulty = xt_core.forward_backward(cfg, params, inputs, targets, backward_override=planted)
    index = next(r.index for r in faulty.records if r.phase == "backward" and r.name == "layers.0.attention.probs")
    assert not check_record(faulty, index).passed
    assert check_record(faulty, index - 1).passed


def test_a_wrong_backward_in_a_later_layer_fails_the_checks_of_the_earlier_layers_too():
    """The guarantee a step's check gives (docs/performance.md, the first check): its far end is
    the loss, so the gradient arriving from a faulty later layer fails an earlier layer's check; a
    check replaying only the step's own layer from the twin's gradient at its output would pass."""
    cfg = xt_core.PRESETS["tiny"]
    inputs, targets = make_batch(cfg, 1, 6, seed=2)
    planted = faults.overrides(cfg, ["softmax_missing_sum_term"], cfg.n_layer - 1)
    faulty = xt_core.forward_backward(cfg, xt_core.init_params(cfg), inputs, targets, backward_override=planted)
    earlier = [r for r in faulty.records if r.phase == "backward" and r.layer == 0]
    assert earlier and not any(check_record(faulty, r.index).passed for r in earlier[::4])


def test_a_trace_holds_its_boundaries_only_and_is_freed_without_a_garbage_collection():
    cfg = xt_core.PRESETS["tiny"]
    inputs, targets = make_batch(cfg, 1, 16, seed=0)
    params = xt_core.init_params(cfg)
    for value in params.values():
        value.flags.writeable = False  # borrowed weights, as a checkpoint's
    trace = xt_core.forward_backward(cfg, params, inputs, targets)
    values, grads, contributions = full_recording(trace)
    full = sum(a.nbytes for a in {id(a): a for a in (*values.values(), *grads.values())}.values() if a.flags.writeable)
    boundaries = 2 * (cfg.n_layer + 1) * 16 * cfg.n_embd * 4  # the residual stream and its gradient
    assert trace.nbytes() - trace.twin_nbytes() <= boundaries + 1024 < full / 20
    trace.grad("layers.0.attention.probs"), trace.records[-1].contributions["tok_embeddings"]
    assert len(RECOMPUTED) >= 1
    gone = weakref.ref(trace)
    gc.disable()
    try:
        del trace
        assert gone() is None  # no reference cycle: the trace store counts on it (sys.getrefcount)
    finally:
        gc.enable()


def test_a_drop_run_by_a_finalizer_inside_another_drop_does_not_hang():
    """A trace's finalizer drops its entries; it may run while the cache's lock is held (an entry
    freed inside drop was the last reference to another trace, or a garbage collection ran there).
    Found as a hung `make test`: tests/core/test_train.py's loop freed a trace inside a drop."""
    from xt_core.recompute import RecomputeCache

    cache = RecomputeCache(1 << 20)

    class Holder:  # an entry whose freeing runs another trace's finalizer
        pass

    holder = Holder()
    weakref.finalize(holder, cache.drop, "other trace")
    cache.get(("a trace", "kind", 0), lambda held=holder: (held, 1))
    cache.get(("other trace", "kind", 0), lambda: (np.zeros(1), 1))
    del holder
    dropping = threading.Thread(target=cache.drop, args=("a trace",), daemon=True)
    dropping.start()
    dropping.join(timeout=10)
    assert not dropping.is_alive(), "the nested drop waited for the lock its own thread holds"
    assert len(cache) == 0 and cache.nbytes == 0


def test_the_cache_evicts_a_forward_waiting_for_its_backward_after_the_replays_already_read():
    """Oldest first, the newest kept; a segment's forward alone only when nothing else is left but
    the newest (reading in order: the gradients' reads still need the forwards the values' left)."""
    from xt_core.recompute import RecomputeCache

    cache = RecomputeCache(300)
    for key, size in [(("t", "forward", 1), 100), (("t", "segment", 3), 100), (("t", "forward", 2), 100)]:
        cache.get(key, lambda size=size: (object(), size))
    cache.get(("t", "segment", 2), lambda: (object(), 100))  # over the bound: the older replay goes
    assert cache.peek(("t", "segment", 3)) is None and cache.nbytes == 300
    assert cache.peek(("t", "forward", 1)) is not None and cache.peek(("t", "forward", 2)) is not None
    cache.get(("t", "segment", 1), lambda: (object(), 250))  # then the forwards, oldest first
    assert cache.peek(("t", "segment", 2)) is None and len(cache) == 1 and cache.nbytes == 250


def test_a_late_layers_check_runs_the_twins_backward_down_to_its_layer_only():
    """The float64 twin's backward runs down from the loss as far as a check needs (the rest when
    an earlier step is checked), in parts with the bits of one whole backward."""
    inputs, targets = make_batch(GQA, 1, 8, seed=5)
    trace = xt_core.forward_backward(GQA, xt_core.init_params(GQA, seed=5), inputs, targets)
    last = next(r for r in trace.records if r.phase == "backward" and r.name == "layers.2.attention.probs")
    assert check_record(trace, last.index).passed
    segs = Segments.of(trace.nodes, trace.param_names)
    assert twin_of(trace)._pending.done == segs.produced[last.name]  # layer 2's: the last layer's segment
    assert twin_of(trace).backward_pending  # a check job holds the twin's room while so (app.services)
    _, whole = full_twin(trace)
    for node in trace.nodes:
        assert same(twin_of(trace).grad(node.name), whole[node.name]), node.name
    assert not twin_of(trace).backward_pending
