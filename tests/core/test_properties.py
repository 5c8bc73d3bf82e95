"""Property tests of the core: for random *valid* configs, batches and seeds, the step is
finite, starts near ln(V), records the documented tensors, and its gradients agree with
central finite differences in float64; invalid configs fail naming the field; tokenizers
and checkpoints round-trip.

Bounded and deterministic: every test runs a fixed, derandomized set of small examples
(no example database), so a failure reproduces on every machine and the file stays well
under half a minute on a busy 2-core box.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import xt_core
from xt_core.checkpoint import Checkpoint, load, save
from xt_core.checks.directional import REL_STEP
from xt_core.checks.tolerances import FINITE_DIFFERENCES, FLOOR
from xt_core.names import tensor_names
from xt_core.tape import first_reader, replay_loss
from xt_core.text.byte_char import ByteTokenizer, CharTokenizer


def bounded(examples: int):
    """Deterministic hypothesis settings: fixed examples, no deadline (the machine is busy,
    a slow example is not a failure), no database (nothing carried between runs)."""
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# ---------------------------------------------------------------------- strategies


@st.composite
def configs(draw) -> xt_core.Config:
    """A small valid config: n_kv_head divides n_head, an even head_dim, n_embd = n_head * hd."""
    n_head = draw(st.sampled_from([1, 2, 3, 4]))
    n_kv_head = draw(st.sampled_from([k for k in (1, 2, 3, 4) if n_head % k == 0]))
    head_dim = draw(st.sampled_from([2, 4, 6]))
    return xt_core.Config(
        vocab_size=draw(st.integers(2, 24)),
        n_layer=draw(st.integers(1, 2)),
        n_head=n_head,
        n_kv_head=n_kv_head,
        n_embd=n_head * head_dim,
        ffn_hidden=draw(st.integers(1, 20)),
        seq_len=draw(st.integers(1, 8)),
        tie_embeddings=draw(st.booleans()),
        rope_theta=draw(st.sampled_from([10.0, 500.0, 10000.0])),
        norm_eps=draw(st.sampled_from([1e-6, 1e-5, 1e-3])),
    )


@st.composite
def steps(draw):
    """(cfg, params in float64, inputs, targets, seed): a random model and a random batch."""
    cfg = draw(configs())
    seed = draw(st.integers(0, 2**32 - 1))
    n_seq = draw(st.integers(1, 3))
    T = draw(st.integers(1, cfg.seq_len))
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, cfg.vocab_size, size=(n_seq, T + 1))
    params = xt_core.init_params(cfg, seed=seed, dtype=np.float64)
    return cfg, params, ids[:, :-1], ids[:, 1:], seed


def _cross_entropy(logits: np.ndarray, targets: np.ndarray) -> float:
    """Mean cross-entropy computed here, independently of the core's softmax and loss ops."""
    z = np.asarray(logits, dtype=np.float64)
    top = z.max(axis=-1, keepdims=True)
    lse = top[..., 0] + np.log(np.exp(z - top).sum(axis=-1))
    return float(np.mean(lse - np.take_along_axis(z, targets[..., None], -1)[..., 0]))


# ---------------------------------------------------------------------- the step


@bounded(40)
@given(steps())
def test_loss_is_finite_and_of_order_ln_vocab_at_init(step):
    cfg, params, inputs, targets, _ = step
    trace = xt_core.forward_backward(cfg, params, inputs, targets)
    assert math.isfinite(trace.loss)
    assert all(np.all(np.isfinite(g)) for g in trace.grads.values())
    # The loss is the mean cross-entropy of the recorded logits.
    assert trace.loss == pytest.approx(_cross_entropy(trace["logits"], targets), rel=1e-12, abs=1e-12)
    # ln(V) order, with an exact bound from the init: each logit is n . W_v with
    # ||n|| <= sqrt(C) (RMSNorm, gains 1), so |CE - ln V| <= 2 sqrt(C) max_v ||W_v||.
    head = params["tok_embeddings" if cfg.tie_embeddings else "output"]
    bound = 2 * math.sqrt(cfg.n_embd) * float(np.max(np.linalg.norm(head, axis=1)))
    assert abs(trace.loss - math.log(cfg.vocab_size)) <= bound + 1e-9


@bounded(20)
@given(steps())
def test_parameter_gradients_match_central_differences(step):
    cfg, params, inputs, targets, seed = step
    trace = xt_core.forward_backward(cfg, params, inputs, targets)  # float64
    rng = np.random.default_rng(seed)
    failed = []
    for name in trace.param_names:
        x, g = trace.values64[name], np.asarray(trace.grads[name]).reshape(-1)
        # The largest |g| entry (where a wrong factor shows most) and two random ones.
        entries = np.unique(np.append(rng.choice(x.size, size=min(2, x.size), replace=False), np.argmax(np.abs(g))))
        numeric = np.array([_richardson(trace, name, i) for i in entries])
        error = float(np.max(np.abs(g[entries] - numeric)))
        scale = max(float(np.max(np.abs(g[entries]))), float(np.max(np.abs(numeric))), FLOOR)
        if error > FINITE_DIFFERENCES * scale and error > _fd_resolution(_rms(x), trace.loss):
            failed.append((name, error / scale))
    assert not failed, f"gradients off central differences: {failed}"


