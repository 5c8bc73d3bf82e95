"""Real models the app serves from the .gguf `xt models fetch` stored (xt_core.checkpoint.zoo): what the
listing says of them, read from the file's header alone; their weights, imported once per
process and shared read-only by every trace; and the limits a spec naming one is held to.

A real model is far beyond the limits of a random-init spec (SmolLM2-135M: 30 layers, a
vocabulary of 49,152): its specs get its own limits instead (KNOWN_MODELS), the server's
other limits still apply. Only known names are served: an unknown .gguf has no limits here.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from app import words
from app.checkpoints import model_words
from app.settings import Settings
from app.words.said import Grouped, Said
from xt_core.checkpoint import Checkpoint, CheckpointError
from xt_core.checkpoint.formats import recognise
from xt_core.checkpoint.zoo import ZOO
from xt_core.config import Config

log = logging.getLogger("xt.models")


@dataclass(frozen=True)
class ModelSummary:
    """What the listing shows of a checkpoint, read from its metadata alone (no arrays) and
    checked strictly (xt_core.checkpoint.metadata): every field may be shown as it is."""

    cfg: Config
    tokenizer: object | None  # a tokenizer (char, byte or bpe); None: imported weights, token ids only
    meta: dict

    @property
    def config(self) -> dict:
        return self.cfg.to_dict()


@dataclass(frozen=True)
class KnownModel:
    max_params: int  # refused before any weight is read: the file must be the model its name says
    limits: dict  # Settings fields a spec naming this model is held to instead of the server's
    default_lr: dict  # optimizer name -> the learning rate a spec naming this model gets by default
    # Its example texts (the home form's) and its tokenizer's name (the Tokenizer select's) are
    # words: app/words/locales/*/models.ftl, by the model's name (app/checkpoints/model_words.py).

    @property
    def examples(self) -> tuple[str, ...]:
        """The texts the home form offers, in English (model_words.examples: in any language)."""
        return tuple(model_words.examples(self.name, words.DEFAULT))

    name: str = ""


# SmolLM2-135M: a float32 trace keeps its layer boundaries (xt_core.recompute): 13 MB at 32
# positions, 105 MB at 256 (its 538 MB of weights are the loaded checkpoint's, shared, not counted);
# its build holds every forward value at once, ~4.3 MB a position (xt_core.names.estimate_build_bytes):
# one sequence, and builds up to 1.5 GB, so float32 texts up to 293 positions, float64 up to 55,
# and SGD (without momentum) training steps first up to ~80 positions (app.spec.cost.build_cost).
KNOWN_MODELS = {
    "smollm2-135m": KnownModel(
        name="smollm2-135m",
        max_params=140_000_000,
        limits={"max_n_seq": 1, "max_trace_bytes": 1_500_000_000},
        # The small demo models' defaults wreck a pretrained model. One step from the pretrained
        # weights (float32), loss before -> after, on the two examples above (1.70, 5.92) and the
        # home page's generic ones, "the cat sat…" (3.69), "To be, or not…" (2.99), "héllo wörld…" (5.53):
        #   AdamW 3e-3: 5.57, 8.65   1e-4: 1.34, 3.28   1e-5: 1.42, 5.23
        #         3e-5: 1.14, 4.33, 2.51, 1.65, 4.27
        #   SGD   0.1: 5.82, 11.73   0.01: 0.44, 2.68, 2.82, 6.13 (up), 2.46
        #         0.003: 1.07, 3.63, 2.11, 2.75, 3.89   0.001: 2.72, 2.93, 4.81 (the last three)
        # AdamW 3e-5 and SGD 0.003 lower the loss on every one of them.
        default_lr={"adamw": 3e-5, "sgd": 0.003},
    ),
}


def stored_path(models_dir: Path, name: str) -> Path | None:
    """Where `xt models fetch <name>` stores a known model, or None for an unknown name."""
    return Path(models_dir) / ZOO[name].filename if name in KNOWN_MODELS and name in ZOO else None


def settings_for(name: str, settings: Settings) -> Settings:
    """The limits a spec naming real model `name` is held to."""
    known = KNOWN_MODELS.get(name)
    return replace(settings, **known.limits) if known is not None else settings


def default_lr(name: str) -> dict[str, float]:
    """A real model's own default learning rates by optimizer ({} for any other model)."""
    known = KNOWN_MODELS.get(name)
    return dict(known.default_lr) if known is not None else {}


