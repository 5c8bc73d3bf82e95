"""A recorded run (xt_core/film): any step rebuilt gives the recorded training's bits, the scores
recorded agree with the probes run on its checkpoints, and a run over its bound is refused before
anything is written. One small run (the induction task at a few widths) recorded per module."""

import itertools

import numpy as np
import pytest

import xt_core
from tests.helpers.film import small_plan
from xt_core.film.files import (
    RunError,
    checkpoint_path,
    digest,
    folder_bytes,
    read_checkpoint,
    read_run,
    write_checkpoint,
)
from xt_core.film.plan import PROBE_SEED, RunTooLarge
from xt_core.film.rebuild import batch_at, rebuild_step, replay, replayed_steps
from xt_core.film.record import Recording, dense_steps, record, steepest
from xt_core.lab.probes import induction_scores, previous_token_scores
from xt_core.lab.tasks import TASKS
from xt_core.training.loop import lr_schedule


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("film") / "run"
    seen = []
    record(small_plan(), folder, progress=lambda step, loss: seen.append(step))
    assert seen == list(range(24))
    return read_run(folder)


def test_the_run_is_the_training_xt_train_does(run):
    """The recorder's steps are train()'s: the same weights after the last step, the same losses."""
    plan = run.plan
    params = xt_core.init_params(run.cfg, seed=plan.seed, dtype=np.float32)
    lr_at = lr_schedule(plan.lr, plan.steps, plan.warmup, plan.decay)
    _, _, batches = TASKS[plan.task].setup(plan.batch, plan.seed)  # the stream `xt train` trains on
    trained, _, losses = xt_core.train(run.cfg, params, plan.optimizer(), batches, plan.steps, lr_at=lr_at)
    assert losses == run.log.loss.tolist()
    assert digest(trained) == int(run.log.digest[-1])


@pytest.mark.parametrize("step", [0, 5, 23])
def test_a_rebuilt_step_has_the_recorded_bits(run, step):
    trace = rebuild_step(run, step)
    assert trace.loss == run.log.loss[step]
    norms = [np.sqrt(np.sum(np.square(trace.grads[n], dtype=np.float64))) for n in run.names]
    assert np.array_equal(np.float32(norms), run.log.grad_norm[step])
    after = {name: trace.update.params[name] for name in run.names}
    assert digest(after) == int(run.log.digest[step + 1])  # the step's update: the recorded next weights


def test_the_dense_checkpoints_lie_where_the_loss_fell_fastest(run):
    fastest = run.steepest
    assert fastest == steepest(run.log.loss) and fastest["drop"] > 0
    assert run.dense and run.dense == dense_steps(run.plan, fastest, run.plan.checkpoint_steps())
    assert all(abs(s - fastest["step"]) <= fastest["window"] for s in run.dense)
    assert run.checkpoints == sorted({*run.plan.checkpoint_steps(), *run.dense})
    for step in run.checkpoints:
        params, _ = read_checkpoint(run, step)
        assert digest(params) == int(run.log.digest[step])
    after = run.dense[-1] + 1  # rebuilt from the last dense checkpoint: its weights, state and batch stream
    assert replayed_steps(run, after) == 1 and rebuild_step(run, after).loss == run.log.loss[after]


def test_a_steps_batch_is_the_streams_resumed_at_that_step(run):
    _, _, batches = TASKS[run.plan.task].setup(run.plan.batch, run.plan.seed)
    stream = list(itertools.islice(batches, run.plan.steps))
    for step in (0, 7, 9, 23):
        inputs, targets = batch_at(run, step)
        assert np.array_equal(inputs, stream[step][0]) and np.array_equal(targets, stream[step][1])


def test_the_recorded_scores_are_the_probes_on_the_checkpoints(run):
    plan = run.plan
    for step in run.checkpoints:
        params, _ = read_checkpoint(run, step)
        ind = induction_scores(run.cfg, params, plan.probe_period, plan.probe_seqs, PROBE_SEED).attention
        prev = previous_token_scores(run.cfg, params, plan.probe_period, plan.probe_seqs, PROBE_SEED)
        assert np.array_equal(np.float32(ind), run.log.induction[step])
        assert np.array_equal(np.float32(prev), run.log.previous[step])
    assert np.all((run.log.previous >= 0) & (run.log.previous <= 1))


