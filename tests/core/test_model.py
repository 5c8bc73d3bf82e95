"""The whole step: shapes, names, records, accumulation, dtype, determinism, gradients."""

import numpy as np
import pytest

import xt_core
from tests.helpers.specs import make_batch
from xt_core.checks.gradcheck import check_record, gradcheck
from xt_core.checks.twin import twin_of
from xt_core.names import tensor_names

CONFIGS = {
    "tied-gqa-L2": dict(vocab_size=11, n_layer=2, n_head=4, n_kv_head=2, n_embd=8, ffn_hidden=12, seq_len=8),
    "untied-mha-L1": dict(
        vocab_size=9, n_layer=1, n_head=2, n_kv_head=2, n_embd=8, ffn_hidden=10, seq_len=6, tie_embeddings=False
    ),
    "tied-mqa-L3": dict(vocab_size=7, n_layer=3, n_head=4, n_kv_head=1, n_embd=8, ffn_hidden=6, seq_len=5),
    "untied-gqa-L1": dict(
        vocab_size=13,
        n_layer=1,
        n_head=6,
        n_kv_head=3,
        n_embd=12,
        ffn_hidden=8,
        seq_len=9,
        tie_embeddings=False,
        rope_theta=500.0,
    ),
    # heads wider than C / H (Qwen3's explicit head_dim): Wq (8, 18), Wo (18, 8); 8 is not a multiple of 3
    "wide-heads-mqa-L1": dict(vocab_size=9, n_layer=1, n_head=3, n_kv_head=1, n_embd=8, head_dim=6, ffn_hidden=10),
    # GPT-2 (LayerNorm with bias, tanh GELU, learned positions, every bias) and nanoGPT's bias=False, exact GELU
    "gpt2-L2": dict(family="gpt2", vocab_size=11, n_layer=2, n_head=2, n_kv_head=2, n_embd=8, ffn_hidden=12, seq_len=8),
    "nanogpt-nobias-untied-L1": dict(
        family="gpt2",
        vocab_size=9,
        n_layer=1,
        n_head=2,
        n_kv_head=2,
        n_embd=8,
        ffn_hidden=10,
        seq_len=6,
        tie_embeddings=False,
        activation="gelu",
        norm_bias=False,
        qkv_bias=False,
        o_bias=False,
        mlp_bias=False,
    ),
    # Qwen2: q, k, v biases; Qwen3: QK-norm with heads wider than C / H; both parts at once
    "qwen2-gqa-L2": dict(vocab_size=11, n_layer=2, n_head=4, n_kv_head=2, n_embd=8, ffn_hidden=12, qkv_bias=True),
    "qwen3-wide-heads-L2": dict(
        vocab_size=9, n_layer=2, n_head=4, n_kv_head=2, n_embd=8, head_dim=6, ffn_hidden=10, qk_norm=True
    ),
    "qwen-both-untied-L1": dict(
        vocab_size=9,
        n_layer=1,
        n_head=2,
        n_kv_head=1,
        n_embd=8,
        ffn_hidden=10,
        tie_embeddings=False,
        qkv_bias=True,
        qk_norm=True,
    ),  # fmt: skip
}
QWEN = [name for name in CONFIGS if name.startswith("qwen")]
# (n_seq, T), T < seq_len: a batch of 3 (what sums over sequences is summed) in make test, one sequence too in
# make test-long (a sweep: every family's config twice)
BATCHES = [pytest.param(3, 5, id="3-5"), pytest.param(1, 4, id="1-4", marks=pytest.mark.long)]


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("n_seq,T", BATCHES)
def test_gradcheck_every_parameter_and_intermediate(name, n_seq, T):
    cfg = xt_core.Config(**CONFIGS[name])
    params = with_random_vectors(xt_core.init_params(cfg, seed=3, dtype=np.float64))
    inputs, targets = make_batch(cfg, n_seq, T, seed=n_seq)
    report = gradcheck(cfg, params, inputs, targets, max_entries=24)
    failing = [(r.name, r.max_rel_error) for r in report.rows if not r.passed]
    assert not failing
    assert {r.name for r in report.rows} == set(params) | set(tensor_names(cfg))


