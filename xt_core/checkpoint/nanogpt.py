"""nanoGPT's checkpoints (github.com/karpathy/nanoGPT): the ckpt.pt its train.py writes and the
char-level meta.pkl its prepare.py writes, both read without torch and without running pickled
code (torch_file.py: a reader that resolves tensors and plain containers only).

ckpt.pt is torch.save of {"model": the state dict, "model_args": {n_layer, n_head, n_embd,
block_size, bias, vocab_size, dropout}, "optimizer", "iter_num", "best_val_loss", "config"}; only
"model_args" and the model's tensors are read. nanoGPT's GPT is GPT-2's (its modules carry GPT-2's
names: gpt2_files.py) with exact GELU (`nn.GELU()`: activation "gelu"), LayerNorm eps 1e-5, a
(out, in) nn.Linear in every layer (transposed here to xt's (in, out)), biases everywhere or
nowhere as `bias` says, and the LM head tied to the token embedding (one storage for both
tensors). A model saved from `torch.compile` has every name prefixed `_orig_mod.`; dropout is
read and not applied (the deterministic step, as `model.eval()`).

meta.pkl ({"vocab_size", "stoi", "itos"}: the sorted characters of the training text) is read
beside ckpt.pt, when there, as the model's character tokenizer. nanoGPT keeps it in
data/<dataset>/; copy it next to ckpt.pt.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from xt_core.checkpoint.common import (
    Checkpoint,
    CheckpointError,
    Header,
    Limits,
    check_finite,
    check_names,
    config_from_fields,
    short,
)
from xt_core.checkpoint.gpt2_files import BUFFERS, stored_shape, tensor_names, to_params
from xt_core.checkpoint.torch_file import StoredTensor, TorchFile, plain_pickle
from xt_core.config import Config
from xt_core.text.byte_char import CharTokenizer

COMPILED_PREFIX = "_orig_mod."  # torch.compile's wrapper, in every name of a compiled model's state dict
REQUIRED = ("n_layer", "n_head", "n_embd", "block_size", "vocab_size")
MODEL_ARGS = {*REQUIRED, "bias", "dropout"}
MAX_META_BYTES = 4 << 20
REFUSED = {
    "model_args": "xt computes nanoGPT's GPT as its model_args describe it (n_layer, n_head, n_embd, "
    "block_size, bias, vocab_size, dropout); another key may change the math",
    "pickled code": "xt reads tensors and plain containers from a pickle, never a function it names",
}


def config_fields(args, tied: bool, source: str) -> dict:
    """xt Config fields (family gpt2) from nanoGPT's model_args."""
    if not isinstance(args, dict):
        raise CheckpointError(f"{source}: model_args is not a dict of the model's sizes")
    unknown = sorted(map(str, set(args) - MODEL_ARGS))
    if unknown:
        raise CheckpointError(f"{source}: model_args {short(unknown)}: {REFUSED['model_args']}")
    missing = [key for key in REQUIRED if key not in args]
    if missing:
        raise CheckpointError(f"{source}: model_args lacks {', '.join(missing)}")
    bias = args.get("bias", True)
    if not isinstance(bias, bool):
        raise CheckpointError(f"{source}: model_args bias = {short(bias)}, not true or false")
    n_embd = args["n_embd"]
    return dict(
        family="gpt2",
        vocab_size=args["vocab_size"],
        n_layer=args["n_layer"],
        n_head=args["n_head"],
        n_kv_head=args["n_head"],
        n_embd=n_embd,
        ffn_hidden=4 * n_embd if isinstance(n_embd, int) and not isinstance(n_embd, bool) else n_embd,
        seq_len=args["block_size"],
        tie_embeddings=tied,
        norm_eps=1e-5,
        activation="gelu",
        **{part: bias for part in ("norm_bias", "qkv_bias", "o_bias", "mlp_bias")},
    )


