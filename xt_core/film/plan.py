"""A recorded run's plan: what it trains (a demo task, its optimizer and schedule), which steps keep
a checkpoint, how the heads are probed, and the bytes the run will take on disk, known and checked
against its bound before anything is trained or written.

plan = RunPlan(task="induction", steps=200, every=50)
need = plan.estimated_bytes()   # an upper bound of the folder's size; > plan.max_bytes: RunTooLarge
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from xt_core.config import Config
from xt_core.lab.tasks import TASKS
from xt_core.model import param_shapes
from xt_core.training.loop import lr_schedule
from xt_core.training.optim import AdamW

RUN_MAX_BYTES = 5_000_000  # a run's bound unless its plan states another (the shipped run's, too)
RUN_CEILING_BYTES = 1 << 30  # no plan may state a bound above this
MAX_STEPS = 100_000
MAX_CHECKPOINTS = 256  # regular and dense together: run.json lists them
MAX_DENSE = 16
MAX_ATTENTION_FRAMES = 256  # the probe's attention kept at this many steps at most (xt_core/film/attention.py)
# An .npz member's bytes beyond its data: the zip's local and central headers (zip64 extras
# included) and the npy header, at most this plus twice the member's name (it is in both headers).
MEMBER_OVERHEAD = 512
FILE_OVERHEAD = 1024  # an .npz file's end records
META_BYTES = 16_384  # run.json is refused larger than this when written
# The widths a plan may change in its task's model: the batches depend on none of them.
WIDTHS = ("n_layer", "n_head", "n_kv_head", "n_embd", "ffn_hidden")
PARAM_DTYPE = np.float32
ADAMW_SLOTS = ("m", "v")  # the optimizer state's arrays per parameter; "t" a scalar beside them
PROBE_SEED = 0  # every step's heads are probed on the same sequences, so their curves are smooth


class RunTooLarge(ValueError):
    """A run would pass its stated size bound: refused before anything is written."""


def _check_int(name: str, value, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")


@dataclass(frozen=True)
class RunPlan:
    task: str = "induction"
    steps: int = 200
    batch: int = 16
    seed: int = 0
    lr: float = 3e-3
    weight_decay: float = 0.0
    warmup: int = 0
    decay: str = "constant"
    every: int = 50  # a checkpoint before every step that is a multiple of this
    dense: int = 2  # checkpoints added after the run where the loss fell fastest
    probe_period: int = 8  # the induction probe's period (xt_core/lab/probes.py)
    probe_seqs: int = 8  # sequences the heads are probed on, every step
    attention_frames: int = 64  # steps whose attention on the probe is kept (half where the loss fell fastest)
    sizes: dict = field(default_factory=dict)  # the task model's widths changed (WIDTHS)
    max_bytes: int = RUN_MAX_BYTES

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(sorted(TASKS))}, got {self.task!r}")
        _check_int("steps", self.steps, 1, MAX_STEPS)
        _check_int("batch", self.batch, 1, 256)
        _check_int("seed", self.seed, 0, 2**32 - 1)
        _check_int("every", self.every, 1, self.steps)
        _check_int("dense", self.dense, 0, MAX_DENSE)
        _check_int("probe_seqs", self.probe_seqs, 1, 64)
        _check_int("attention_frames", self.attention_frames, 0, MAX_ATTENTION_FRAMES)
        _check_int("max_bytes", self.max_bytes, 1, RUN_CEILING_BYTES)
        unknown = sorted(set(self.sizes) - set(WIDTHS))
        if unknown:
            raise ValueError(f"sizes may change only {', '.join(WIDTHS)}; got {', '.join(unknown)}")
        if len(self.checkpoint_steps()) + self.dense > MAX_CHECKPOINTS:
            raise ValueError(f"every = {self.every} keeps over {MAX_CHECKPOINTS} checkpoints in {self.steps} steps")
        self.optimizer()  # lr and weight_decay in their optimizer's bounds
        lr_schedule(self.lr, self.steps, self.warmup, self.decay)
        cfg = self.config()
        _check_int("probe_period", self.probe_period, 3, cfg.seq_len - 1)

    def config(self) -> Config:
        cfg, _, _ = TASKS[self.task].setup(batch=1, seed=0)
        return Config.from_dict({**cfg.to_dict(), **self.sizes})  # head_dim follows the new widths

    def stream(self, start: int, rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The task's batches from `start` on, drawn from `rng` in the state the stream left it after
        `start` batches (a run keeps it for every step); from 0, first_rng() (the stream `xt train` trains on)."""
        return TASKS[self.task].resume(self.batch, rng, start)

    def first_rng(self) -> np.random.Generator:
        return np.random.default_rng(self.seed)

    def optimizer(self) -> AdamW:
        return AdamW(lr=self.lr, weight_decay=self.weight_decay)

    def optimizer_at(self, step: int) -> AdamW:
        """The optimizer with step's learning rate (the schedule `xt train` follows)."""
        return dataclasses.replace(self.optimizer(), lr=lr_schedule(self.lr, self.steps, self.warmup, self.decay)(step))

    def checkpoint_steps(self) -> list[int]:
        """The regular checkpoints: the weights and optimizer state before steps 0, every, 2 every, ..."""
        return list(range(0, self.steps, self.every))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data) -> RunPlan:
        if not isinstance(data, dict):
            raise ValueError("plan must be an object")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown plan field(s): {', '.join(unknown)}")
        return cls(**data)

    def estimated_bytes(self) -> int:
        """An upper bound of the run folder's bytes (run.json, steps.npz, every checkpoint, attention.npz)."""
        cfg = self.config()
        shapes = param_shapes(cfg)
        n, p, heads = self.steps, len(shapes), cfg.n_layer * cfg.n_head
        log = [("loss", 8 * n), ("digest", 8 * (n + 1)), ("grad_norm", 4 * n * p), ("update_norm", 4 * n * p)]
        log += [("induction", 4 * n * heads), ("previous", 4 * n * heads), ("stream", 48 * n)]
        weights, state = [], []
        for name, shape in shapes.items():
            size = int(np.prod(shape)) * np.dtype(PARAM_DTYPE).itemsize
            weights.append((f"w.{name}", size))
            state += [(f"t.{name}", 8)] + [(f"{slot}.{name}", size) for slot in ADAMW_SLOTS]
        with_state = len(self.checkpoint_steps()) - 1 + self.dense  # step 0's has no optimizer state yet
        frames = _npz_bytes(self.frame_members(cfg)) if self.attention_frames else 0
        return META_BYTES + _npz_bytes(log) + _npz_bytes(weights) + with_state * _npz_bytes(weights + state) + frames

    def frame_members(self, cfg: Config) -> list[tuple[str, int]]:
        """attention.npz's members at their largest (every frame distinct; xt_core/film/attention.py)."""
        frames, T = min(self.attention_frames, self.steps), cfg.seq_len
        probs = frames * cfg.n_layer * cfg.n_head * T * (T + 1) // 2  # one byte each, the lower triangle
        return [("step", 8 * frames), ("probs", probs), ("tokens", 8 * T)]

    def check_bound(self) -> int:
        """estimated_bytes(), or RunTooLarge naming the bound (before anything is trained or written)."""
        need = self.estimated_bytes()
        if need > self.max_bytes:
            raise RunTooLarge(
                f"the run would take up to {need:,} bytes on disk ({len(self.checkpoint_steps())} checkpoints "
                f"every {self.every} steps, {self.dense} dense), over its limit max_bytes = {self.max_bytes:,} "
                "(xt train --max-mb): keep fewer checkpoints (a larger every), fewer steps, or raise the limit"
            )
        return need


def _npz_bytes(members: list[tuple[str, int]]) -> int:
    return FILE_OVERHEAD + sum(MEMBER_OVERHEAD + 2 * len(name) + nbytes for name, nbytes in members)