def _rms(x: np.ndarray) -> float:
    """Over the finite entries, as gradcheck sizes its step (masked scores are -inf)."""
    finite = x[np.isfinite(x)]
    return float(np.sqrt(np.mean(np.square(finite)))) if finite.size else 1.0


def _fd_resolution(rms: float, loss: float) -> float:
    """The smallest derivative a float64 central difference resolves with gradcheck's step
    on a tensor of this RMS: round-off of the loss (a few hundred ulps after a few dozen
    ops) over the step. Below it a relative error means nothing: when every position reads
    the same token, v is the same everywhere, attention ignores its probabilities and
    dL/dwq is exactly 0, yet the difference quotient is ~1e-11 of noise."""
    return 256 * np.finfo(np.float64).eps * max(abs(loss), 1.0) / (REL_STEP * max(rms, 1e-3))


def _richardson(trace, name: str, entry: int) -> float:
    """dL/d(name)[entry] by Richardson-extrapolated central differences (steps h and h/2)
    in float64 on the tape. A plain central difference is off by ~h^2 f'''/6, which at
    gradcheck's step reaches 1e-5 relative where a 2-wide RMSNorm meets a near-zero
    residual row (a valid, very curved config); the extrapolation cancels that term."""
    nodes, env = trace.nodes, trace.values64
    start, x = first_reader(nodes, name), env[name]
    h = REL_STEP * max(_rms(x), 1e-3)

    def loss_at(delta: float) -> float:
        moved = x.reshape(-1).copy()
        moved[entry] += delta
        return replay_loss(nodes, env, start, replace={name: moved.reshape(x.shape)})

    def central(step: float) -> float:
        return (loss_at(step) - loss_at(-step)) / (2 * step)

    return (4 * central(h / 2) - central(h)) / 3


@bounded(30)
@given(steps(), st.data())
def test_any_step_passes_its_directional_check(step, data):
    """The walkthrough badge of a random step of a float32 trace (checked through its float64
    twin) passes: exactly what the page shows."""
    cfg, params, inputs, targets, seed = step
    params32 = {k: v.astype(np.float32) for k, v in params.items()}
    trace = xt_core.forward_backward(cfg, params32, inputs, targets)
    index = data.draw(st.integers(0, len(trace.records) - 1), label="record")
    check = xt_core.check_record(trace, index, seed=seed % 1000)
    failed = [(c.tensor, c.rel_error) for c in check.checks if c.rel_error > check.tolerance]
    assert check.passed, (trace.records[index].name, trace.records[index].phase, failed)


def test_a_repeated_token_passes_every_badge():
    """One token repeated: v is the same at every position, so attention's output ignores its
    probabilities and dL/dscores, dL/dq, dL/dk are exactly 0; every badge must still pass."""
    cfg = xt_core.Config(vocab_size=8, n_layer=2, n_head=4, n_kv_head=2, n_embd=64, ffn_hidden=172, seq_len=16)
    for seed in range(3):
        trace = xt_core.forward_backward(cfg, xt_core.init_params(cfg, seed=seed), np.zeros(8, int), np.zeros(8, int))
        failed = [r.name for r in trace.records if not xt_core.check_record(trace, r.index).passed]
        assert not failed, (seed, failed)


@bounded(20)
@given(steps())
def test_records_follow_names_and_shapes(step):
    cfg, params, inputs, targets, _ = step
    trace = xt_core.forward_backward(cfg, params, inputs, targets)
    names = tensor_names(cfg)
    forward = [r.name for r in trace.records if r.phase != "backward"]
    backward = [r.name for r in trace.records if r.phase == "backward"]
    assert forward == names and backward == names[::-1]  # backward runs in exact reverse order
    assert [r.index for r in trace.records] == list(range(len(trace.records)))
    B, T = inputs.shape
    H, hd = cfg.n_head, cfg.head_dim
    assert trace["logits"].shape == (B, T, cfg.vocab_size)
    assert trace["layers.0.attention.probs"].shape == (B, H, T, T)
    assert trace["layers.0.attention.k"].shape == (B, T, cfg.n_kv_head * hd)
    for name in names:
        assert trace.grad(name).shape == np.shape(trace[name]), name
    for name, value in params.items():
        assert trace.grads[name].shape == value.shape, name


