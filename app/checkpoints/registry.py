# Over 350 lines: one registry's listing, upload staging and validation, and the caches they share.
"""Checkpoints the app can serve: the demo models shipped in xt_core/checkpoint/demos, the real
models `xt models fetch` stored in the models directory (known names only, app.checkpoints.
real_models), and the ones users uploaded (stored content-addressed, by sha256, under the
data directory).

A model's name is only ever matched against the listing, never joined into a path, so no
name can reach outside the two directories.

An upload is validated whole (the server's limits checked from its config before any tensor
is read: `limits=`) before it is stored; it is staged in a `.partial-*` directory inside the
models directory (never /tmp), written there, fsynced and renamed into place, so a reader never
sees half a file and a crash leaves only the staging directory, removed at the next start. The listing reads each file's
metadata strictly (xt_core.checkpoint.load_metadata): a file it cannot describe is skipped
and logged, never a 500.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import hashlib
import logging
import math
import os
import re
import secrets
import shutil
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from app.checkpoints import real_models, served
from app.checkpoints.real_models import ModelSummary
from app.settings import Settings
from app.words.said import Fixed, Grouped, Said, Short
from xt_core.checkpoint import Checkpoint, CheckpointError, load, load_metadata, save
from xt_core.checkpoint.formats import for_upload
from xt_core.config import Config
from xt_core.text.byte_char import CharTokenizer

log = logging.getLogger("xt.models")

# What a random-init spec may ask for (app.spec.resolve); a checkpoint must fit them too.
ROPE_THETA_RANGE = (1.0, 1e7)
NORM_EPS_RANGE = (1e-12, 1.0)
UPLOAD_NAME = re.compile(r"^sha256-[0-9a-f]{64}$")
SHIPPED_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,40}$")
# The longest model name a request may give (GET /api/tokenize's `model`): past every name the
# listing can hold (an upload's sha256-<64 hex digits> is 71 characters, a shipped one at most 41).
MAX_NAME_CHARS = 100
# Demo models first, in teaching order; other shipped checkpoints follow alphabetically.
DEMO_ORDER = ("induction", "text", "gpt2-text")
PARTIAL_PREFIX = ".partial-"  # .partial-<pid>-<random>/: the staging directory of an upload being checked
STALE_PARTIAL_S = 3600  # a staging directory without a lock file older than this is stale
STAGING_LOCK = ".lock"  # inside a staging directory: flock-ed by the process staging the upload
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


@dataclass(frozen=True)
class ModelInfo:
    """A listed model. Its origin is where it came from, as GET /api/models' `kind` says it: "demo"
    (shipped in xt_core/checkpoint/demos), "real" (fetched by `xt models fetch`), "served"
    (`xt serve --model`) or "upload"; its file_format how its file is read (a row of
    xt_core.checkpoint.formats: demos and uploads are "xt"; None: a served file xt cannot read)."""

    name: str
    path: Path
    origin: str
    file_format: str | None = "xt"

    @property
    def shipped(self) -> bool:
        return self.origin == "demo"

    @property
    def config(self) -> dict:
        return self.cfg.to_dict()


class ModelRegistry:
    def __init__(self, upload_dir: Path, shipped_dir: Path, model_paths: tuple = (), cache_bytes: int = 0):
        self.upload_dir = Path(upload_dir)
        self.shipped_dir = Path(shipped_dir)
        self.model_paths = model_paths  # settings.model_paths: `xt serve --model` (app.checkpoints.served)
        self.cache_bytes = cache_bytes
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ lookup

    def available(self) -> list[ModelInfo]:
        """Shipped models (demo models first), then fetched real models, then uploads, newest first."""
        shipped = []
        if self.shipped_dir.is_dir():
            shipped = [
                ModelInfo(p.stem, p, "demo")
                for p in self.shipped_dir.glob("*.safetensors")
                if SHIPPED_NAME.match(p.stem)
            ]
        rank = {name: i for i, name in enumerate(DEMO_ORDER)}
        shipped.sort(key=lambda m: (rank.get(m.name, len(rank)), m.name))
        fetched, uploads = [], []
        if self.upload_dir.is_dir():
            for name in sorted(real_models.KNOWN_MODELS):
                path = real_models.stored_path(self.upload_dir, name)
                if path is not None and path.is_file() and name not in {m.name for m in shipped}:
                    fetched.append(ModelInfo(name, path, "real", served.file_format_of(path)))
            uploads = [
                ModelInfo(p.stem, p, "upload")
                for p in self.upload_dir.glob("sha256-*.safetensors")
                if UPLOAD_NAME.match(p.stem)
            ]
            uploads.sort(key=lambda m: (-_mtime(m.path), m.name))
        taken = {m.name for m in shipped + fetched}
        named = [
            ModelInfo(f"{s.name}~served" if s.name in taken else s.name, s.path, "served", s.file_format)
            for s in served.served_paths(self.model_paths)
        ]
        return shipped + fetched + named + uploads

    def refused(self) -> list[dict]:
        """Served models (--model) that could not be opened, and why (the home page says it)."""
        return served.refusals(self.model_paths)

    def absent(self) -> list[dict]:
        """Known real models not fetched here, with how to get them (the home page says it)."""
        return real_models.absent(self.upload_dir)

    def info(self, name: str) -> ModelInfo | None:
        for info in self.available():
            if info.name == name:
                return info
        return None

    def names(self) -> list[str]:
        return [info.name for info in self.available()]

    def digest(self, info: ModelInfo) -> str:
        """sha256 of the stored file: part of a trace id, so a replaced checkpoint is a new trace."""
        if info.origin == "served":
            return served.digest(served.of(info))
        return _file_digest(info.path, _mtime(info.path))

    def summary(self, info: ModelInfo) -> ModelSummary:
        if info.origin == "served":
            return served.summary(served.of(info), self.cache_bytes)
        if info.origin == "real":
            return real_models.header(info.path, _mtime(info.path)).summary
        return _summary_cached(info.path, _mtime(info.path))

    def ready(self, info: ModelInfo) -> bool:
        """Whether its summary and tokenizer are already read, so asking for them takes
        milliseconds: a fetched real model's header takes about a second the first time (SmolLM2's
        49,152-token BPE), too long for the worker pool's one thread for quick jobs."""
        if info.origin == "served":
            return served.is_open(served.of(info))
        return info.origin != "real" or real_models.header_read(info.path, _mtime(info.path))

    def read_headers(self) -> None:
        """Reads every fetched real model's header now (a server's startup): its first read takes
        ~1.5 s (SmolLM2's BPE), and the spec of the first request naming it is resolved on the
        event loop, which stalled every other request that long (measured: /healthz 1.5 s)."""
        for info in self.available():
            if self.ready(info):
                continue
            try:
                self.summary(info)
            except Exception:  # noqa: BLE001 - a file that cannot be read is refused (422) when named, never at startup
                continue

    def tokenizer(self, info: ModelInfo):
        """The checkpoint's tokenizer object (None: token ids only), built once per file."""
        if info.origin == "served":
            return self.summary(info).tokenizer
        if info.origin == "real":
            return real_models.header(info.path, _mtime(info.path)).tokenizer
        return _tokenizer_cached(info.path, _mtime(info.path))

    # ------------------------------------------------------------------ listing

    def listing(self) -> list[dict]:
        """GET /api/models' `models`: every readable checkpoint (an unreadable file is skipped
        and logged, so one bad file cannot take the listing down)."""
        out = []
        for info in self.available():
            try:
                out.append(describe(info, self.summary(info)))
            except (CheckpointError, OSError) as exc:
                log.warning("skipping model %s: %s", info.path, exc)
            except Exception:  # a bug describing one file must not take the listing down
                log.exception("skipping model %s", info.path)
        return out

    # ------------------------------------------------------------------ uploads

    def store_upload(self, data: bytes, suffix: str, filename: str, settings: Settings) -> str:
        """Validates an uploaded checkpoint (a file format's `uploadable` row: xt .safetensors or
        .npz, llama2.c .bin or nanoGPT .pt, by its suffix) whole, stores
        it as sha256-<hex of the uploaded bytes>.safetensors and returns that name. Raises
        CheckpointError (the file is not a checkpoint xt can use, or passes this server's limits),
        UploadQuotaError (the uploads' quota or the disk is full: nothing stored)."""
        name = "sha256-" + hashlib.sha256(data).hexdigest()
        target = self.upload_dir / f"{name}.safetensors"
        limits = functools.partial(check_limits, settings=settings)
        if _valid_stored(target, limits):
            return name  # content-addressed: the same bytes were validated and stored before
        staging = self.upload_dir / f"{PARTIAL_PREFIX}{os.getpid()}-{secrets.token_hex(8)}"
        try:
            self.upload_dir.mkdir(parents=True, exist_ok=True)  # a full disk can refuse a folder too
            staging.mkdir()
            with _held(staging / STAGING_LOCK):
                self._stage_and_store(staging, data, suffix, filename, settings, target)
        except OSError as exc:
            if exc.errno in DISK_FULL:
                raise DiskFullError(
                    Said("error-upload-disk-full", folder=str(self.upload_dir), reason=os.strerror(exc.errno))
                ) from None
            raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return name

    def _stage_and_store(
        self, staging: Path, data: bytes, suffix: str, filename: str, settings: Settings, target: Path
    ) -> None:
        limits = functools.partial(check_limits, settings=settings)
        staged, normalized = staging / f"upload{suffix}", staging / "normalized.safetensors"
        _write_synced(staged, data)
        file_format = for_upload(suffix)
        if file_format is None:
            raise CheckpointError(f"{filename}: no file format xt uploads has the suffix {suffix!r}")
        ckpt = file_format.read(staged, limits)
        if file_format.imported:  # where it came from, by the name it was uploaded as (not the staged one)
            ckpt.meta = {**ckpt.meta, "imported_from": f"{file_format.maker} {filename}"}
        ckpt.meta = {**ckpt.meta, "uploaded_as": filename}
        save(normalized, ckpt)
        _fsync(normalized)
        with self._lock:
            if not _valid_stored(target, limits):  # a stored file that is not valid is replaced
                self._check_quota(normalized.stat().st_size, settings, replacing=target)
                # A rename within one filesystem is atomic: a reader never sees half a file.
                normalized.replace(target)
                _fsync_dir(self.upload_dir)

    def remove_stale_partials(self) -> list[Path]:
        """At startup: the staging directories of uploads cut short (a SIGKILL mid-upload). A
        staging directory's lock (STAGING_LOCK, held with flock while the upload is staged) is
        released by the kernel when its process dies, whatever process later gets its PID: a
        directory whose lock can be taken is stale; one without a lock file is stale when no
        process has its PID, or it is older than this process (made before this server started)
        or than an hour."""
        removed = []
        if not self.upload_dir.is_dir():
            return removed
        started = _process_start_time()
        for path in self.upload_dir.glob(f"{PARTIAL_PREFIX}*"):
            if _stale_staging(path, started):
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
                removed.append(path)
        if removed:
            log.info("removed %d stale partial upload(s) from %s", len(removed), self.upload_dir)
        return removed

    def _check_quota(self, new_bytes: int, settings: Settings, replacing: Path) -> None:
        """Uploads are kept (a teacher's model must not vanish mid-lesson), so their disk use is
        bounded by refusing new ones instead of deleting old ones."""
        stored = sum(p.stat().st_size for p in self.upload_dir.glob("sha256-*.safetensors") if p != replacing)
        if stored + new_bytes > settings.max_upload_store_bytes:
            mb = 1 << 20
            raise UploadQuotaError(
                Said(
                    "error-upload-quota", stored=Fixed(stored / mb, 1), size=Fixed(new_bytes / mb, 1),
                    limit=Fixed(settings.max_upload_store_bytes / mb, 0), folder=str(self.upload_dir),
                )
            )  # fmt: skip


