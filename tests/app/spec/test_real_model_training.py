"""A real model's update step and training as the spec and the forms state them: its own
default learning rates (one step on its examples lowers the loss; the demo models' defaults
raised it), the training limit the server applies for it and the text (the walk page and the
home form say that limit, not the server's maximum), and refusals that advise only what the
person can change (a checkpoint's sizes are fixed). The model: a tiny GGUF stored under
SmolLM2's name (tests/app/checkpoints/test_real_models.py); the real one's steps are too slow here."""

from __future__ import annotations

from pathlib import Path

import pytest

import xt_core
from app.checkpoints.real_models import KNOWN_MODELS
from app.settings import Settings
from app.spec import SpecError, TraceSpec, resolve
from app.spec.cost import step_seconds
from app.spec.resolve import check_trace_bytes
from app.spec.training import APP_DEFAULTS, default_lrs
from tests.helpers.client import make_client
from tests.helpers.gguf_files import STAND_IN, STAND_IN_NAME, STAND_IN_TEXT

NAME, CFG, TEXT = STAND_IN_NAME, STAND_IN, STAND_IN_TEXT
RANDOM = {"n_layer": 1, "n_head": 4, "n_kv_head": 2, "n_embd": 16, "ffn_hidden": 24, "seq_len": 64}


def settings_allowing_one_step(models_dir: Path) -> Settings:
    """Settings whose time limit allows one training step of the model on TEXT, not two."""
    T = len(resolve(TraceSpec(model=NAME, text=TEXT), Settings(models_dir=models_dir)).inputs[0])
    return Settings(models_dir=models_dir, max_train_seconds=1.5 * step_seconds(CFG, 1, T, "float32"))


def resolved_optimizer(spec: dict, settings: Settings) -> dict:
    return resolve(TraceSpec.model_validate(spec), settings).canonical["optimizer"]


def test_a_real_model_gets_its_own_default_learning_rates(models_dir):
    settings = Settings(models_dir=models_dir)
    own = KNOWN_MODELS[NAME].default_lr
    for name in ("adamw", "sgd"):
        optimizer = resolved_optimizer({"model": NAME, "text": TEXT, "optimizer": {"name": name}}, settings)
        assert optimizer["lr"] == own[name]
        random_init = resolved_optimizer({"config": RANDOM, "text": TEXT, "optimizer": {"name": name}}, settings)
        assert random_init["lr"] == default_lrs()[name] != own[name]
    # training without an optimizer named: AdamW at the model's own rate
    assert resolved_optimizer({"model": NAME, "text": TEXT, "train_steps": 1}, settings)["lr"] == own["adamw"]
    # one source: the spec's defaults are what default_lrs says, for the model and for a random init
    assert default_lrs(NAME) == own and default_lrs()["adamw"] == APP_DEFAULTS["adamw"]["lr"]
    # a chosen lr still wins
    chosen = resolved_optimizer({"model": NAME, "text": TEXT, "optimizer": {"name": "sgd", "lr": 0.5}}, settings)
    assert chosen["lr"] == 0.5


def test_the_listing_gives_its_default_lr_and_tokenizer_label(models_dir):
    with make_client(models_dir=models_dir) as client:
        model = next(m for m in client.get("/api/models").json()["models"] if m["name"] == NAME)
    assert model["default_lr"] == KNOWN_MODELS[NAME].default_lr
    assert model["tokenizer_label"] == "SmolLM2 BPE (from the model file)"


def test_too_many_steps_of_a_real_model_advise_nothing_it_cannot_change(models_dir):
    settings = settings_allowing_one_step(models_dir)
    with pytest.raises(SpecError) as refused:
        resolve(TraceSpec.model_validate({"model": NAME, "text": TEXT, "train_steps": 2}), settings)
    message = refused.value.msg
    assert refused.value.loc == ("body", "train_steps")
    # nothing after the limit: no fewer layers or heads (fixed), no float32 (already), no shorter
    # text (this model's step costs about the same at any length of it)
    assert message.endswith("at most 1 step here") and "1 steps" not in message
    resolve(TraceSpec.model_validate({"model": NAME, "text": TEXT, "train_steps": 1}), settings)  # one is fine


def test_too_many_steps_of_a_random_init_still_advise_smaller_sizes(models_dir):
    settings = Settings(models_dir=models_dir, max_train_seconds=1.5 * step_seconds(xt_core.Config(
        vocab_size=256, **RANDOM), 1, 32, "float64"))  # fmt: skip
    spec = {"config": RANDOM, "tokenizer": "byte", "text": "x" * 33, "dtype": "float64", "train_steps": 5}
    with pytest.raises(SpecError) as refused:
        resolve(TraceSpec.model_validate(spec), settings)
    assert "at most 1 step here (fewer layers, heads or positions or float32 allow more)" in refused.value.msg


