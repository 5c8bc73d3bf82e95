"""The softmax Jacobian and the chain-rule identities the walkthrough shows."""

import numpy as np
import pytest

import xt_core
from tests.helpers.specs import make_batch
from xt_core.checks.jacobian import attention_jacobian, output_jacobian


def test_softmax_jacobian_matches_finite_differences():
    rng = np.random.default_rng(0)
    s = rng.standard_normal(6)
    p = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
    J = xt_core.softmax_jacobian(p)
    eps = 1e-6
    numeric = np.empty((6, 6))
    for j in range(6):
        d = np.zeros(6)
        d[j] = eps
        plus, minus = np.exp(s + d), np.exp(s - d)
        numeric[:, j] = (plus / plus.sum() - minus / minus.sum()) / (2 * eps)
    np.testing.assert_allclose(J, numeric, atol=1e-9)
    np.testing.assert_allclose(J, J.T)
    np.testing.assert_allclose(J.sum(axis=1), 0, atol=1e-15)


def test_softmax_jacobian_rejects_matrices():
    with pytest.raises(ValueError, match="1-D"):
        xt_core.softmax_jacobian(np.ones((2, 2)) / 2)


@pytest.fixture(scope="module")
def trace():
    cfg = xt_core.PRESETS["tiny"]
    return xt_core.forward_backward(cfg, xt_core.init_params(cfg, seed=1, dtype=np.float64), *make_batch(cfg, 2, 9))


def test_every_attention_row_satisfies_the_chain_rule(trace):
    cfg = trace.cfg
    for layer in range(cfg.n_layer):
        for head in range(cfg.n_head):
            for seq in range(2):
                for pos in range(9):
                    check = attention_jacobian(trace, layer, head, seq, pos)
                    assert check.jacobian.shape == (pos + 1, pos + 1)
                    assert check.ok and check.max_rel_error < 1e-12


def test_output_rows_and_the_fused_identity(trace):
    for pos in range(9):
        check = output_jacobian(trace, 1, pos)
        assert check.jacobian.shape == (96, 96) and check.ok
    assert trace.logits_identity_error() < 1e-15


def test_top_k_restriction_keeps_the_target_and_the_full_check(trace):
    full = output_jacobian(trace, 0, 4)
    top = output_jacobian(trace, 0, 4, top_k=5)
    target = int(trace.targets[0, 4])
    assert target in top.indices and len(top.indices) in (5, 6)
    assert top.max_rel_error == full.max_rel_error
    np.testing.assert_array_equal(top.jacobian, full.jacobian[np.ix_(top.indices, top.indices)])


def test_float32_trace_identity_within_float32_roundoff():
    cfg = xt_core.PRESETS["tiny"]
    t = xt_core.forward_backward(cfg, xt_core.init_params(cfg), *make_batch(cfg, 1, 9))
    assert t.logits_identity_error() < 1e-7
    assert attention_jacobian(t, 0, 0, 0, 8).ok


@pytest.mark.parametrize(
    "args,field",
    [
        ((2, 0, 0, 0), "layer"),
        ((0, 4, 0, 0), "head"),
        ((0, 0, 2, 0), "seq"),
        ((0, 0, 0, 9), "pos"),
        ((0, 0, 0, -1), "pos"),
    ],
)
def test_bad_rows_name_the_field(trace, args, field):
    with pytest.raises(ValueError, match=field):
        attention_jacobian(trace, *args)


def test_a_shown_block_is_the_full_jacobians_and_its_check_covers_the_whole_row():
    """J on the shown entries only ((k, k), not (N, N)); the error still found where nothing is shown."""
    from xt_core.checks.jacobian import check_softmax_row

    rng = np.random.default_rng(4)
    s = rng.standard_normal(50)
    p = np.exp(s) / np.exp(s).sum()
    dprobs = rng.standard_normal(50)
    full_J = xt_core.softmax_jacobian(p)
    recorded = full_J @ dprobs
    recorded[30] += 1e-3  # a wrong gradient on an entry that is not shown
    shown = np.array([1, 5, 7])
    check = check_softmax_row(p, dprobs, recorded, shown)
    assert check.jacobian.shape == (3, 3)
    np.testing.assert_allclose(check.jacobian, full_J[np.ix_(shown, shown)], atol=1e-17)
    np.testing.assert_allclose(check.chain, (full_J @ dprobs)[shown], atol=1e-15)
    assert check.max_abs_error == pytest.approx(1e-3, rel=1e-6) and not check.ok


def test_top_tokens_are_the_most_probable_first_then_the_target():
    from xt_core.checks.jacobian import top_tokens

    p = np.array([0.05, 0.30, 0.10, 0.30, 0.05, 0.20])
    assert top_tokens(p, target=5, k=3).tolist() == [1, 3, 5]  # a tie by token id; the target among them
    assert top_tokens(p, target=4, k=3).tolist() == [1, 3, 5, 4]  # the target after the k
    assert top_tokens(p, target=0, k=1).dtype == np.int64


def test_the_chain_rule_tolerance_is_the_dtype_of_the_recorded_gradient():
    """One row off by 1e-6 of its scale: within float32's round-off, a wrong float64 gradient."""
    from xt_core.checks.jacobian import check_softmax_row
    from xt_core.checks.tolerances import CHAIN_RULE

    p = np.array([0.5, 0.3, 0.2])
    dprobs = np.array([1.0, -2.0, 0.5])
    recorded = xt_core.softmax_jacobian(p) @ dprobs
    recorded[0] += 1e-6 * np.max(np.abs(recorded))
    assert CHAIN_RULE.float64 < check_softmax_row(p, dprobs, recorded).max_rel_error < CHAIN_RULE.float32
    assert check_softmax_row(p, dprobs, recorded.astype(np.float32)).ok
    assert not check_softmax_row(p, dprobs, recorded).ok
