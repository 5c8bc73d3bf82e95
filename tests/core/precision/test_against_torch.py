"""The rounding model against PyTorch on CPU (torch.bfloat16 / torch.float16, explicit casts): casts
and one-operation elementwise ops bit for bit; ops with transcendental functions and matmuls within
one unit in the last place of the format (their float32 sums or formulas differ from torch's before
the one final rounding). Skips without torch, except in CI (XT_REQUIRE_TORCH=1)."""

import numpy as np
import pytest

from tests.helpers.env import TORCH_HINT, imported_when_run, skip_unless_installed
from xt_core.precision import FORMATS, Precision
from xt_core.tape import Node

pytestmark = pytest.mark.torch
skip_unless_installed("torch", hint=TORCH_HINT)
torch = F = None  # imported by load_torch, when this module's tests run
load_torch = imported_when_run(torch="torch", F="torch.nn.functional")


FORMAT_NAMES = ("bfloat16", "float16")


def torch_dtype(name):
    return {"bfloat16": torch.bfloat16, "float16": torch.float16}[name]


def bits(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def as_torch(x, name):
    return torch.from_numpy(np.ascontiguousarray(x)).to(torch_dtype(name))


def torch_back(t) -> np.ndarray:
    return t.to(torch.float32).numpy()


def run_op(policy, kind, *args, **attrs):
    node = Node("y", kind, tuple(f"x{k}" for k in range(len(args))), attrs=attrs)
    return policy.forward(node, list(args))[0]


def ulps_apart(ours, theirs, name) -> np.ndarray:
    """|ours - theirs| in units of the format's last place at theirs's magnitude (subnormals: the
    smallest subnormal)."""
    fmt = FORMATS[name]
    spacing = np.maximum(np.spacing(np.abs(theirs)) * 2.0 ** (23 - fmt.mantissa), fmt.min_subnormal)
    return np.abs(ours.astype(np.float64) - theirs) / spacing


@pytest.fixture(scope="module")
def every_kind_of_float32():
    """Random bit patterns (every exponent: normals, subnormals, infs, NaNs) and the hard cases:
    ties, the largest finite values and their neighbours, the subnormal boundaries."""
    rng = np.random.default_rng(0)
    random = rng.integers(0, 2**32, size=100_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    hard = [0.0, -0.0, 1.0, 1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, 65504.0, 65519.0, 65520.0, 3.3895e38, 3.39e38]
    hard += [2.0**-24, 2.0**-25, 1.5 * 2.0**-25, 2.0**-14, 2.0**-126, 2.0**-133, 2.0**-134, 2.0**-135, np.inf, np.nan]
    hard = np.array(hard, dtype=np.float32)
    return np.concatenate([random, hard, -hard])


@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_the_cast_is_torch_s_bit_for_bit(name, every_kind_of_float32):
    x = every_kind_of_float32
    ours = FORMATS[name].round(x)
    theirs = torch_back(as_torch(x, name))
    nan = np.isnan(x)
    assert np.array_equal(np.isnan(ours), nan)
    assert np.array_equal(bits(ours)[~nan], bits(theirs)[~nan])


@pytest.mark.parametrize("name", FORMAT_NAMES)
@pytest.mark.parametrize("scale", [2.0**4, 2.0**16])
def test_a_scaled_gradient_is_torch_s_cast_of_the_scaled_value_unscaled(name, scale, every_kind_of_float32):
    x = every_kind_of_float32[np.isfinite(every_kind_of_float32)]
    x = x[np.abs(x) < 1e30]  # x * S stays finite in float32 (where a scaler would have halved)
    ours = Precision.of(name, loss_scale=scale).round_grad(x)
    theirs = torch_back(as_torch(x * np.float32(scale), name)) / np.float32(scale)
    assert np.array_equal(bits(ours), bits(theirs))


@pytest.fixture(scope="module")
def operands():
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((3, 16, 64)) * 3).astype(np.float32)
    b = rng.standard_normal((3, 16, 64)).astype(np.float32)
    return a, b


@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_one_operation_elementwise_ops_are_torch_s_bit_for_bit(name, operands):
    a, b = operands
    policy = Precision.of(name)
    ta, tb = as_torch(a, name), as_torch(b, name)
    assert np.array_equal(bits(run_op(policy, "residual", a, b)), bits(torch_back(ta + tb)))
    assert np.array_equal(bits(run_op(policy, "bias", a, b[0, 0])), bits(torch_back(ta + tb[0, 0])))
    tokens = np.array([[0, 3, 3, 15]])
    table = a[0]
    assert np.array_equal(
        bits(run_op(policy, "embedding", tokens, table)), bits(torch_back(as_torch(table, name)[tokens]))
    )


@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_ops_with_transcendentals_are_within_one_ulp_of_torch_s(name, operands):
    """silu, GELU: xt's float32 formula and torch's differ by float32 round-off, so the one rounding
    to the format agrees except where the two float32 values straddle a rounding boundary. The exact
    GELU is held to torch's in float64 (explicit casts): torch's own half-precision GELU computes
    1 + erf(a/√2) in float32, which cancels in the negative tail (2 ulps off at a ≈ -3), where xt's
    erf is float64. The tanh form's 0.5 a (1 + tanh u) cancels in float32 in the negative tail (xt's
    float32 step as much, and torch's tail differs): outputs below 2^-8 |a| there are not compared."""
    a, b = operands
    policy = Precision.of(name)
    ta, tb = as_torch(a, name), as_torch(b, name)
    pairs = {
        "swiglu": (run_op(policy, "swiglu", a, b), (F.silu(ta.float()) * tb.float()).to(ta.dtype)),
        "gelu": (run_op(policy, "gelu", a), F.gelu(ta.double()).to(ta.dtype)),
        "gelu_tanh": (run_op(policy, "gelu_tanh", a), F.gelu(ta, approximate="tanh")),
    }
    for kind, (ours, theirs) in pairs.items():
        theirs = torch_back(theirs)
        cancelled = np.abs(theirs) < 2.0**-8 * np.abs(a) if kind == "gelu_tanh" else np.zeros(a.shape, bool)
        assert ulps_apart(ours, theirs, name)[~cancelled].max() <= 1, kind
        assert np.mean(bits(ours) == bits(theirs)) > 0.9, kind


@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_a_matmul_and_its_backward_are_within_one_ulp_of_torch_s(name, operands):
    """The forward and both gradients of y = x W against torch's autograd in the format: inputs
    rounded, float32 sums (in another order), one rounding of each result."""
    x = operands[0]
    w = (np.random.default_rng(2).standard_normal((64, 48)) / 8).astype(np.float32)
    dy = (np.random.default_rng(3).standard_normal((3, 16, 48))).astype(np.float32)
    policy = Precision.of(name)
    node = Node("y", "linear", ("x", "w"))
    ours, cache = policy.forward(node, [x, w])
    dx, dw = policy.backward(node, node.op.backward, dy, cache)
    tx, tw = as_torch(x, name).requires_grad_(), as_torch(w, name).requires_grad_()
    ty = tx @ tw
    ty.backward(as_torch(dy, name))
    for got, want in ((ours, ty.detach()), (dx, tx.grad), (dw, tw.grad)):
        assert ulps_apart(got, torch_back(want), name).max() <= 1
