"""Models the person serving named on the command line: `xt serve --model PATH` (repeatable; a
file or directory in any format of xt_core.checkpoint.formats: a Hugging Face Llama or Qwen directory, a
llama, qwen2 or qwen3 `.gguf`, a llama2.c `.bin` or xt's own `.safetensors` / `.npz`), exported to
the app as XT_MODEL_PATHS (settings.model_paths).

Each is listed by its file name and opened like a demo model. A client names it by that name
only: the listing is the only place a name is matched, and only the paths of model_paths are
ever opened here, so no path a client sends can reach a file.

A served model is not held to the random-init limits (max_n_layer, max_vocab_size, ...): its
size is what the person serving chose. Its limits come from its size and the machine's memory:
its float32 weights must fit in what the machine has free when it is opened (checked from its
config, before any weight is read), and one of its traces may hold at most half of what is left
beside them (and never more than cache_bytes, the budget of every trace together). The importers'
refusals (a config key xt does not compute, a missing tensor, weights too large) are kept: the
terminal prints them at startup (`xt serve`) and the home page lists them.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from dataclasses import dataclass, replace
from pathlib import Path

from app.checkpoints.real_models import ModelSummary
from app.settings import Settings
from xt_core.checkpoint import Checkpoint, CheckpointError
from xt_core.checkpoint.formats import FILE_FORMATS, readable, recognise
from xt_core.config import Config

log = logging.getLogger("xt.models")

WEIGHTS_SHARE = 0.8  # of the memory free when a model is opened, at most this much for its weights
MB = 1 << 20


@dataclass(frozen=True)
class ServedPath:
    name: str  # the file's (or directory's) name: what a spec's `model` says
    path: Path
    file_format: str | None  # its row of xt_core.checkpoint.formats ("hf", "gguf", ...); None: refused when opened


@dataclass(frozen=True)
class Memory:
    total: int  # bytes of the machine's memory
    available: int  # ... free for a new allocation when it was read


@dataclass(frozen=True)
class Opened:
    """A served model opened (its weights read, float32, read-only), or why it could not be."""

    served: ServedPath
    checkpoint: Checkpoint | None
    refusal: str | None
    memory: Memory

    @property
    def weights_bytes(self) -> int:
        return sum(p.nbytes for p in self.checkpoint.params.values()) if self.checkpoint else 0

    def trace_limit(self, cache_bytes: int) -> int:
        """The most bytes one trace of this model may hold: half the memory left beside its
        weights, within cache_bytes (the budget of all traces together)."""
        left = max(0, self.memory.available - self.weights_bytes)
        return min(cache_bytes, left // 2)


def machine_memory() -> Memory:
    """The machine's memory and what is free of it (/proc/meminfo; sysconf where it is absent)."""
    try:
        fields = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines() if ":" in line)
        kb = {key: int(value.split()[0]) * 1024 for key, value in fields.items() if value.split()}
        return Memory(kb["MemTotal"], kb.get("MemAvailable", kb["MemTotal"]))
    except (OSError, KeyError, ValueError):
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        return Memory(pages * size, os.sysconf("SC_AVPHYS_PAGES") * size)


def file_format_of(path: Path) -> str | None:
    row = recognise(path)
    return row.name if row is not None else None


def served_paths(model_paths: tuple) -> list[ServedPath]:
    """settings.model_paths as listed: by file name, a repeated name tagged with its position."""
    out, seen = [], set()
    for i, raw in enumerate(model_paths):
        path = Path(raw).expanduser().resolve()
        name = path.name or str(path)
        if name in seen:
            name = f"{name}~{i + 1}"
        seen.add(name)
        out.append(ServedPath(name, path, file_format_of(path)))
    return out


def of(info) -> ServedPath:
    """The served path of a listing entry (app.checkpoints.registry.ModelInfo of origin "served")."""
    return ServedPath(info.name, info.path, info.file_format)


def signature(path: Path) -> tuple:
    """What changes when the model's files change: each file's name, size and mtime."""
    try:
        files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    except OSError:
        return ()
    stats = []
    for p in files:
        try:
            st = p.stat()
        except OSError:
            continue
        stats.append((p.name, st.st_size, st.st_mtime_ns))
    return tuple(stats)


def digest(served: ServedPath) -> str:
    """Part of a trace id: a changed file is a new trace (from its stat, not its bytes: a served
    model may be gigabytes)."""
    return hashlib.sha256(repr((str(served.path), signature(served.path))).encode()).hexdigest()


_OPENED: dict[tuple, Opened] = {}
_opening = threading.Lock()  # one model read at a time: two requests never read the same gigabytes twice


