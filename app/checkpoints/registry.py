"""Checkpoints the app can serve: the demo models shipped in xt_core/checkpoints, the real
models `xt models fetch` stored in the models directory (known names only, app.checkpoints.
real_models), and the ones users uploaded (stored content-addressed, by sha256, under the
data directory).

A model's name is only ever matched against the listing, never joined into a path, so no
name can reach outside the two directories.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import tempfile
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from app.checkpoints import real_models
from app.checkpoints.real_models import ModelSummary
from app.settings import Settings
from xt_core.checkpoint import Checkpoint, CheckpointError, import_llama2c, load, save, tokenizer_from_dict
from xt_core.config import Config

log = logging.getLogger("xt.models")

UPLOAD_NAME = re.compile(r"^sha256-[0-9a-f]{64}$")
SHIPPED_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,40}$")
# Demo models first, in teaching order; other shipped checkpoints follow alphabetically.
DEMO_ORDER = ("induction", "text")
UPLOAD_SUFFIXES = (".safetensors", ".npz", ".bin")


@dataclass(frozen=True)
class ModelInfo:
    name: str
    path: Path
    shipped: bool
    format: str = "xt"  # "xt": an xt checkpoint (.safetensors); "gguf": a fetched real model


class ModelRegistry:
    def __init__(self, upload_dir: Path, shipped_dir: Path):
        self.upload_dir = Path(upload_dir)
        self.shipped_dir = Path(shipped_dir)
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ lookup

    def available(self) -> list[ModelInfo]:
        """Shipped models (demo models first), then fetched real models, then uploads, newest first."""
        shipped = []
        if self.shipped_dir.is_dir():
            shipped = [
                ModelInfo(p.stem, p, True) for p in self.shipped_dir.glob("*.safetensors") if SHIPPED_NAME.match(p.stem)
            ]
        rank = {name: i for i, name in enumerate(DEMO_ORDER)}
        shipped.sort(key=lambda m: (rank.get(m.name, len(rank)), m.name))
        fetched, uploads = [], []
        if self.upload_dir.is_dir():
            for name in sorted(real_models.KNOWN_MODELS):
                path = real_models.stored_path(self.upload_dir, name)
                if path is not None and path.is_file() and name not in {m.name for m in shipped}:
                    fetched.append(ModelInfo(name, path, False, "gguf"))
            uploads = [
                ModelInfo(p.stem, p, False)
                for p in self.upload_dir.glob("sha256-*.safetensors")
                if UPLOAD_NAME.match(p.stem)
            ]
            uploads.sort(key=lambda m: (-_mtime(m.path), m.name))
        return shipped + fetched + uploads

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
        return _file_digest(info.path, _mtime(info.path))

    def summary(self, info: ModelInfo) -> ModelSummary:
        if info.format == "gguf":
            return real_models.header(info.path, _mtime(info.path)).summary
        return _summary_cached(info.path, _mtime(info.path))

    def tokenizer(self, info: ModelInfo):
        """The checkpoint's tokenizer object (None: token ids only), built once per file."""
        if info.format == "gguf":
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
            except CheckpointError as exc:
                log.warning("skipping model %s: %s", info.path, exc)
        return out

    # ------------------------------------------------------------------ uploads

    def store_upload(self, data: bytes, suffix: str, filename: str, settings: Settings) -> str:
        """Validates an uploaded checkpoint (xt .safetensors or .npz, or llama2.c .bin), stores
        it as sha256-<hex of the uploaded bytes>.safetensors and returns that name. Raises
        CheckpointError (the file is not a checkpoint xt can use)."""
        name = "sha256-" + hashlib.sha256(data).hexdigest()
        target = self.upload_dir / f"{name}.safetensors"
        if target.exists():
            return name  # content-addressed: the same bytes were validated and stored before
        with tempfile.TemporaryDirectory() as tmp:
            staged = Path(tmp) / f"upload{suffix}"
            staged.write_bytes(data)
            ckpt = import_llama2c(staged) if suffix == ".bin" else load(staged)
            check_limits(ckpt.cfg, settings)
            ckpt.meta = {**ckpt.meta, "uploaded_as": filename}
            normalized = Path(tmp) / "normalized.safetensors"
            save(normalized, ckpt)
            self.upload_dir.mkdir(parents=True, exist_ok=True)
            with self._lock:
                if not target.exists():
                    self._check_quota(normalized.stat().st_size, settings)
                    # A rename within one filesystem is atomic: a reader never sees half a file.
                    staged_target = self.upload_dir / f".{name}.partial"
                    staged_target.write_bytes(normalized.read_bytes())
                    staged_target.replace(target)
        return name

    def _check_quota(self, new_bytes: int, settings: Settings) -> None:
        """Uploads are kept (a teacher's model must not vanish mid-lesson), so their disk use is
        bounded by refusing new ones instead of deleting old ones."""
        stored = sum(p.stat().st_size for p in self.upload_dir.glob("sha256-*.safetensors"))
        if stored + new_bytes > settings.max_upload_store_bytes:
            mb = 1 << 20
            raise UploadQuotaError(
                f"this server already stores {stored / mb:.1f} MB of uploaded models; this one ({new_bytes / mb:.1f} "
                f"MB) would pass the limit of {settings.max_upload_store_bytes / mb:.0f} MB (max_upload_store_bytes). "
                f"Whoever runs the server can remove old uploads from {self.upload_dir}."
            )