def with_random_vectors(params):
    """Gains and biases away from 1 and 0 (the init's): a swapped or missing one then shows."""
    rng = np.random.default_rng(5)
    return {k: v + 0.3 * rng.standard_normal(v.shape) if v.ndim == 1 else v for k, v in params.items()}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["gpt2-L2", "nanogpt-nobias-untied-L1"])
def test_every_step_check_of_a_gpt2_trace_passes(name, dtype):
    cfg = xt_core.Config(**CONFIGS[name])
    params = {k: v.astype(dtype) for k, v in with_random_vectors(xt_core.init_params(cfg, seed=2)).items()}
    trace = xt_core.forward_backward(cfg, params, *make_batch(cfg, 2, cfg.seq_len - 1))
    results = [check_record(trace, i) for i in range(len(trace.records))]
    assert all(r.passed for r in results), [
        (trace.records[r.record].name, r.max_rel_error) for r in results if not r.passed
    ]
    assert all(r.checks for r in results)
    assert {r.kind for r in trace.records} >= {"layernorm", "positions", cfg.activation}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_step_check_passes(tiny, dtype):
    params = xt_core.init_params(tiny, seed=0, dtype=dtype)
    inputs, targets = make_batch(tiny, 2, 12)
    trace = xt_core.forward_backward(tiny, params, inputs, targets)
    results = [check_record(trace, i) for i in range(len(trace.records))]
    assert all(r.passed for r in results), [
        (trace.records[r.record].name, r.max_rel_error) for r in results if not r.passed
    ]
    assert all(r.checks for r in results)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", QWEN)
def test_every_step_check_of_qwens_parts_passes(name, dtype):
    """check_record over every step, as the app's checks run, where Qwen's ops are on the tape."""
    cfg = xt_core.Config(**CONFIGS[name])
    trace = xt_core.forward_backward(cfg, xt_core.init_params(cfg, seed=1, dtype=dtype), *make_batch(cfg, 2, 5))
    kinds = {record.kind for record in trace.records}
    assert ("bias" in kinds, "qk_norm" in kinds) == (cfg.qkv_bias, cfg.qk_norm)
    results = [check_record(trace, i) for i in range(len(trace.records))]
    assert all(r.passed and r.checks for r in results), [
        (trace.records[r.record].name, r.max_rel_error) for r in results if not (r.passed and r.checks)
    ]


def test_a_wrong_backward_fails_at_its_own_step(tiny):
    """The checks can fail: a softmax backward without its `- sum(p dp)` term is caught at
    the step of that op, and every step later in the backward pass still passes."""
    params = xt_core.init_params(tiny, seed=0, dtype=np.float64)
    inputs, targets = make_batch(tiny, 1, 10)
    target = "layers.1.attention.probs"

    broken = {target: lambda dp, cache, grads: (cache[0] * dp,)}
    trace = xt_core.forward_backward(tiny, params, inputs, targets, backward_override=broken)
    backward = [r for r in trace.records if r.phase == "backward"]
    verdicts = [(r.name, check_record(trace, r.index).passed) for r in backward]
    first_bad = next(name for name, ok in verdicts if not ok)
    assert first_bad == target
    assert all(ok for name, ok in verdicts[: [n for n, _ in verdicts].index(target)])


def test_contract_shapes_and_names(tiny):
    params = xt_core.init_params(tiny, seed=0)
    assert params["tok_embeddings"].shape == (96, 64)
    assert params["layers.1.attention.wq"].shape == (64, 64)
    assert params["layers.1.attention.wk"].shape == (64, 32)
    assert params["layers.1.attention.wo"].shape == (64, 64)
    assert params["layers.0.feed_forward.w1"].shape == (64, 172)
    assert params["layers.0.feed_forward.w2"].shape == (172, 64)
    assert "output" not in params
    inputs, targets = make_batch(tiny, 3, 7)
    trace = xt_core.forward_backward(tiny, params, inputs, targets)
    assert trace["layers.0.attention.scores"].shape == (3, 4, 7, 7)
    assert trace["layers.0.attention.probs"].shape == (3, 4, 7, 7)
    assert trace["layers.0.attention.heads"].shape == (3, 4, 7, 16)
    assert trace["layers.0.attention.k"].shape == (3, 7, 32)
    assert trace["logits"].shape == (3, 7, 96)
    assert trace["token_loss"].shape == (3, 7)
    assert set(trace.grads) == set(params)
    for name in tensor_names(tiny):
        assert trace.grad(name).shape == np.shape(trace[name]), name
    for name, value in params.items():
        assert trace.grads[name].shape == value.shape
    assert trace.loss == pytest.approx(float(np.mean(trace["token_loss"])))