class UploadQuotaError(Exception):
    """The uploads directory is full (507)."""


class DiskFullError(UploadQuotaError):
    """The disk under the uploads directory is full (507; the staged files are removed)."""


def check_limits(cfg: Config, settings: Settings) -> None:
    """An uploaded model must fit the limits a random-init spec has (it runs on this server).
    Called by the loaders (limits=) once the config is parsed, before any tensor is read."""
    limits = [
        ("n_layer", cfg.n_layer, settings.max_n_layer),
        ("n_head", cfg.n_head, settings.max_n_head),
        ("n_kv_head", cfg.n_kv_head, settings.max_n_head),
        ("n_embd", cfg.n_embd, settings.max_n_embd),
        ("head_dim", cfg.head_dim, settings.max_n_embd),  # as a spec's (app.spec.resolve)
        ("ffn_hidden", cfg.ffn_hidden, settings.max_ffn_hidden),
        ("vocab_size", cfg.vocab_size, settings.max_vocab_size),
        ("seq_len", cfg.seq_len, settings.max_seq_len),
    ]
    for field, value, limit in limits:
        if value > limit:
            raise CheckpointError(Said("error-model-over-limit", field=field, value=str(value), limit=str(limit)))
    for field, low, high in (("rope_theta", *ROPE_THETA_RANGE), ("norm_eps", *NORM_EPS_RANGE)):
        value = getattr(cfg, field)
        if not (math.isfinite(value) and low <= value <= high):
            raise CheckpointError(
                Said("error-model-outside-range", field=field, value=repr(value), low=Short(low), high=Short(high))
            )
    if cfg.n_params() > settings.max_params:
        raise CheckpointError(
            Said("error-model-params", params=Grouped(cfg.n_params()), most=Grouped(settings.max_params))
        )