class UploadQuotaError(Exception):
    """The uploads directory is full (507)."""


def check_limits(cfg: Config, settings: Settings) -> None:
    """An uploaded model must fit the limits a random-init spec has (it runs on this server)."""
    limits = [
        ("n_layer", cfg.n_layer, settings.max_n_layer),
        ("n_head", cfg.n_head, settings.max_n_head),
        ("n_embd", cfg.n_embd, settings.max_n_embd),
        ("ffn_hidden", cfg.ffn_hidden, settings.max_ffn_hidden),
        ("vocab_size", cfg.vocab_size, settings.max_vocab_size),
    ]
    for field, value, limit in limits:
        if value > limit:
            raise CheckpointError(f"the model's {field} = {value} is more than this server's limit of {limit}")
    if cfg.n_params() > settings.max_params:
        raise CheckpointError(
            f"the model has {cfg.n_params():,} parameters, more than this server's limit of {settings.max_params:,}"
        )


def describe(info: ModelInfo, summary: ModelSummary) -> dict:
    meta = summary.meta
    tokenizer = summary.tokenizer or {}
    uploaded_as = meta.get("uploaded_as")
    label = info.name if info.shipped or info.format == "gguf" else f"{uploaded_as or 'upload'} ({info.name[:15]}…)"
    examples = [e for e in meta.get("examples", []) if isinstance(e, str)]
    return {
        "name": info.name,
        "label": label,
        "shipped": info.shipped,
        "config": summary.config,
        "n_params": Config.from_dict(summary.config).n_params(),
        "tokenizer": tokenizer.get("name"),
        "alphabet": tokenizer.get("chars"),
        "description": meta.get("description") or meta.get("imported_from") or "",
        "examples": examples,
        "final_loss": meta.get("final_loss"),
        "kind": "demo" if info.shipped else "real" if info.format == "gguf" else "upload",
    }


def model_settings(info: ModelInfo, settings: Settings) -> Settings:
    """The limits a spec naming this model is held to: a real model's own, else the server's."""
    return real_models.settings_for(info.name, settings) if info.format == "gguf" else settings


def load_checkpoint(info: ModelInfo) -> Checkpoint:
    """The checkpoint's weights, cached while its file is unchanged, read-only: every trace of
    the model borrows these arrays (never copies them), and nothing may write into them."""
    if info.format == "gguf":
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
    return tokenizer_from_dict(_summary_cached(path, mtime_ns).tokenizer, path.name)


@lru_cache(maxsize=64)
def _file_digest(path: Path, mtime_ns: int) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@lru_cache(maxsize=256)
def _summary_cached(path: Path, mtime_ns: int) -> ModelSummary:
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), framework="numpy") as f:
            meta = f.metadata() or {}
        config = json.loads(meta["config"])
        tokenizer = json.loads(meta.get("tokenizer", "null"))
        extra = json.loads(meta.get("meta", "{}"))
        Config.from_dict(config)
    except (SafetensorError, OSError, KeyError, ValueError, TypeError) as exc:
        raise CheckpointError(f"{path.name}: unreadable metadata ({exc})") from None
    return ModelSummary(
        config, tokenizer if isinstance(tokenizer, dict) else None, extra if isinstance(extra, dict) else {}
    )


@lru_cache(maxsize=4)
def registry_for(upload_dir: Path, shipped_dir: Path) -> ModelRegistry:
    return ModelRegistry(upload_dir, shipped_dir)


def registry(settings: Settings) -> ModelRegistry:
    """One registry per pair of directories (its lock serializes writes to the upload dir)."""
    return registry_for(settings.models_dir, settings.shipped_models_dir)


__all__ = ["CheckpointError", "ModelInfo", "ModelRegistry", "ModelSummary", "model_settings", "registry"]