def state_dict(obj, source: str) -> dict[str, StoredTensor]:
    """The model's tensors by GPT-2's names (torch.compile's prefix dropped)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("model"), dict) or "model_args" not in obj:
        raise CheckpointError(f"{source}: not a nanoGPT checkpoint (a dict with 'model' and 'model_args')")
    state = {}
    for name, tensor in obj["model"].items():
        if not isinstance(name, str) or not isinstance(tensor, StoredTensor):
            raise CheckpointError(f"{source}: the model's state dict holds {short(name)}, which is not a tensor")
        state[name.removeprefix(COMPILED_PREFIX)] = tensor
    return state


def _is_tied(state: dict[str, StoredTensor]) -> bool:
    """nanoGPT ties lm_head to wte (one Parameter, so one storage in the file)."""
    head, embedding = state.get("lm_head.weight"), state.get("transformer.wte.weight")
    return head is None or (
        embedding is not None and (head.storage.key, head.offset) == (embedding.storage.key, embedding.offset)
    )


def _is_linear_weight(name: str, ndim: int) -> bool:
    """A layer's nn.Linear weight, which nanoGPT stores (out, in) (the embeddings are (rows, C) alike)."""
    return name.startswith("transformer.h.") and ndim == 2


def _as_stored(name: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape nanoGPT stores for a tensor of xt's (in, out) shape."""
    return shape[::-1] if _is_linear_weight(name, len(shape)) else shape


def import_nanogpt(path, limits: Limits | None = None) -> Checkpoint:
    """A nanoGPT ckpt.pt as an xt checkpoint of the gpt2 family (float32), with meta.pkl's
    characters as its tokenizer when meta.pkl lies beside it."""
    path = Path(path)
    source = path.name
    torch_file = TorchFile(path, source)
    try:
        state = state_dict(torch_file.obj, source)
        tied = _is_tied(state)
        fields = config_fields(torch_file.obj["model_args"], tied, source)
        cfg = config_from_fields(fields, source, limits, part="model_args", names={"seq_len": "block_size"})
        names = tensor_names(cfg)
        check_names(
            names, [n for n in state if not BUFFERS.fullmatch(n) and not (tied and n == "lm_head.weight")], source
        )
        for name, xt in names.items():
            needed = _as_stored(name, stored_shape(cfg, xt))
            if state[name].shape != needed or not state[name].is_float:
                kind = state[name].storage.kind.name
                raise CheckpointError(
                    f"{source}: tensor {name} is {kind} {state[name].shape}; model_args need floats {needed}"
                )

        def read(name: str) -> np.ndarray:
            value = check_finite(name, torch_file.read(state[name], name), source).astype(np.float32)
            return value.T if _is_linear_weight(name, value.ndim) else value

        params = to_params(cfg, names, read)
    finally:
        torch_file.close()
    meta_pkl = path.parent / "meta.pkl"
    tokenizer = read_meta(meta_pkl, cfg) if meta_pkl.is_file() else None
    return Checkpoint(cfg, params, tokenizer, {"imported_from": f"nanoGPT {source}"})


def read_meta(path: Path, cfg: Config) -> CharTokenizer:
    """nanoGPT's char-level meta.pkl: {"stoi": char -> id, "itos": id -> char}, ids 0..n-1 over
    the sorted characters, read as plain values only (no name in it is resolved)."""
    source = f"{path.parent.name}/{path.name}"
    meta = plain_pickle(path, source, MAX_META_BYTES)
    itos, stoi = (meta.get("itos"), meta.get("stoi")) if isinstance(meta, dict) else (None, None)
    if not isinstance(itos, dict) or not isinstance(stoi, dict):
        raise CheckpointError(f"{source}: not nanoGPT's char-level meta.pkl (a dict with 'stoi' and 'itos')")
    n = len(itos)
    if set(itos) != set(range(n)) or any(not isinstance(c, str) or len(c) != 1 for c in itos.values()):
        raise CheckpointError(f"{source}: itos must map ids 0..{n - 1} to single characters")
    chars = "".join(itos[i] for i in range(n))
    if stoi != {c: i for i, c in enumerate(chars)} or list(chars) != sorted(set(chars)):
        raise CheckpointError(f"{source}: stoi and itos must number the sorted distinct characters alike")
    if n > cfg.vocab_size:
        raise CheckpointError(f"{source}: {n} characters, more than the model's vocab_size = {cfg.vocab_size}")
    return CharTokenizer(chars)


def checkpoint_header(path, limits: Limits | None = None) -> Header:
    """The nanoGPT row of xt_core.checkpoint.formats: the file read whole (its tensors are few and
    the optimizer's are never read)."""
    return Header.holding(import_nanogpt(path, limits))
