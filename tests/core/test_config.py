import numpy as np
import pytest

import xt_core
from tests.helpers.specs import make_batch


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(n_embd=60, n_head=8), r"n_embd \(60\) must be divisible by n_head \(8\)"),
        (dict(n_head=4, n_kv_head=3), r"n_head \(4\) must be divisible by n_kv_head \(3\)"),
        (dict(n_embd=12, n_head=4, n_kv_head=4), "head_dim .* must be even"),
        (dict(n_layer=0), "n_layer must be positive"),
        (dict(vocab_size=-3), "vocab_size must be positive"),
        (dict(seq_len=2.5), "seq_len must be an integer"),
        (dict(norm_eps=0.0), "norm_eps must be a positive finite number"),
        (dict(rope_theta=float("inf")), "rope_theta must be a positive finite number"),
        (dict(tie_embeddings="yes"), "tie_embeddings must be true or false"),
    ],
)
def test_config_errors_name_the_field_and_rule(kwargs, message):
    with pytest.raises(ValueError, match=message):
        xt_core.Config(**kwargs)


def test_config_is_frozen_and_round_trips():
    cfg = xt_core.Config()
    with pytest.raises(AttributeError):
        cfg.n_layer = 3
    assert xt_core.Config.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="unknown config field"):
        xt_core.Config.from_dict({"n_layers": 2})


def test_param_count_matches_init(tiny):
    for cfg in (tiny, xt_core.Config(tie_embeddings=False)):
        assert cfg.n_params() == sum(p.size for p in xt_core.init_params(cfg).values())


@pytest.fixture
def setup(tiny):
    return tiny, xt_core.init_params(tiny)


@pytest.mark.parametrize(
    "inputs,targets,message",
    [
        (np.zeros(33, int), np.zeros(33, int), r"T = 33 positions, more than seq_len = 32"),
        (np.array([1, 2, 96]), np.array([1, 2, 3]), r"token id 96 at \(0, 2\), outside \[0, vocab_size = 96\)"),
        (np.array([1, -1]), np.array([1, 2]), "token id -1"),
        (np.array([1, 2, 3]), np.array([1, 2]), "targets shape"),
        (np.array([1.0, 2.0]), np.array([1, 2]), "inputs must be integer token ids"),
        (np.zeros((1, 0), int), np.zeros((1, 0), int), "at least one token"),
        (np.zeros((1, 2, 3), int), np.zeros((1, 2, 3), int), r"shape \(T,\) or \(n_seq, T\)"),
    ],
)
def test_bad_tokens_are_value_errors(setup, inputs, targets, message):
    cfg, params = setup
    with pytest.raises(ValueError, match=message):
        xt_core.forward_backward(cfg, params, inputs, targets)


def test_bad_params_are_value_errors(setup):
    cfg, params = setup
    inputs, targets = make_batch(cfg, 1, 4)
    with pytest.raises(ValueError, match="missing"):
        xt_core.forward_backward(cfg, {k: v for k, v in params.items() if k != "norm"}, inputs, targets)
    wrong = dict(params, norm=np.ones(5, np.float32))
    with pytest.raises(ValueError, match=r"param norm has shape \(5,\), expected \(64,\)"):
        xt_core.forward_backward(cfg, wrong, inputs, targets)
    mixed = dict(params, norm=np.ones(64, np.float64))
    with pytest.raises(ValueError, match="must all be float32 or all float64"):
        xt_core.forward_backward(cfg, mixed, inputs, targets)
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        xt_core.init_params(cfg, dtype=np.float16)
    with pytest.raises(ValueError, match="seed"):
        xt_core.init_params(cfg, seed=-1)
