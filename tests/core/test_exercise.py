"""The exercise API accepts a correct backward and rejects every catalogue fault."""

import numpy as np
import pytest

from xt_core.lab import exercise
from xt_core.lab.faults import CATALOGUE
from xt_core.ops import OPS


def as_learner(kind, backward):
    """A learner-style function (dout, *inputs, **attrs) built from a cache-style backward."""

    def learner(dout, *inputs, grads=None, **attrs):
        _, cache = OPS[kind].forward(*inputs, **attrs)
        return backward(dout, cache, grads)

    return learner


@pytest.mark.parametrize("kind", sorted(OPS))
def test_the_reference_backward_passes(kind):
    report = exercise.check(kind, as_learner(kind, lambda dout, cache, grads: OPS[kind].backward(dout, cache)))
    assert report.passed and report.rows, str(report)


def test_a_bias_gradient_not_summed_over_positions_is_rejected():
    """Qwen2's bias op: keeping one position's gradient instead of the sum over (B, T) fails."""

    def one_position(dy, x, bias):
        return dy, dy[0, 0]

    report = exercise.check("bias", one_position)
    assert not report.passed and report.rows, str(report)


def test_a_hand_written_softmax_backward_passes():
    def my_softmax_backward(dp, scores):
        p = np.exp(scores - scores.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        return p * (dp - (p * dp).sum(-1, keepdims=True))

    report = exercise.check("softmax", my_softmax_backward)
    assert report.passed, str(report)
    assert "PASSED" in str(report)


def kind_of(fault):
    step = fault.step_name(exercise.EXERCISE_CONFIG.n_layer - 1)
    from xt_core.model import build_tape

    return next(node.kind for node in build_tape(exercise.EXERCISE_CONFIG) if node.name == step)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_catalogue_fault_is_rejected(name):
    fault = CATALOGUE[name]
    layer = exercise.EXERCISE_CONFIG.n_layer - 1
    kind = kind_of(fault)
    learner = as_learner(kind, lambda dout, cache, grads: fault.backward(dout, cache, grads, layer))
    report = exercise.check(kind, learner)
    assert not report.passed, str(report)


def test_crashes_and_wrong_shapes_are_reported_not_raised():
    def crashes(dp, scores):
        raise RuntimeError("oops")

    report = exercise.check("softmax", crashes)
    assert not report.passed and "RuntimeError: oops" in str(report)

    def wrong_shape(dy, x, gain, eps):
        return dy, gain[:1]

    report = exercise.check("rmsnorm", wrong_shape)
    assert not report.passed and "expected" in str(report)

    def too_many(dp, scores):
        return dp, dp

    assert "returned 2 gradient(s)" in str(exercise.check("softmax", too_many))


def test_unknown_op_is_named():
    with pytest.raises(ValueError, match="unknown op 'softmx'"):
        exercise.check("softmx", lambda dout: dout)
