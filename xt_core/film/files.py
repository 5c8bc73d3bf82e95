"""A recorded run on disk, a folder:

    run.json                 {"format": "xt-run", "version": 2, "plan", "config", "params", "checkpoints",
                             "dense", "steepest", "estimated_bytes"} (version 1, still read: no attention.npz)
    steps.npz                per step s in [0, steps): loss, grad_norm and update_norm (s, parameter),
                             induction and previous (s, layer, head); stream (s, 6): the batch stream's
                             generator before each step's batch; digest (steps + 1) of the weights
                             before each step and after the last
    checkpoints/step-SSSSSS.npz   the weights before step S (w.NAME) and the optimizer's state (m.NAME,
                             v.NAME, t.NAME; none before step 0)
    attention.npz            every head's attention on the probe sequence at some steps (xt_core/film/attention.py)

Reading checks the folder's size against the plan's bound before any array is read, every
array's name, dtype and shape, and never unpickles.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xt_core.config import Config
from xt_core.film.plan import ADAMW_SLOTS, META_BYTES, PARAM_DTYPE, RunPlan, RunTooLarge
from xt_core.model import param_shapes

FORMAT, VERSION = "xt-run", 2
READABLE = (1, 2)  # version 1: no attention frames (its plan has no attention_frames: read as 0)


class RunError(ValueError):
    """The folder is not a run xt can read, or a step rebuilt differs from the recorded one."""


@dataclass
class StepLog:
    """What every step keeps (shapes in the module's docstring)."""

    loss: np.ndarray
    grad_norm: np.ndarray
    update_norm: np.ndarray
    induction: np.ndarray
    previous: np.ndarray
    digest: np.ndarray
    stream: np.ndarray  # (steps, 6) uint64: the batch stream's generator before each step's batch (stream_row)

    @classmethod
    def empty(cls, steps: int, n_params: int, cfg: Config) -> StepLog:
        heads = (steps, cfg.n_layer, cfg.n_head)
        return cls(
            np.full(steps, np.nan),
            np.zeros((steps, n_params), np.float32),
            np.zeros((steps, n_params), np.float32),
            np.zeros(heads, np.float32),
            np.zeros(heads, np.float32),
            np.zeros(steps + 1, np.uint64),
            np.zeros((steps, 6), np.uint64),
        )

    def arrays(self) -> dict[str, np.ndarray]:
        return dict(vars(self))


@dataclass
class Run:
    folder: Path
    plan: RunPlan
    cfg: Config
    names: list[str]  # the parameters, in the order of grad_norm's and update_norm's columns
    checkpoints: list[int]  # every step with a checkpoint, sorted (regular and dense)
    dense: list[int]
    steepest: dict  # {"step", "drop", "window"}: where the smoothed loss fell fastest
    log: StepLog | None  # None: read_meta's run, its steps not read

    def summary(self) -> dict:
        """Everything but the steps' arrays, JSON-able (run.json's keys)."""
        return {
            "plan": self.plan.to_dict(),
            "config": self.cfg.to_dict(),
            "params": self.names,
            "checkpoints": self.checkpoints,
            "dense": self.dense,
            "steepest": self.steepest,
        }


def digest(params: dict[str, np.ndarray]) -> int:
    """64 bits of BLAKE2b over every parameter's bytes in order: equal digests, the same weights."""
    h = hashlib.blake2b(digest_size=8)
    for name, p in params.items():
        h.update(name.encode())
        h.update(np.ascontiguousarray(p).tobytes())
    return int.from_bytes(h.digest(), "little")


def checkpoint_path(folder: Path, step: int) -> Path:
    return Path(folder) / "checkpoints" / f"step-{step:06d}.npz"


def write_checkpoint(folder: Path, step: int, params: dict, state: dict) -> None:
    arrays = {f"w.{name}": p for name, p in params.items()}
    for name, slot in state.items():
        arrays |= {f"{key}.{name}": np.asarray(slot[key]) for key in (*ADAMW_SLOTS, "t")}
    np.savez(checkpoint_path(folder, step), **arrays)


def read_checkpoint(run: Run, step: int) -> tuple[dict, dict]:
    """(weights, optimizer state) before `step`, each array's name, dtype and shape checked."""
    shapes = param_shapes(run.cfg)
    with np.load(checkpoint_path(run.folder, step), allow_pickle=False) as npz:
        held = set(npz.files)
        params = {name: _read(npz, f"w.{name}", shapes[name], PARAM_DTYPE) for name in run.names}
        state = {}
        if step > 0:
            for name in run.names:
                slot = {key: _read(npz, f"{key}.{name}", shapes[name], PARAM_DTYPE) for key in ADAMW_SLOTS}
                state[name] = dict(slot, t=int(_read(npz, f"t.{name}", (), np.int64)))
        extra = held - {f"w.{n}" for n in run.names} - {f"{k}.{n}" for n in state for k in (*ADAMW_SLOTS, "t")}
    if extra:
        raise RunError(f"checkpoint {step}: unexpected arrays {sorted(extra)[:3]}")
    return params, state


def stream_row(rng: np.random.Generator) -> np.ndarray:
    """A PCG64 generator's state as 6 uint64 (its 128-bit state and increment in halves, the buffered
    32 bits): what the batch stream's generator holds before it draws a step's batch."""
    held = rng.bit_generator.state
    if held["bit_generator"] != "PCG64":
        raise RunError(f"the batch stream draws from {held['bit_generator']}, not PCG64")
    state, inc = held["state"]["state"], held["state"]["inc"]
    return np.array([state & _LOW, state >> 64, inc & _LOW, inc >> 64, held["has_uint32"], held["uinteger"]], np.uint64)


def stream_at(run: Run, step: int) -> np.random.Generator:
    """The batch stream's generator about to draw step's batch (run.log.stream[step])."""
    row = [int(v) for v in run.log.stream[step]]
    rng = np.random.default_rng()
    try:
        rng.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": row[0] | row[1] << 64, "inc": row[2] | row[3] << 64},
            "has_uint32": row[4],
            "uinteger": row[5],
        }
    except (ValueError, TypeError, OverflowError) as exc:
        raise RunError(f"stream[{step}]: not a PCG64 state ({exc})") from exc
    return rng


