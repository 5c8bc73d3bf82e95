"""Model configuration: one frozen dataclass, validated on construction.

Every rule names its field, so a bad config from a web form or a CLI flag reads
as a sentence ("n_embd (60) must be divisible by n_head (8)"), never as an
IndexError from deep inside a matmul. A model family's part the code cannot compute
yet (GPT-2's learned positions, LayerNorm, GELU, biases; Qwen's QK-norm) is refused
the same way, naming the field and what the family computes (docs/adding-a-family.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

# What each model family's script computes (xt_core/families): per part of the config, the values
# it handles, its default first. A config naming another value is refused, naming the field and
# these values, rather than computed as something else: a new family is a row here, a new variant
# of a part (GELU, LayerNorm, a bias) a value added to a row once its ops exist.
FAMILY_PARTS: dict[str, dict[str, tuple]] = {
    "llama": {
        "positions": ("rope",),
        "norm_type": ("rmsnorm",),
        "norm_bias": (False,),
        "activation": ("swiglu",),
        "qkv_bias": (False, True),  # True: Qwen2/2.5
        "o_bias": (False,),
        "mlp_bias": (False,),
        "qk_norm": (False, True),  # True: Qwen3
    },
    "gpt2": {  # GPT-2 (all biases, tanh GELU); nanoGPT's checkpoints: exact GELU, biases as its `bias` says
        "positions": ("learned",),
        "norm_type": ("layernorm",),
        "norm_bias": (True, False),
        "activation": ("gelu_tanh", "gelu"),
        "qkv_bias": (True, False),
        "o_bias": (True, False),
        "mlp_bias": (True, False),
        "qk_norm": (False,),
    },
}
DEFAULT_FAMILY = "llama"


@dataclass(frozen=True)
class Config:
    vocab_size: int = 96  # V: rows of tok_embeddings (and of `output` when untied)
    n_layer: int = 2  # number of transformer blocks
    n_head: int = 4  # H: query heads
    n_kv_head: int = 2  # key/value heads; grouped-query attention when < n_head
    n_embd: int = 64  # C: width of the residual stream
    ffn_hidden: int = 172  # hidden width of the SwiGLU feed-forward
    seq_len: int = 32  # longest sequence the model accepts (T <= seq_len)
    tie_embeddings: bool = True  # logits use tok_embeddings^T instead of a separate `output`
    rope_theta: float = 10000.0  # RoPE base: pair i rotates by pos * theta^(-2i/hd)
    norm_eps: float = 1e-5  # added to mean(x^2) inside every RMSNorm
    # The model family and its parts. None: the family's default (FAMILY_PARTS, first value), so a
    # config naming none of them is Llama's; each is left out of to_dict() at its default, so its
    # canonical form (and trace id) is the one it had before these fields existed.
    family: str = DEFAULT_FAMILY  # the model script and its recorded tensors (xt_core/families)
    head_dim: int | None = None  # hd: width of one attention head; None: n_embd / n_head (Qwen3 sets its own)
    positions: str | None = None  # "rope": q, k rotated by position; "learned": GPT-2's (seq_len, C) table
    norm_type: str | None = None  # "rmsnorm"; "layernorm": GPT-2's, mean subtracted
    norm_bias: bool | None = None  # an additive bias beta in every norm (GPT-2's LayerNorm)
    activation: str | None = None  # "swiglu": silu(x W1) * (x W3); "gelu_tanh" (GPT-2), "gelu" (nanoGPT)
    qkv_bias: bool | None = None  # biases on the q, k, v projections (Qwen2, GPT-2)
    o_bias: bool | None = None  # a bias on the attention output projection (GPT-2)
    mlp_bias: bool | None = None  # biases on the feed-forward's projections (GPT-2)
    qk_norm: bool | None = None  # RMSNorm of each head's q and k before RoPE (Qwen3)

    def __post_init__(self) -> None:
        for name in ("vocab_size", "n_layer", "n_head", "n_kv_head", "n_embd", "ffn_hidden", "seq_len"):
            _check_positive_int(name, getattr(self, name))
        if not isinstance(self.tie_embeddings, bool):
            raise ValueError(f"tie_embeddings must be true or false, got {self.tie_embeddings!r}")
        for name in ("rope_theta", "norm_eps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value == float("inf"):
                raise ValueError(f"{name} must be a positive finite number, got {value!r}")
        self._fill_parts()
        if self.head_dim is None:
            if self.n_embd % self.n_head:
                raise ValueError(f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
            object.__setattr__(self, "head_dim", self.n_embd // self.n_head)  # frozen: set once, here
        _check_positive_int("head_dim", self.head_dim)
        if self.n_head % self.n_kv_head:
            raise ValueError(f"n_head ({self.n_head}) must be divisible by n_kv_head ({self.n_kv_head})")
        if self.positions == "rope" and self.head_dim % 2:
            width = "" if self.head_dim != self.derived_head_dim else " = n_embd / n_head"
            raise ValueError(f"head_dim{width} = {self.head_dim} must be even: RoPE rotates pairs (2i, 2i+1)")

    def _fill_parts(self) -> None:
        """The family is known, each part is a value its script computes; None takes its default."""
        if self.family not in FAMILY_PARTS:
            raise ValueError(f"family must be one of {_listed(FAMILY_PARTS)}, got {self.family!r}")
        for name, supported in FAMILY_PARTS[self.family].items():
            value = getattr(self, name)
            if value is None:
                object.__setattr__(self, name, supported[0])  # frozen: set once, here
            elif not any(type(value) is type(v) and value == v for v in supported):
                raise ValueError(
                    f"{name} = {value!r} is not computed for the {self.family!r} family: it computes "
                    f"{_listed(supported)}"
                )

    @property
    def derived_head_dim(self) -> int | None:
        """n_embd / n_head when whole: the head width a config that names none has."""
        return None if self.n_embd % self.n_head else self.n_embd // self.n_head

    @property
    def kv_group(self) -> int:
        """Query heads sharing one key/value head (1 = plain multi-head attention)."""
        return self.n_head // self.n_kv_head

    def family_defaults(self) -> dict:
        """The family fields' defaults for this config's family and sizes."""
        parts = {name: supported[0] for name, supported in FAMILY_PARTS[self.family].items()}
        return {"family": DEFAULT_FAMILY, "head_dim": self.derived_head_dim, **parts}

    def to_dict(self) -> dict:
        """Every field, the family fields only where they differ from their defaults."""
        defaults = self.family_defaults()
        return {k: v for k, v in asdict(self).items() if k not in defaults or v != defaults[k]}

    @classmethod
    def from_dict(cls, data: dict) -> Config:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown config field(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return cls(**data)

    def n_params(self) -> int:
        """Total parameter count, computable before allocating anything (the family's
        param_shapes, counted by the config's parts)."""
        C, hd, F = self.n_embd, self.head_dim, self.ffn_hidden
        q, kv = self.n_head * hd, self.n_kv_head * hd
        norm = C * (2 if self.norm_bias else 1)  # gain, and bias
        ffn_matrices = 3 if self.activation == "swiglu" else 2  # W1, W3, W2; or W1, W2
        per_layer = (
            2 * norm  # attention_norm, ffn_norm
            + C * (q + kv) * 2  # wq, wo; wk, wv
            + (q + 2 * kv if self.qkv_bias else 0)
            + (C if self.o_bias else 0)
            + C * F * ffn_matrices
            + ((ffn_matrices - 1) * F + C if self.mlp_bias else 0)
        )
        per_layer += 2 * hd if self.qk_norm else 0  # q_norm, k_norm gains
        positions = self.seq_len * C if self.positions == "learned" else 0
        head = 0 if self.tie_embeddings else self.vocab_size * C
        return self.vocab_size * C + positions + self.n_layer * per_layer + norm + head


def _check_positive_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be positive, got {value}")


def _listed(values) -> str:
    return ", ".join(repr(v) for v in values)


# Named configs used by the CLI, tests and benchmarks. `tiny` is the gradcheck preset.
PRESETS: dict[str, Config] = {
    "tiny": Config(),
    "class": Config(vocab_size=256, n_layer=4, n_head=8, n_kv_head=8, n_embd=256, ffn_hidden=688, seq_len=128),
    "large": Config(vocab_size=512, n_layer=8, n_head=8, n_kv_head=8, n_embd=512, ffn_hidden=1376, seq_len=256),
    # GPT-2's shape at tiny's size: LayerNorm, tanh GELU, learned positions, every bias; F = 4C
    "gpt2-tiny": Config(family="gpt2", n_head=4, n_kv_head=4, ffn_hidden=256),
}