def test_the_previous_token_score_is_the_attention_to_the_token_before():
    """Its definition, read entry by entry from the probe's attention probabilities."""
    cfg = small_plan().config()
    params = xt_core.init_params(cfg, seed=3, dtype=np.float64)
    scores = previous_token_scores(cfg, params, period=5, n_seq=3, seed=1)
    from xt_core.lab.probes import repeated_random_tokens, run_forward_only

    tokens = repeated_random_tokens(cfg.vocab_size, 5, 3, cfg.seq_len + 1, 1)
    env = run_forward_only(cfg, params, tokens[:, :-1], tokens[:, 1:])
    for layer in range(cfg.n_layer):
        probs = env[f"layers.{layer}.attention.probs"]
        by_hand = [np.mean([probs[b, h, t, t - 1] for b in range(3) for t in range(1, cfg.seq_len)]) for h in range(2)]
        np.testing.assert_allclose(scores[layer], by_hand, rtol=1e-12)


def test_a_run_over_its_bound_is_refused_before_anything_is_written(tmp_path):
    plan = small_plan()
    need = plan.estimated_bytes()
    folder = tmp_path / "too-big"
    with pytest.raises(RunTooLarge, match=rf"max_bytes = {need - 1:,}"):
        record(small_plan(max_bytes=need - 1), folder)
    assert not folder.exists()


def test_a_run_recorded_a_slice_at_a_time_is_the_same_run(run, tmp_path):
    """Recording(plan).advance(n) a few steps at a time (a server's page recording, between other
    builds) writes the bytes one record() call writes; next_steps says each slice's steps beforehand."""
    recording = Recording(small_plan(), tmp_path / "sliced")
    slices = []
    while not recording.finished:
        planned = recording.next_steps(5)
        trained = recording.step
        recording.advance(5)
        slices.append(planned if recording.finished else recording.step - trained)
    assert slices[:-1] == [5, 5, 5, 5, 4] and slices[-1] == recording.finishing_replays() > 0
    for path in sorted(p.relative_to(run.folder) for p in run.folder.rglob("*.npz")):
        assert (tmp_path / "sliced" / path).read_bytes() == (run.folder / path).read_bytes(), path
    assert read_run(tmp_path / "sliced").summary() == run.summary()


def test_the_estimate_bounds_the_folder_written(run):
    assert folder_bytes(run.folder) <= run.plan.estimated_bytes() <= run.plan.max_bytes


def test_a_changed_checkpoint_or_a_grown_folder_is_refused(run, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(run.folder, copy)
    moved = read_run(copy)
    params, state = read_checkpoint(moved, 8)
    params["norm"] = params["norm"] + np.float32(1e-3)
    checkpoint_path(copy, 8).unlink()
    write_checkpoint(copy, 8, params, state)
    with pytest.raises(RunError, match="step 9 rebuilt from checkpoint 8 differs from the recorded weights"):
        replay(moved, 9)
    checkpoint_path(copy, 8).unlink()
    write_checkpoint(copy, 8, params, {})  # its optimizer state lost
    with pytest.raises(RunError, match="m.tok_embeddings is missing"):
        replay(moved, 9)
    (copy / "padding.bin").write_bytes(b"\0" * run.plan.max_bytes)
    with pytest.raises(RunTooLarge, match="over its limit max_bytes"):
        read_run(copy)


def test_a_step_outside_the_run_is_refused(run):
    with pytest.raises(RunError, match=r"step must be an integer in \[0, 24\)"):
        replay(run, 24)


def test_xt_train_records_a_run(tmp_path, capsys):
    from threadpoolctl import threadpool_info, threadpool_limits

    from xt_cli import main

    before = threadpool_info()
    with threadpool_limits(limits=None, user_api="blas"):  # restores the BLAS threads xt train limits to 1
        _record_from_the_command_line(main, tmp_path, capsys)
    assert threadpool_info() == before


def test_xt_serve_offers_the_runs_of_a_folder(tmp_path, monkeypatch):
    import uvicorn

    from app.settings import Settings
    from xt_cli import main

    for key in ("XT_RUNS_DIR", "XT_ALLOWED_HOSTS", "XT_ADMIN_KEY"):
        monkeypatch.delenv(key, raising=False)  # and each set by `xt serve` is unset after the test
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)
    assert main(["serve", "--runs", str(tmp_path)]) == 0
    assert Settings.from_env().runs_dir == tmp_path.resolve()


