"""Cross-check against PyTorch autograd in float64: the same model written directly in
torch, the same weights. Skips when torch is absent, except in CI (XT_REQUIRE_TORCH=1)."""

import numpy as np
import pytest

import xt_core
from tests.helpers.env import TORCH_HINT, imported_when_run, skip_unless_installed
from tests.helpers.specs import make_batch
from xt_core.names import tensor_names

pytestmark = pytest.mark.torch
skip_unless_installed("torch", hint=TORCH_HINT)
torch = torch_step = None  # imported by load_torch, when this module's tests run
load_torch = imported_when_run(torch="torch", torch_step="tests.helpers.torch_reference:torch_step")


CONFIGS = {
    "tiny": dict(),
    "untied-mha": dict(tie_embeddings=False, n_kv_head=4, n_layer=1),
    "mqa-3-layers": dict(n_kv_head=1, n_layer=3, rope_theta=500.0),
    "head-dim-10": dict(head_dim=10, n_layer=1),  # Wq (64, 40): heads narrower than C / H
    "qwen2-biases": dict(qkv_bias=True, n_layer=1),
    "qwen3-qk-norm": dict(qk_norm=True, head_dim=24, n_layer=2, tie_embeddings=False),
}


def normwise(a, b) -> float:
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_loss_and_every_gradient_match_autograd(name):
    cfg = xt_core.Config(**{**xt_core.PRESETS["tiny"].to_dict(), **CONFIGS[name]})
    params = xt_core.init_params(cfg, seed=11, dtype=np.float64)
    inputs, targets = make_batch(cfg, 3, 20, seed=2)
    trace = xt_core.forward_backward(cfg, params, inputs, targets)
    loss, reference, P, named = torch_step(cfg, params, inputs, targets)

    assert abs(trace.loss - loss.item()) <= 1e-10
    assert abs(trace.loss - reference.item()) <= 1e-10
    for pname, tensor in P.items():
        assert normwise(trace.grads[pname], tensor.grad.numpy()) <= 1e-8, pname
    assert set(named) == set(tensor_names(cfg)) - {"loss"}
    for tname, tensor in named.items():
        np.testing.assert_allclose(trace[tname], tensor.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=tname)
        assert normwise(trace.grad(tname), tensor.grad.numpy()) <= 1e-8, tname


def test_float32_trace_is_close_to_float64_autograd():
    cfg = xt_core.PRESETS["tiny"]
    params = xt_core.init_params(cfg, seed=0, dtype=np.float64)
    inputs, targets = make_batch(cfg, 2, 16)
    params32 = {k: v.astype(np.float32) for k, v in params.items()}
    trace = xt_core.forward_backward(cfg, params32, inputs, targets)
    loss, _, P, _ = torch_step(cfg, params32_as_64(params32), inputs, targets)
    assert abs(trace.loss - loss.item()) <= 1e-5
    for pname, tensor in P.items():
        assert normwise(trace.grads[pname], tensor.grad.numpy()) <= 1e-4, pname


def params32_as_64(params32):
    return {k: v.astype(np.float64) for k, v in params32.items()}


@pytest.mark.parametrize(
    "ours,theirs",
    [
        (xt_core.training.optim.AdamW(lr=3e-3, weight_decay=0.1), lambda groups: torch.optim.AdamW(groups, lr=3e-3)),
        (
            xt_core.training.optim.SGD(lr=0.2, momentum=0.9),
            lambda groups: torch.optim.SGD(groups, lr=0.2, momentum=0.9),
        ),
    ],
)
def test_optimizer_steps_match_torch_optim(ours, theirs):
    """Three steps on real gradients of the tiny preset, float64, to 1e-10."""
    from xt_core.training.optim import apply_update

    cfg = xt_core.PRESETS["tiny"]
    params = xt_core.init_params(cfg, seed=5, dtype=np.float64)
    P = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    decay = getattr(ours, "weight_decay", 0.0)
    groups = [
        {"params": [t for t in P.values() if t.ndim >= 2], "weight_decay": decay},
        {
            "params": [t for t in P.values() if t.ndim < 2],
            "weight_decay": decay if isinstance(ours, xt_core.training.optim.SGD) else 0.0,
        },
    ]
    opt = theirs(groups)
    state = None
    for step in range(3):
        inputs, targets = make_batch(cfg, 2, 10, seed=step)
        trace = xt_core.forward_backward(cfg, params, inputs, targets)
        update = apply_update(ours, params, trace.grads, state, trace.loss)
        params, state = update.params, update.state
        for name, t in P.items():
            t.grad = torch.tensor(trace.grads[name])
        opt.step()
        for name, t in P.items():
            assert np.max(np.abs(params[name] - t.detach().numpy())) <= 1e-10, (step, name)
