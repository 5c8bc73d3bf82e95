"""The Hugging Face row of the table of file formats (formats.py): a directory, read by the reader
of its config.json's `model_type` (MODEL_TYPES; any other type goes to the Llama reader, hf.py,
whose config step names what it refuses). A model type xt reads is one row here."""

from __future__ import annotations

from pathlib import Path

from xt_core.checkpoint import gpt2_files, hf
from xt_core.checkpoint.common import Header, Limits

MODEL_TYPES = {  # config.json model_type -> the reader of such a directory
    "gpt2": gpt2_files.hf_gpt2_header,
}


def model_type(directory: Path) -> object:
    """config.json's model_type (None when it names none; an unreadable config.json is left to the reader)."""
    path = Path(directory) / "config.json"
    if not path.is_file():
        return None
    data = hf.read_json(path, Path(directory).name)
    return data.get("model_type") if isinstance(data, dict) else None


def checkpoint_header(directory, limits: Limits | None = None) -> Header:
    kind = model_type(Path(directory))
    reader = MODEL_TYPES.get(kind, hf.checkpoint_header) if isinstance(kind, str) else hf.checkpoint_header
    return reader(directory, limits)
