"""Checkpoint file formats in one table: each row says how a file is recognised (its suffix, its
first bytes, or a directory), how it is read (`read_header`: the config, tokenizer and meta, every
check made and the caller's limits applied before a tensor is read; then its checkpoint(), the
tensors under xt's parameter names) and what it refuses (`refuses`: feature -> why, the words
its reader's refusals use).

Everything that opens a model file reads this table: `xt serve --model PATH`
(app.checkpoints.served), uploads (app.checkpoints.registry, upload.py: the rows marked
`uploadable`) and the real models `xt models fetch` stores (app.checkpoints.real_models). xt's
own rows are added by `register`, the seam a format from elsewhere (a plugin, a test) uses too:

    register(FileFormat("tiny", "tiny file", "tiny", read_header, suffixes=(".tiny",)))

Each reader's config step is one function returning xt's Config (what a model family's fields
are read by): xt's `metadata.parse_metadata`, `llama2c.config_from_header`, `hf.read_config`
(key by key: `hf_config.config_fields`) and `gguf_file.config_from_metadata` (a gpt2 GGUF's:
`gguf_gpt2.config_from_gpt2`).

A file *format* is how the bytes are laid out; where a model came from (a demo, an upload, the
zoo, a served path) is its *origin* (app.checkpoints.registry.ModelInfo.origin).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from xt_core.checkpoint import gguf_file, gguf_row, hf_config, hf_directory, llama2c, nanogpt, native
from xt_core.checkpoint.common import Checkpoint, Header, Limits

MAGIC_BYTES = 8  # the most of a file's first bytes a row's `magic` may be


@dataclass(frozen=True)
class FileFormat:
    name: str  # what code calls it (ServedPath.file_format): "xt", "llama2c", "hf", "gguf"
    label: str  # in a sentence: "served from PATH (GGUF)"
    maker: str  # whose format it is, as the upload help names it: "an xt .safetensors, or a llama2.c .bin"
    read_header: Callable[[Path, Limits | None], Header]  # a GGUF's: gguf_file.GGUFHeader, alike
    suffixes: tuple[str, ...] = ()  # recognised by its name's suffix (lower case) ...
    magic: bytes = b""  # ... or by its first bytes ...
    directory: bool = False  # ... or as a directory (its layout is checked when it is read)
    refuses: Mapping[str, str] = field(default_factory=dict)  # a feature of such files -> why xt refuses it
    uploadable: bool = False  # one small self-contained file: POST /api/models takes it
    imported: bool = True  # not xt's own: an upload's meta says where it came from (imported_from)

    def read(self, path, limits: Limits | None = None) -> Checkpoint:
        """The whole checkpoint; `limits(cfg)` runs before any tensor is read."""
        return self.read_header(Path(path), limits).checkpoint()


FILE_FORMATS: dict[str, FileFormat] = {}  # by name, in the order they were registered


def register(file_format: FileFormat) -> FileFormat:
    """Adds a row: a name or suffix another row has is refused (a file is one format)."""
    if file_format.name in FILE_FORMATS:
        raise ValueError(f"a file format named {file_format.name!r} is registered already")
    if len(file_format.magic) > MAGIC_BYTES:
        raise ValueError(f"{file_format.name}: magic of {len(file_format.magic)} bytes, more than {MAGIC_BYTES}")
    if any(not suffix.startswith(".") or suffix != suffix.lower() for suffix in file_format.suffixes):
        raise ValueError(f"{file_format.name}: suffixes are lower case and start with a dot: {file_format.suffixes}")
    for row in FILE_FORMATS.values():
        taken = set(row.suffixes) & set(file_format.suffixes)
        shorter, longer = sorted((row.magic, file_format.magic), key=len)
        magic = bool(shorter) and longer.startswith(shorter)
        if taken or (row.directory and file_format.directory) or magic:
            what = ", ".join(taken) or ("a directory" if file_format.directory else f"magic {file_format.magic!r}")
            raise ValueError(f"{file_format.name}: {what} is {row.name}'s already")
    FILE_FORMATS[file_format.name] = file_format
    return file_format


def unregister(name: str) -> None:
    FILE_FORMATS.pop(name, None)


@contextmanager
def registered(file_format: FileFormat) -> Iterator[FileFormat]:
    """A row for as long as the block runs (a test's format)."""
    register(file_format)
    try:
        yield file_format
    finally:
        unregister(file_format.name)


def recognise(path) -> FileFormat | None:
    """The row `path` is in: a directory's, else its suffix's, else its first bytes' (a file is
    only opened when its name says nothing); None: no format xt reads."""
    path = Path(path)
    rows = FILE_FORMATS.values()
    if path.is_dir():
        return next((row for row in rows if row.directory), None)
    suffix = path.suffix.lower()
    named = next((row for row in rows if suffix and suffix in row.suffixes), None)
    if named is not None:
        return named
    try:
        with open(path, "rb") as f:
            head = f.read(MAGIC_BYTES)
    except OSError:
        return None
    return next((row for row in rows if row.magic and head.startswith(row.magic)), None)


def readable() -> str:
    """The formats in words: "a Hugging Face Llama directory, .safetensors (xt), ..." (a refusal's)."""
    rows = FILE_FORMATS.values()
    return ", ".join(
        [f"a {row.label}" for row in rows if row.directory]
        + [f"{suffix} ({row.maker})" for row in rows for suffix in row.suffixes]
    )


def uploadable() -> dict[str, tuple[str, ...]]:
    """The files an upload may be, by whose format they are: {"xt": (".safetensors", ".npz"), ...}."""
    return {row.maker: row.suffixes for row in FILE_FORMATS.values() if row.uploadable}


def for_upload(suffix: str) -> FileFormat | None:
    """The uploadable row a file name's suffix names."""
    return next((row for row in FILE_FORMATS.values() if row.uploadable and suffix.lower() in row.suffixes), None)


# xt's own rows, in the order an upload's help names them: adding a format is one more row here
XT_FORMATS = (
    FileFormat(
        "xt", "xt checkpoint", "xt", native.checkpoint_header, (".safetensors", ".npz"), uploadable=True, imported=False
    ),
    FileFormat("llama2c", "llama2.c", "llama2.c", llama2c.checkpoint_header, (".bin",), uploadable=True),
    FileFormat(
        "hf",
        "Hugging Face Llama, Qwen or GPT-2 directory",
        "Hugging Face",
        hf_directory.checkpoint_header,
        directory=True,
        refuses=hf_config.REFUSED,
    ),
    FileFormat("gguf", "GGUF", "llama.cpp", gguf_row.checkpoint_header, (".gguf",), b"GGUF", refuses=gguf_file.REFUSED),
)
# nanoGPT's ckpt.pt (torch.save's zip, read without torch or running pickled code) and its meta.pkl;
# uploadable: one file (an upload has no meta.pkl beside it: its model takes token ids)
XT_FORMATS += (
    FileFormat(
        "nanogpt",
        "nanoGPT ckpt.pt",
        "nanoGPT",
        nanogpt.checkpoint_header,
        (".pt",),
        refuses=nanogpt.REFUSED,
        uploadable=True,
    ),
)
for _row in XT_FORMATS:
    register(_row)