def test_records_run_forward_then_loss_then_backward_in_reverse(tiny):
    trace = xt_core.forward_backward(tiny, xt_core.init_params(tiny), *make_batch(tiny, 1, 5))
    phases = [r.phase for r in trace.records]
    n = len(trace.nodes)
    assert phases[:n].count("loss") == 3 and phases[n - 3 : n] == ["loss"] * 3
    assert phases[n:] == ["backward"] * n
    assert [r.name for r in trace.records[n:]] == [r.name for r in trace.records[:n]][::-1]
    for r in trace.records:
        assert r.forward_latex and r.backward_latex
        assert r.layer is None or 0 <= r.layer < tiny.n_layer


def test_contributions_add_up_to_the_gradient(tiny):
    """Residual stream and tied embedding: several contributions, summed."""
    trace = xt_core.forward_backward(tiny, xt_core.init_params(tiny, dtype=np.float64), *make_batch(tiny, 2, 6))
    sums: dict[str, np.ndarray] = {}
    for r in trace.records:
        for name, g in r.contributions.items():
            sums[name] = sums.get(name, 0) + g
    for name, total in sums.items():
        np.testing.assert_allclose(total, trace.grad(name), rtol=1e-12, atol=1e-15)
    readers = [r for r in trace.records if r.phase == "backward" and "tok_embeddings" in r.contributions]
    assert [r.name for r in readers] == ["logits", "embedding"]
    readers = [r for r in trace.records if r.phase == "backward" and "layers.0.attention_residual" in r.contributions]
    assert len(readers) == 2  # the FFN residual add and ffn_norm


def test_untied_head_has_its_own_gradient():
    cfg = xt_core.Config(**CONFIGS["untied-mha-L1"])
    trace = xt_core.forward_backward(cfg, xt_core.init_params(cfg), *make_batch(cfg, 1, 4))
    assert "output" in trace.grads
    backward_names = [r.name for r in trace.records if r.phase == "backward" and "tok_embeddings" in r.contributions]
    assert backward_names == ["embedding"]


def test_float32_stays_float32(tiny):
    trace = xt_core.forward_backward(tiny, xt_core.init_params(tiny, dtype=np.float32), *make_batch(tiny, 2, 9))
    for name in tensor_names(tiny):
        assert trace[name].dtype == np.float32, name
        assert trace.grad(name).dtype == np.float32, name
    for r in trace.records:
        for name, g in r.contributions.items():
            assert g.dtype == np.float32, (r.name, name)


def test_same_spec_same_bits(tiny):
    def run():
        return xt_core.forward_backward(tiny, xt_core.init_params(tiny, seed=7), *make_batch(tiny, 2, 9, seed=5))

    a, b = run(), run()
    assert a.loss == b.loss
    for name in tensor_names(tiny):
        assert a[name].tobytes() == b[name].tobytes()
        assert a.grad(name).tobytes() == b.grad(name).tobytes()
    for name in a.grads:
        assert a.grads[name].tobytes() == b.grads[name].tobytes()


def test_one_dimensional_inputs_are_one_sequence(tiny):
    inputs, targets = make_batch(tiny, 1, 6)
    a = xt_core.forward_backward(tiny, xt_core.init_params(tiny), inputs[0], targets[0])
    b = xt_core.forward_backward(tiny, xt_core.init_params(tiny), inputs, targets)
    assert a.loss == b.loss and a["logits"].shape == (1, 6, 96)