def _record_from_the_command_line(main, tmp_path, capsys):
    folder = tmp_path / "cli-run"
    argv = ["train", "--task", "induction", "--steps", "6", "--batch", "2", "--every", "3", "--record", str(folder)]
    assert main(argv) == 0
    recorded = read_run(folder)
    assert recorded.plan.steps == 6 and recorded.checkpoints[:1] == [0] and 3 in recorded.checkpoints
    assert "recorded" in capsys.readouterr().out
    assert main([*argv[:-1], str(tmp_path / "other"), "--max-mb", "0.1"]) == 2
    assert "over its limit max_bytes = 100,000" in capsys.readouterr().err
    assert not (tmp_path / "other").exists()
    assert main(argv) == 2  # the folder holds a run: never written over
    assert "exists and is not empty" in capsys.readouterr().err


def test_the_gradient_of_wq_and_wk_splits_exactly_by_the_writes_it_reads():
    """Σ_c G_c = dL/dW (float64: to rounding), one part per write of layer 1's residual stream."""
    from xt_core.film.composition import gradient_parts, shares

    cfg = small_plan().config()
    params = xt_core.init_params(cfg, seed=1, dtype=np.float64)
    tokens = np.random.default_rng(0).integers(0, cfg.vocab_size, (2, 17))
    trace = xt_core.forward_backward(cfg, params, tokens[:, :-1], tokens[:, 1:], keep_param_grads=True)
    parts = gradient_parts(cfg, params, trace, layer=1, projections=("wq", "wk", "wv"))
    for projection, split in parts.items():
        assert list(split) == ["embedding", "L0.head0", "L0.head1", "L0.ffn"]
        whole = trace.grads[f"layers.1.attention.{projection}"]
        np.testing.assert_allclose(sum(split.values()), whole, rtol=0, atol=1e-12 * np.abs(whole).max())
        assert sum(shares(split).values()) == pytest.approx(1.0, abs=1e-12)


def test_the_split_on_a_run_measures_each_write_against_the_weights_change(run):
    from xt_core.film.composition import composition_at

    found = composition_at(run, 9, layer=1, ahead=4)
    for measured in found["projections"]["wk"].values():  # one step's gradient, and the 4 steps' summed
        assert set(measured["writes"]) == {"embedding", "L0.head0", "L0.head1", "L0.ffn"}
        assert sum(w["share"] for w in measured["writes"].values()) == pytest.approx(1.0, abs=1e-9)
        assert all(-1 <= w["cosine_with_change"] <= 1 for w in measured["writes"].values())
    # AdamW's first step moves each entry by -lr sign(g): its cosine with -G is ||G||_1 / (sqrt(n) ||G||_2)
    grad = np.asarray(rebuild_step(run, 0).grads["layers.1.attention.wk"], np.float64)
    expected = np.abs(grad).sum() / (np.sqrt(grad.size) * np.linalg.norm(grad))
    first = composition_at(run, 0, ahead=1)["projections"]["wk"]["one_step"]["cosine_with_change"]
    assert first == pytest.approx(expected, rel=1e-3)
    with pytest.raises(ValueError, match=r"ahead must be an integer in \[1, 15\)"):
        composition_at(run, 9, ahead=15)


def test_the_attention_frames_are_the_probe_on_the_weights_of_their_steps(run):
    """A frame is frame_of the weights the training held before its step (a regular frame taken while
    training, a dense one by the second pass), on the first of the score probes' sequences."""
    from xt_core.film import attention

    frames = attention.read_frames(run.folder, run.plan, run.cfg)
    assert frames.step.tolist() == list(range(24))  # 32 spread over 24 steps: every one
    probe = attention.probe_tokens(run.plan, run.cfg)
    for step in (0, 5, 17):
        weights, _, _ = replay(run, step)
        assert np.array_equal(frames.probs[step], attention.frame_of(run.cfg, weights, probe))
    square = frames.square(frames.nearest(6), layer=1, head=0)
    assert np.allclose(square.sum(axis=1), 1, atol=run.cfg.seq_len / 255) and not np.triu(square, 1).any()


def test_the_frames_lie_spread_and_where_the_loss_fell_fastest():
    from xt_core.film import attention

    plan = small_plan(steps=200, every=100, attention_frames=7)
    regular = attention.regular_steps(plan)
    assert regular == [0, 66, 133, 199]
    assert attention.dense_steps(plan, {"step": 100, "window": 10}, regular) == [90, 100, 110]
    with pytest.raises(ValueError, match=r"attention_frames must be an integer in \[0, 256\], got 257"):
        small_plan(attention_frames=257)
    assert small_plan(attention_frames=0).estimated_bytes() < small_plan().estimated_bytes()