def listing_extras(name: str) -> dict:
    """What GET /api/models adds to a real model's entry: its default learning rates and the
    name of its tokenizer as the home form shows it."""
    known = KNOWN_MODELS[name]
    return {"default_lr": dict(known.default_lr), "tokenizer_label": model_words.tokenizer_label(name, words.DEFAULT)}


def absent(models_dir: Path) -> list[dict]:
    """Known real models not fetched into `models_dir`, with how to get them (the home page says it)."""
    out = []
    for name in sorted(KNOWN_MODELS):
        path = stored_path(models_dir, name)
        if path is not None and not path.is_file():
            model = ZOO[name]
            out.append(
                {
                    "name": name,
                    "description": model.description,
                    "size_mb": round(model.size / 1e6),
                    "command": words.t(words.DEFAULT, "model-fetch-command", model=name),
                }
            )
    return out


@dataclass(frozen=True)
class Header:
    summary: ModelSummary
    tokenizer: object  # xt_core.text.bpe.BPETokenizer, or None: token ids only
    read: object  # the file format's header (xt_core.checkpoint.formats): load() reads the weights through it


# Headers read, by (path, mtime): an LRU of a few (one per known model, and a replaced file's),
# kept here rather than by lru_cache so that header_read can ask whether one is there.
_HEADERS: OrderedDict[tuple[Path, int], Header] = OrderedDict()
_HEADERS_KEPT = 4
_headers_lock = threading.Lock()


def header(path: Path, mtime_ns: int) -> Header:
    """A fetched model's config and tokenizer from its header (about a second; no weight is read),
    read once while the file is unchanged."""
    key = (path, mtime_ns)
    with _headers_lock:
        if key in _HEADERS:
            _HEADERS.move_to_end(key)
            return _HEADERS[key]
    read = _read_header(path)  # outside the lock: two first readers may both read it, harmlessly
    with _headers_lock:
        _HEADERS[key] = read
        while len(_HEADERS) > _HEADERS_KEPT:
            _HEADERS.popitem(last=False)
    return read


def header_read(path: Path, mtime_ns: int) -> bool:
    """Whether header(path, mtime_ns) is already read (answers at once)."""
    return (path, mtime_ns) in _HEADERS


def _read_header(path: Path) -> Header:
    name = path.stem
    most = KNOWN_MODELS[name].max_params

    def within(cfg: Config) -> None:  # the file must be the model its name says
        if cfg.n_params() > most:
            raise CheckpointError(Said("error-real-model-params", params=Grouped(cfg.n_params()), most=Grouped(most)))

    file_format = recognise(path)  # the file `xt models fetch` stored (a .gguf)
    if file_format is None:
        raise CheckpointError(Said("error-real-model-unknown-file", file=path.name))
    read = file_format.read_header(path, within)
    shown = {"description": ZOO[name].description, "examples": list(KNOWN_MODELS[name].examples)}
    return Header(ModelSummary(read.cfg, read.tokenizer, shown), read.tokenizer, read)


@lru_cache(maxsize=1)  # ~0.5 GB of float32 weights: one real model at a time
def load(path: Path, mtime_ns: int) -> Checkpoint:
    """The model's weights as float32, read-only: every trace borrows them, none copies them. The
    header (parsed and checked once, for the listing) says where they lie, so the file is parsed
    once per process; it stays mapped (its ~100 MB of pages are the kernel's to drop)."""
    log.info("importing %s (seconds, once per process)", path.name)
    ckpt = header(path, mtime_ns).read.checkpoint()
    for value in ckpt.params.values():
        value.flags.writeable = False
    return ckpt