@bounded(20)
@given(steps())
def test_float32_loss_is_close_to_float64(step):
    cfg, params, inputs, targets, _ = step
    loss64 = xt_core.forward_backward(cfg, params, inputs, targets).loss
    params32 = {k: v.astype(np.float32) for k, v in params.items()}
    trace32 = xt_core.forward_backward(cfg, params32, inputs, targets)
    assert trace32.dtype == np.float32
    # float32 carries ~7 digits; a dozen ops of unit-scale values lose a few of them.
    assert trace32.loss == pytest.approx(loss64, rel=1e-4, abs=1e-5)


# ---------------------------------------------------------------------- invalid configs

_INT_FIELDS = ("vocab_size", "n_layer", "n_head", "n_kv_head", "n_embd", "ffn_hidden", "seq_len")


@st.composite
def invalid_configs(draw) -> tuple[dict, str]:
    """(config kwargs with exactly one broken rule, the field the error must name)."""
    base = draw(configs()).to_dict()
    kind = draw(st.sampled_from(["not_positive", "not_int", "not_bool", "bad_float", "kv", "embd", "odd_hd"]))
    if kind == "not_positive":
        field = draw(st.sampled_from(_INT_FIELDS))
        return {**base, field: draw(st.integers(-5, 0))}, field
    if kind == "not_int":
        field = draw(st.sampled_from(_INT_FIELDS))
        return {**base, field: draw(st.sampled_from([2.5, "4", True, None]))}, field
    if kind == "not_bool":
        return {**base, "tie_embeddings": draw(st.sampled_from([1, "yes", None]))}, "tie_embeddings"
    if kind == "bad_float":
        field = draw(st.sampled_from(["rope_theta", "norm_eps"]))
        return {**base, field: draw(st.sampled_from([0.0, -1.0, math.inf, math.nan, "1e-5", False]))}, field
    if kind == "kv":  # n_kv_head that does not divide n_head
        n_head = draw(st.sampled_from([2, 3, 4]))
        n_kv = draw(st.sampled_from([k for k in range(2, 9) if n_head % k]))
        return {**base, "n_head": n_head, "n_kv_head": n_kv, "n_embd": 2 * n_head}, "n_kv_head"
    if kind == "embd":  # n_embd not a multiple of n_head
        n_head = draw(st.sampled_from([2, 3, 4]))
        return {**base, "n_head": n_head, "n_kv_head": 1, "n_embd": 2 * n_head + 1}, "n_embd"
    n_head = draw(st.sampled_from([1, 2, 4]))  # odd head_dim: RoPE rotates pairs
    return {**base, "n_head": n_head, "n_kv_head": 1, "n_embd": n_head * draw(st.sampled_from([1, 3, 5]))}, "head_dim"


@bounded(100)
@given(invalid_configs())
def test_invalid_configs_raise_naming_the_field(case):
    kwargs, field = case
    with pytest.raises(ValueError) as error:
        xt_core.Config(**kwargs)
    assert field in str(error.value), (kwargs, str(error.value))


# ---------------------------------------------------------------------- tokenizers, checkpoints

_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)  # UTF-8-encodable


@bounded(60)
@given(_TEXT)
def test_byte_tokenizer_round_trips(text):
    tok = ByteTokenizer()
    ids = tok.encode(text)
    assert all(0 <= i < 256 for i in ids)
    assert tok.decode(ids) == text


@bounded(60)
@given(_TEXT.filter(bool), st.data())
def test_char_tokenizer_round_trips_over_its_alphabet(text, data):
    tok = CharTokenizer.from_text(text)
    assert tok.vocab_size == len(set(text)) and tok.decode(tok.encode(text)) == text
    # Any string over the alphabet, not only the text it was built from.
    other = data.draw(st.text(st.sampled_from(tok.chars), max_size=20), label="other")
    assert tok.decode(tok.encode(other)) == other


@bounded(10)
@given(configs(), st.integers(0, 2**32 - 1), st.sampled_from([".safetensors", ".npz"]), st.booleans())
def test_checkpoint_round_trips_bit_for_bit(cfg, seed, suffix, float64):
    params = xt_core.init_params(cfg, seed=seed, dtype=np.float64 if float64 else np.float32)
    alphabet = "abcdefghijklmnopqrstuvwxyz"[: min(cfg.vocab_size, 26)]  # a tokenizer must fit the vocabulary
    original = Checkpoint(cfg, params, CharTokenizer(alphabet), {"seed": seed})
    # A fresh directory per example: pytest's tmp_path is one per test, shared by examples.
    with tempfile.TemporaryDirectory(prefix="xt-prop-") as directory:
        loaded = load(save(Path(directory) / f"m{suffix}", original))
    assert loaded.cfg == cfg and loaded.tokenizer == original.tokenizer and loaded.meta == {"seed": seed}
    assert set(loaded.params) == set(params)
    for name, value in params.items():
        assert loaded.params[name].dtype == value.dtype and loaded.params[name].tobytes() == value.tobytes(), name