def describe(info: ModelInfo, summary: ModelSummary) -> dict:
    """A listing entry. The summary was checked strictly: meta's fields have their types."""
    meta = summary.meta
    tokenizer = summary.tokenizer
    uploaded_as = meta.get("uploaded_as")
    label = info.name if info.origin != "upload" else f"{uploaded_as or 'upload'} ({info.name[:15]}…)"
    extras = real_models.listing_extras(info.name) if info.origin == "real" else {}  # default_lr, tokenizer_label
    return {
        "name": info.name,
        "label": label,
        "shipped": info.shipped,
        "config": summary.config,
        "n_params": summary.cfg.n_params(),
        "tokenizer": tokenizer.name if tokenizer is not None else None,
        "alphabet": "".join(tokenizer.chars) if isinstance(tokenizer, CharTokenizer) else None,
        "description": meta.get("description") or meta.get("imported_from") or "",
        "examples": list(meta.get("examples", [])),
        "final_loss": meta.get("final_loss"),
        "measured": measured(meta),
        "kind": info.origin,
        **extras,
    }


def measured(meta: dict) -> dict:
    """What `xt train` measured of a demo model on data it was not trained on: the induction head
    its probe found (xt_core.lab.probes) and its scores, or the held-out loss and a greedy sample."""
    keys = (
        "induction_layer",
        "induction_head",
        "induction_score",
        "heldout_loss",
        "train_loss",
        "sample",
        "sample_prompt",
    )
    return {k: meta[k] for k in keys if k in meta}