def test_class_config_completes():
    cfg = xt_core.PRESETS["class"]
    params = xt_core.init_params(cfg, seed=0)
    trace = xt_core.forward_backward(cfg, params, *make_batch(cfg, 1, 128))
    assert np.isfinite(trace.loss)
    assert trace["layers.3.attention.probs"].shape == (1, 8, 128, 128)
    assert all(g.dtype == np.float32 for g in trace.grads.values())


def test_init_is_seeded_and_dtype_independent(tiny):
    a = xt_core.init_params(tiny, seed=1, dtype=np.float64)
    b = xt_core.init_params(tiny, seed=1, dtype=np.float32)
    c = xt_core.init_params(tiny, seed=2, dtype=np.float64)
    for name in a:
        np.testing.assert_array_equal(a[name].astype(np.float32), b[name])
    assert not np.array_equal(a["tok_embeddings"], c["tok_embeddings"])


def test_nbytes_counts_every_held_array_once_and_the_float64_twin(tiny):
    trace = xt_core.forward_backward(tiny, xt_core.init_params(tiny), *make_batch(tiny, 2, 8))
    params = sum(trace[name].nbytes for name in trace.param_names)
    ids = trace.tokens.nbytes + trace.targets.nbytes
    # held: the residual stream after the embedding and each layer, the loss, and dL/d each of them
    boundaries = ["embedding", *(f"layers.{L}.ffn_residual" for L in range(tiny.n_layer)), "loss"]
    held = sum(trace[n].nbytes + trace.grad(n).nbytes for n in boundaries)
    counted = trace.nbytes()
    assert counted == params + ids + held + trace.twin_nbytes()
    full = sum(np.asarray(v).nbytes for v in trace.values.values()) + sum(g.nbytes for g in trace.all_grads.values())
    assert counted - params < (full - params) / 10  # everything else is recomputed when read
    twin = twin_of(trace)  # built now; once its backward has run whole, what nbytes counted up front is what it holds
    assert twin.backward_pending and trace.nbytes() == counted
    twin.grad(trace.nodes[0].name)
    assert twin.nbytes() == 2 * (held - 2 * trace["loss"].nbytes) + 2 * 8 and trace.nbytes() == counted
    assert twin.values["layers.0.attention.probs"].dtype == np.float64
    assert all(twin.values[name] is trace[name] for name in trace.param_names)  # the weights are not copied
    assert not any(name in twin.grads for name in trace.param_names)  # nor their gradients kept


def test_shared_read_only_params_are_not_counted(tiny):
    params = xt_core.init_params(tiny)
    tokens = make_batch(tiny, 1, 8)
    owned = xt_core.forward_backward(tiny, params, *tokens).nbytes()
    for value in params.values():
        value.flags.writeable = False  # a loaded checkpoint's weights, shared by every trace
    shared = xt_core.forward_backward(tiny, params, *tokens)
    assert owned - shared.nbytes() == sum(v.nbytes for v in params.values())
    assert all(shared[name] is params[name] for name in params)


def test_float32_checks_run_on_the_float64_twin_and_report_roundoff(tiny):
    from xt_core.checks.tolerances import FINITE_DIFFERENCES

    params = xt_core.init_params(tiny)
    batch = make_batch(tiny, 1, 8)
    trace = xt_core.forward_backward(tiny, params, *batch)
    check = check_record(trace, trace.node_index("logits") + len(trace.nodes))  # some backward step
    assert check.tolerance == FINITE_DIFFERENCES and check.passed
    assert check.float32_roundoff is not None and 0 < check.float32_roundoff < 1e-3
    params64 = {k: v.astype(np.float64) for k, v in params.items()}
    trace64 = xt_core.forward_backward(tiny, params64, *batch)
    assert twin_of(trace64).nbytes() == 0 and trace64.twin_nbytes() == 0
    for index in (5, trace.node_index("logits") + len(trace.nodes), len(trace.records) - 3):
        check32, check64 = check_record(trace, index), check_record(trace64, index)
        assert check64.float32_roundoff is None and check32.passed and check64.passed
        # the twin is the float64 step: its analytic numbers are the float64 trace's
        for a, b in zip(check32.checks, check64.checks, strict=True):
            assert a.analytic == pytest.approx(b.analytic, rel=1e-5, abs=1e-12)
