"""The film's attention frames: every head's attention on one fixed probe sequence, kept at some of a
run's steps so that a scrubbed film draws attention per frame from memory (docs/film.md, "Attention
while scrubbing"). The probe sequence is the first of the plan's score probes (`repeated_random_tokens`
at `probe_period`, seed PROBE_SEED): the sequence the induction and previous-token scores read, never
the step's own batch. A frame is the attention before the step's update (the weights W_s, as the
scores), each probability rounded to a byte (round(p · 255)), the causal lower triangle only.

Which steps: of plan.attention_frames, half spread evenly over the run (taken while it trains), the
rest spread evenly over the window of the steepest fall (known after the run: taken by a second pass
that replays from the checkpoint before the window, each frame's weights checked against the digest).

attention.npz   step (F,) int64, sorted; probs (F, n_layer, n_head, T (T + 1) / 2) uint8: row q of a
                head holds keys 0..q, rows one after another; tokens (T,) int64: the probe's inputs
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xt_core.config import Config
from xt_core.film.plan import PROBE_SEED, RunPlan
from xt_core.lab.probes import repeated_random_tokens, run_forward_only

FILE = "attention.npz"
LEVELS = 255  # a probability p is kept as round(p · LEVELS), one byte


@dataclass
class AttentionFrames:
    step: np.ndarray  # (F,) int64, sorted
    probs: np.ndarray  # (F, n_layer, n_head, T (T + 1) / 2) uint8
    tokens: np.ndarray  # (T,) int64: the probe sequence's inputs

    def nearest(self, step: int) -> int:
        """The index of the frame nearest `step` (the earlier of two as near)."""
        return int(np.argmin(np.abs(self.step - step)))

    def square(self, frame: int, layer: int, head: int) -> np.ndarray:
        """One head's pattern of frame `frame` as a (T, T) float64 matrix (zeros above the diagonal)."""
        T = self.tokens.size
        rows, cols = np.tril_indices(T)
        out = np.zeros((T, T))
        out[rows, cols] = self.probs[frame, layer, head] / LEVELS
        return out


def probe_tokens(plan: RunPlan, cfg: Config) -> tuple[np.ndarray, np.ndarray]:
    """(inputs, targets), each (1, T): the first of the sequences the scores are probed on."""
    tokens = repeated_random_tokens(cfg.vocab_size, plan.probe_period, plan.probe_seqs, cfg.seq_len + 1, PROBE_SEED)
    return tokens[:1, :-1], tokens[:1, 1:]


def frame_of(cfg: Config, params: dict, probe: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Every head's attention on the probe, (n_layer, n_head, T (T + 1) / 2) uint8."""
    env = run_forward_only(cfg, params, *probe)
    rows, cols = np.tril_indices(cfg.seq_len)
    probs = np.stack([env[f"layers.{L}.attention.probs"][0][:, rows, cols] for L in range(cfg.n_layer)])
    return np.round(np.clip(probs, 0.0, 1.0) * LEVELS).astype(np.uint8)


def regular_steps(plan: RunPlan) -> list[int]:
    """The frames taken while the run trains: (attention_frames + 1) // 2 steps spread evenly."""
    count = (plan.attention_frames + 1) // 2
    if not count:
        return []
    return sorted({int(s) for s in np.round(np.linspace(0, plan.steps - 1, count))})


def dense_steps(plan: RunPlan, fastest: dict, regular: list[int]) -> list[int]:
    """The rest of attention_frames spread evenly over [step - window, step + window] of the steepest
    fall (run.json's `steepest`), the regular frames left out."""
    count = plan.attention_frames - (plan.attention_frames + 1) // 2
    if not count:
        return []
    low = max(0, fastest["step"] - fastest["window"])
    high = min(plan.steps - 1, fastest["step"] + fastest["window"])
    return sorted({int(s) for s in np.round(np.linspace(low, high, count))} - set(regular))


def write_frames(folder: Path, frames: dict[int, np.ndarray], tokens: np.ndarray) -> None:
    steps = sorted(frames)
    probs = np.stack([frames[s] for s in steps])
    np.savez(Path(folder) / FILE, step=np.array(steps, np.int64), probs=probs, tokens=np.asarray(tokens, np.int64))


def read_frames(folder: Path, plan: RunPlan, cfg: Config) -> AttentionFrames | None:
    """The run's frames, each array's dtype and shape checked (ValueError); None: the run keeps none."""
    if not plan.attention_frames:
        return None
    with np.load(Path(folder) / FILE, allow_pickle=False) as npz:
        if set(npz.files) != {"step", "probs", "tokens"}:
            raise ValueError(f"{FILE} holds {sorted(npz.files)}, expected probs, step, tokens")
        step, probs, tokens = npz["step"], npz["probs"], npz["tokens"]
    count = step.shape[0] if step.ndim == 1 else -1
    shape = (count, cfg.n_layer, cfg.n_head, cfg.seq_len * (cfg.seq_len + 1) // 2)
    if step.dtype != np.int64 or not 1 <= count <= plan.attention_frames or probs.shape != shape:
        raise ValueError(f"{FILE}: step {step.dtype}{list(step.shape)}, probs {probs.dtype}{list(probs.shape)}")
    if probs.dtype != np.uint8 or tokens.dtype != np.int64 or tokens.shape != (cfg.seq_len,):
        raise ValueError(f"{FILE}: probs {probs.dtype}, tokens {tokens.dtype}{list(tokens.shape)}")
    if np.any(np.diff(step) <= 0) or step[0] < 0 or step[-1] >= plan.steps:
        raise ValueError(f"{FILE}: its steps must rise within [0, {plan.steps})")
    return AttentionFrames(step, probs, tokens)