def model_settings(info: ModelInfo, settings: Settings) -> Settings:
    """The limits a spec naming this model is held to: a real or served model's own, else the server's."""
    if info.origin == "served":
        return served.settings_for(served.of(info), settings)
    return real_models.settings_for(info.name, settings) if info.origin == "real" else settings


def load_checkpoint(info: ModelInfo) -> Checkpoint:
    """The checkpoint's weights, cached while its file is unchanged, read-only: every trace of
    the model borrows these arrays (never copies them), and nothing may write into them."""
    if info.origin == "served":
        return served.checkpoint(served.of(info))
    if info.origin == "real":
        return real_models.load(info.path, _mtime(info.path))
    return _load_cached(info.path, _mtime(info.path))


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


@lru_cache(maxsize=8)
def _load_cached(path: Path, mtime_ns: int) -> Checkpoint:
    ckpt = load(path)
    for value in ckpt.params.values():
        value.flags.writeable = False
    return ckpt


@lru_cache(maxsize=64)
def _tokenizer_cached(path: Path, mtime_ns: int):
    return _summary_cached(path, mtime_ns).tokenizer


@lru_cache(maxsize=64)
def _file_digest(path: Path, mtime_ns: int) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@lru_cache(maxsize=256)
def _summary_cached(path: Path, mtime_ns: int) -> ModelSummary:
    cfg, tokenizer, meta = load_metadata(path)  # strict: CheckpointError for anything it cannot describe
    return ModelSummary(cfg, tokenizer, meta)