def test_a_real_models_trace_too_large_in_float64_asks_for_float32():
    cfg = xt_core.Config(vocab_size=600, n_layer=2, n_head=4, n_kv_head=2, n_embd=64, ffn_hidden=96, seq_len=64)
    float32 = xt_core.names.estimate_build_bytes(cfg, 1, 32, 4)
    settings = Settings(max_trace_bytes=float32 + 1)
    with pytest.raises(SpecError) as refused:
        check_trace_bytes(cfg, 1, 32, "float64", settings, fixed_sizes=True)
    assert refused.value.loc == ("body", "dtype") and refused.value.msg.endswith("use float32")
    with pytest.raises(SpecError) as refused:
        check_trace_bytes(cfg, 1, 32, "float64", settings)  # a random init's sizes can change
    assert refused.value.loc == ("body", "config") and "layers or heads" in refused.value.msg


def test_float32_is_advised_where_its_borrowed_weights_make_it_fit_and_tokens_are_named():
    """SmolLM2 in float64 at 40 positions was told "use a shorter text" though float32 fits: a
    float32 trace borrows the checkpoint's weights. A spec of token ids is told about its tokens."""
    cfg = xt_core.Config(vocab_size=600, n_layer=2, n_head=4, n_kv_head=2, n_embd=64, ffn_hidden=96, seq_len=64)
    borrowed = xt_core.names.estimate_build_bytes(cfg, 1, 32, 4, shared_params=True)
    assert xt_core.names.estimate_build_bytes(cfg, 1, 32, 4) > borrowed + 1
    settings = Settings(max_trace_bytes=borrowed + 1)
    with pytest.raises(SpecError) as refused:
        check_trace_bytes(cfg, 1, 32, "float64", settings, shared=True, fixed_sizes=True)
    assert refused.value.loc == ("body", "dtype"), refused.value.msg
    with pytest.raises(SpecError) as refused:
        check_trace_bytes(
            cfg, 1, 32, "float64", settings, fixed_sizes=True, tokens_given=True
        )  # training: not borrowed
    assert refused.value.loc == ("body", "tokens") and "give fewer tokens" in refused.value.msg
    assert "or no training steps first" in refused.value.msg  # without them float32 borrows the weights: fits


def test_the_walk_page_states_the_limit_it_applies(models_dir):
    one_step = settings_allowing_one_step(models_dir)
    with make_client(models_dir=models_dir, max_train_seconds=one_step.max_train_seconds) as client:
        page = client.get("/walk", params={"model": NAME, "text": TEXT, "optimizer": "adamw"}).text
    assert "at most 1 training step<" in page and "at most 500" not in page
    assert "Train 10 steps" not in page


def test_the_home_form_states_the_models_limit_default_lr_and_tokenizer(models_dir):
    one_step = settings_allowing_one_step(models_dir)
    with make_client(models_dir=models_dir, max_train_seconds=one_step.max_train_seconds) as client:
        page = client.get("/", params={"model": NAME, "text": TEXT}).text
        bare = client.get("/").text  # a demo model (or none shipped): the app's defaults
    assert "0–1 optimizer step on this text" in page and "0–500" not in page
    assert 'placeholder="0.00003"' in page and "AdamW 0.00003, SGD 0.003" in page
    assert """data-default-lrs='{"adamw": "0.003", "sgd": "0.1"}'""" in page  # a random init's, for the script
    assert '<option value="bpe" data-model-tokenizer selected>SmolLM2 BPE (from the model file)</option>' in page
    assert "AdamW 0.003, SGD 0.1" in bare and "data-model-tokenizer" not in bare


@pytest.mark.parametrize("optimizer", ["adamw", "sgd"])
def test_the_real_smollm2s_default_step_lowers_the_loss_on_its_examples(smollm2_models_dir, optimizer):
    """The first update a student sees with the defaults is no "overshot" warning (AdamW 3e-3 took
    the loss from 5.92 to 8.65 on the second example). The fetched model (skips without it)."""
    from app.traces.store import build_trace

    settings = Settings(models_dir=smollm2_models_dir)
    text = KNOWN_MODELS[NAME].examples[-1]  # the example the old default overshot (one: ~3 s a step)
    spec = resolve(TraceSpec.model_validate({"model": NAME, "text": text, "optimizer": {"name": optimizer}}), settings)
    update = build_trace(spec).update
    assert update.loss_after < update.loss_before, (optimizer, text, update.loss_before, update.loss_after)


@pytest.mark.parametrize("steps", [10**400, 10**20, 501])
def test_a_huge_step_count_is_refused_by_count_before_any_time_estimate(models_dir, steps):
    """Where time binds (a checkpoint), the count is still checked first: 10**400 steps made the
    time estimate overflow (a 500) and 1e308 was quoted digit by digit."""
    spec = TraceSpec.model_validate({"model": NAME, "text": TEXT, "optimizer": {"name": "sgd"}, "train_steps": steps})
    with pytest.raises(SpecError) as refused:
        resolve(spec, settings_allowing_one_step(models_dir))
    message = str(refused.value)
    assert "max_train_steps" in message and len(message) < 200, message