_LOW = (1 << 64) - 1


def _read(npz, key: str, shape, dtype) -> np.ndarray:
    if key not in npz.files:
        raise RunError(f"{key} is missing")
    a = npz[key]
    if a.shape != tuple(shape) or a.dtype != dtype:
        raise RunError(f"{key}: {a.dtype}{list(a.shape)}, expected {np.dtype(dtype)}{list(shape)}")
    return a


def write_run(run: Run, estimated: int) -> None:
    np.savez(Path(run.folder) / "steps.npz", **run.log.arrays())
    meta = {"format": FORMAT, "version": VERSION, **run.summary(), "estimated_bytes": estimated}
    text = json.dumps(meta, indent=1)
    if len(text) > META_BYTES:
        raise RunError(f"run.json would take {len(text)} bytes, over {META_BYTES}")
    (Path(run.folder) / "run.json").write_text(text)


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())


def read_run(folder) -> Run:
    """The run in `folder`: run.json and the folder's size against its plan's bound first (read_meta),
    then every array of steps.npz."""
    run = read_meta(folder)
    run.log = _read_log(run.folder, run.plan, run.cfg, len(run.names))
    return run


def read_meta(folder) -> Run:
    """The run in `folder` without its steps' arrays (run.log is None): run.json checked, and the
    folder's size against the plan's bound (RunTooLarge)."""
    folder = Path(folder)
    meta_path = folder / "run.json"
    if not meta_path.is_file() or meta_path.stat().st_size > META_BYTES:
        raise RunError(f"{folder.name}: no run.json (of at most {META_BYTES} bytes)")
    try:
        meta = json.loads(meta_path.read_text())
        if meta.get("format") != FORMAT or meta.get("version") not in READABLE:
            raise RunError(f"{folder.name}: not an {FORMAT} folder of version {' or '.join(map(str, READABLE))}")
        if meta["version"] == 1 and "attention_frames" in meta["plan"]:
            raise RunError(f"{folder.name}: a version 1 run keeps no attention frames")
        plan_fields = meta["plan"] if meta["version"] > 1 else {**meta["plan"], "attention_frames": 0}
        plan, cfg = RunPlan.from_dict(plan_fields), Config.from_dict(meta["config"])
        checkpoints = sorted(int(s) for s in meta["checkpoints"])
        dense, steepest, names = [int(s) for s in meta["dense"]], dict(meta["steepest"]), list(meta["params"])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RunError(f"{folder.name}: run.json: {exc}") from exc
    size = folder_bytes(folder)
    if size > plan.max_bytes:
        raise RunTooLarge(f"{folder.name}: {size:,} bytes on disk, over its limit max_bytes = {plan.max_bytes:,}")
    if cfg != plan.config() or names != list(param_shapes(cfg)):
        raise RunError(f"{folder.name}: the config or parameters differ from the plan's task model")
    if not checkpoints or checkpoints[0] != 0 or checkpoints[-1] >= plan.steps:
        raise RunError(f"{folder.name}: checkpoints must start at step 0 and lie before step {plan.steps}")
    return Run(folder, plan, cfg, names, checkpoints, dense, steepest, None)


def _read_log(folder: Path, plan: RunPlan, cfg: Config, n_params: int) -> StepLog:
    expected = StepLog.empty(plan.steps, n_params, cfg).arrays()
    with np.load(folder / "steps.npz", allow_pickle=False) as npz:
        if set(npz.files) != set(expected):
            raise RunError(f"{folder.name}: steps.npz holds {sorted(npz.files)}, expected {sorted(expected)}")
        return StepLog(**{k: _read(npz, k, e.shape, e.dtype) for k, e in expected.items()})