def _valid_stored(path: Path, limits) -> bool:
    """Whether a stored upload loads whole (a corrupt one is replaced by the next valid upload)."""
    if not path.exists():
        return False
    try:
        load(path, limits=limits)
    except (CheckpointError, OSError) as exc:
        log.warning("stored upload %s is not valid (%s): a valid upload of the same bytes replaces it", path.name, exc)
        return False
    return True


def _write_synced(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    """The rename itself reaches the disk (a crash after it keeps the new name)."""
    with contextlib.suppress(OSError):  # a filesystem that cannot fsync a directory
        _fsync(path)


@contextlib.contextmanager
def _held(lock_path: Path):
    """An exclusive flock on lock_path (created) for as long as the block runs."""
    fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _lock_is_free(lock_path: Path) -> bool:
    """Whether no live process holds lock_path's flock (then this one briefly takes it)."""
    fd = os.open(lock_path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def _stale_staging(path: Path, started: float) -> bool:
    """A free lock, or without one: its process gone, made before this process, or old. A live
    PID proves nothing (the killed upload's PID may be another process's now)."""
    try:
        if path.is_dir() and (path / STAGING_LOCK).exists():
            return _lock_is_free(path / STAGING_LOCK)
        mtime = path.stat().st_mtime
        pid = int(path.name[len(PARTIAL_PREFIX) :].split("-", 1)[0])
    except (OSError, ValueError):
        return False  # gone meanwhile, not ours to read, or not named by this server
    return not _pid_alive(pid) or mtime < started or time.time() - mtime > STALE_PARTIAL_S


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _process_start_time() -> float:
    """When this process started (wall clock, from /proc); now where /proc is absent."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        boot = next(
            float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime")
        )
    except (OSError, ValueError, IndexError, StopIteration):
        return time.time()
    return boot + ticks / os.sysconf("SC_CLK_TCK")


@lru_cache(maxsize=4)
def registry_for(upload_dir: Path, shipped_dir: Path, model_paths: tuple = (), cache_bytes: int = 0) -> ModelRegistry:
    return ModelRegistry(upload_dir, shipped_dir, model_paths, cache_bytes)


def registry(settings: Settings) -> ModelRegistry:
    """One registry per pair of directories (its lock serializes writes to the upload dir) and
    served models."""
    served_key = (settings.model_paths, settings.cache_bytes) if settings.model_paths else ((), 0)
    return registry_for(settings.models_dir, settings.shipped_models_dir, *served_key)


__all__ = ["CheckpointError", "ModelInfo", "ModelRegistry", "ModelSummary", "model_settings", "registry"]