def opened(served: ServedPath) -> Opened:
    """The served model, read once while its files are unchanged (the weights float32 and
    read-only: every trace borrows them), or its refusal."""
    key = (served.path, signature(served.path))
    with _opening:
        hit = _OPENED.get(key)
        if hit is None:
            for old in [k for k in _OPENED if k[0] == served.path]:
                del _OPENED[old]  # a replaced file: its old weights go
            hit = _OPENED[key] = _open(served)
    return hit


def is_open(served: ServedPath) -> bool:
    """Whether opened(served) answers at once (read already, its files unchanged)."""
    return (served.path, signature(served.path)) in _OPENED


def checkpoint(served: ServedPath) -> Checkpoint:
    """The weights every trace of the model borrows; CheckpointError when it cannot be opened."""
    got = opened(served)
    if got.checkpoint is None:
        raise CheckpointError(got.refusal)
    return got.checkpoint


def _open(served: ServedPath) -> Opened:
    memory = machine_memory()

    def fits(cfg: Config) -> None:  # the loaders call it once the config is parsed, before any weight
        needed = cfg.n_params() * 4
        if needed > WEIGHTS_SHARE * memory.available:
            raise CheckpointError(
                f"its {cfg.n_params():,} parameters take {needed / MB:,.0f} MB as float32, more than "
                f"{WEIGHTS_SHARE:.0%} of the {memory.available / MB:,.0f} MB this machine has free"
            )

    try:
        ckpt = _read(served, fits)
    except (CheckpointError, OSError, ValueError) as exc:
        log.info("cannot serve %s: %s", served.path, exc)  # `xt serve` prints it; the home page lists it
        return Opened(served, None, str(exc), memory)
    for value in ckpt.params.values():
        value.flags.writeable = False
    return Opened(served, ckpt, None, memory)


def _read(served: ServedPath, fits) -> Checkpoint:
    path = served.path
    if not path.exists():
        raise CheckpointError(f"{path}: no such file or directory")
    row = FILE_FORMATS.get(served.file_format)
    if row is None:
        raise CheckpointError(f"{path.name}: not a model file xt reads ({readable()})")
    return row.read(path, fits)


def summary(served: ServedPath, cache_bytes: int) -> ModelSummary:
    """What the listing shows; CheckpointError for a model that could not be opened."""
    got = opened(served)
    ckpt = checkpoint(served)
    return ModelSummary(ckpt.cfg, ckpt.tokenizer, {**ckpt.meta, "description": _description(got, cache_bytes)})


def _description(got: Opened, cache_bytes: int) -> str:
    """The model's limits in words, on the home page: where it is served from, its weights, the
    machine's memory and what a trace may hold."""
    served, memory = got.served, got.memory
    gb = 1 << 30
    return (
        f"served from {served.path} ({_label(served)}): {got.checkpoint.cfg.n_params():,} parameters, "
        f"{got.weights_bytes / MB:,.1f} MB of float32 weights; this machine had {memory.available / gb:.1f} of "
        f"{memory.total / gb:.1f} GB free, so one trace may hold up to {got.trace_limit(cache_bytes) / MB:,.0f} MB"
    )


def _label(served: ServedPath) -> str:
    row = FILE_FORMATS.get(served.file_format)  # its row, unless unregistered since it was opened
    return row.label if row is not None else str(served.file_format)


def settings_for(served: ServedPath, settings: Settings) -> Settings:
    """The limits a spec naming this model is held to: its trace within trace_limit."""
    got = opened(served)
    limit = got.trace_limit(settings.cache_bytes) if got.checkpoint is not None else 0
    return replace(settings, max_trace_bytes=limit)


def refusals(model_paths: tuple) -> list[dict]:
    """The served models that could not be opened, and why (the home page lists them)."""
    out = []
    for served in served_paths(model_paths):
        got = opened(served)
        if got.refusal is not None:
            out.append({"name": served.name, "path": str(served.path), "reason": got.refusal})
    return out


def open_all(settings: Settings) -> list[str]:
    """`xt serve` at startup: every served model opened, one line each for the terminal."""
    lines = []
    for served in served_paths(settings.model_paths):
        got = opened(served)
        if got.refusal is not None:
            lines.append(f"xt: --model {served.path}: cannot serve it: {got.refusal}")
            continue
        lines.append(f"xt: serving {served.name!r}, {_description(got, settings.cache_bytes)}")
    return lines


def announce(paths: list[str]) -> None:
    """`xt serve --model PATH ...`: the paths exported to the app (XT_MODEL_PATHS, which the app in
    this process reads) and every model opened now, its limits (or why not) in the terminal."""
    import sys

    os.environ["XT_MODEL_PATHS"] = os.pathsep.join(str(Path(p).expanduser().resolve()) for p in paths)
    for line in open_all(Settings.from_env()):
        print(line, file=sys.stderr if "cannot serve" in line else sys.stdout)
