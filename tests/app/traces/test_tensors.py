"""app.traces.tensors: a recorded tensor or its gradient is the Trace's own (trace[name],
trace.grad(name)), and a name it lacks is a KeyError whose message says why."""

from __future__ import annotations

import numpy as np
import pytest

import xt_core
from app.traces.tensors import tensor_array
from tests.helpers.specs import make_batch

CFG = xt_core.Config(vocab_size=16, n_layer=1, n_head=2, n_kv_head=1, n_embd=8, ffn_hidden=12, seq_len=8)


@pytest.fixture(scope="module")
def trace() -> xt_core.Trace:
    inputs, targets = make_batch(CFG, n_seq=1, T=6)
    return xt_core.forward_backward(CFG, xt_core.init_params(CFG, seed=0), inputs, targets)


def test_a_tensor_and_its_gradient_are_the_traces_own_arrays(trace):
    probs = tensor_array(trace, "layers.0.attention.probs", grad=False)
    assert probs.shape == (1, 2, 6, 6) and np.shares_memory(probs, trace["layers.0.attention.probs"])
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, rtol=1e-6)
    wq = tensor_array(trace, "layers.0.attention.wq", grad=True)
    assert wq is trace.grads["layers.0.attention.wq"] and wq.shape == (8, 8)


@pytest.mark.parametrize(
    ("name", "grad", "words"),
    [
        ("tokens", True, "tokens are integer token ids: they have no gradient"),
        ("layers.0.attention.prob", False, "no recorded tensor named 'layers.0.attention.prob'; did you mean"),
        ("layers.0.attention.prob", True, "did you mean layers.0.attention.probs"),
        ("nope", False, "no recorded tensor named 'nope'"),
    ],
)
def test_a_name_the_trace_lacks_is_a_key_error_saying_why(trace, name, grad, words):
    with pytest.raises(KeyError) as refused:
        tensor_array(trace, name, grad)
    assert words in refused.value.args[0]
