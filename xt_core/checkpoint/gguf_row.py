"""The GGUF row of the file format table (xt_core.checkpoint.formats): a `.gguf` file's
`general.architecture` picks its reader, GPT-2's (gguf_gpt2.py) or Llama's, Qwen2's and Qwen3's
(gguf_file.py), the header parsed once for both."""

from __future__ import annotations

from pathlib import Path

from xt_core.checkpoint import gguf_file, gguf_gpt2
from xt_core.checkpoint.common import CheckpointError, Header, Limits


def checkpoint_header(path, limits: Limits | None = None) -> Header | gguf_file.GGUFHeader:
    """The file's header, every check of its architecture's reader made, `limits(cfg)` among them."""
    path = Path(path)
    gguf_limits = gguf_file.GGUFLimits()
    try:
        reader = gguf_file.open_checked(path, gguf_limits)
        if gguf_file.architecture(reader.fields) == "gpt2":
            return gguf_gpt2.header(reader, gguf_limits, path.name, limits)
    except CheckpointError as exc:
        raise CheckpointError(f"{path.name}: {exc}") from None
    return gguf_file.read_gguf_header(path, check=limits, reader=reader)
