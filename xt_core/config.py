"""Model configuration: one frozen dataclass, validated on construction.

Every rule names its field, so a bad config from a web form or a CLI flag reads
as a sentence ("n_embd (60) must be divisible by n_head (8)"), never as an
IndexError from deep inside a matmul.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields


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

    def __post_init__(self) -> None:
        for name in ("vocab_size", "n_layer", "n_head", "n_kv_head", "n_embd", "ffn_hidden", "seq_len"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be an integer, got {value!r}")
            if value < 1:
                raise ValueError(f"{name} must be positive, got {value}")
        if not isinstance(self.tie_embeddings, bool):
            raise ValueError(f"tie_embeddings must be true or false, got {self.tie_embeddings!r}")
        for name in ("rope_theta", "norm_eps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value == float("inf"):
                raise ValueError(f"{name} must be a positive finite number, got {value!r}")
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        if self.n_head % self.n_kv_head:
            raise ValueError(f"n_head ({self.n_head}) must be divisible by n_kv_head ({self.n_kv_head})")
        if self.head_dim % 2:
            raise ValueError(
                f"head_dim = n_embd / n_head = {self.head_dim} must be even: RoPE rotates pairs (2i, 2i+1)"
            )

    @property
    def head_dim(self) -> int:
        """hd: width of one attention head."""
        return self.n_embd // self.n_head

    @property
    def kv_group(self) -> int:
        """Query heads sharing one key/value head (1 = plain multi-head attention)."""
        return self.n_head // self.n_kv_head

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Config:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown config field(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return cls(**data)

    def n_params(self) -> int:
        """Total parameter count, computable before allocating anything."""
        C, hd = self.n_embd, self.head_dim
        per_layer = (
            2 * C  # attention_norm, ffn_norm
            + C * self.n_head * hd * 2  # wq, wo
            + C * self.n_kv_head * hd * 2  # wk, wv
            + C * self.ffn_hidden * 3  # w1, w3, w2
        )
        head = 0 if self.tie_embeddings else self.vocab_size * C
        return self.vocab_size * C + self.n_layer * per_layer + C + head


# Named configs used by the CLI, tests and benchmarks. `tiny` is the gradcheck preset.
PRESETS: dict[str, Config] = {
    "tiny": Config(),
    "class": Config(vocab_size=256, n_layer=4, n_head=8, n_kv_head=8, n_embd=256, ffn_hidden=688, seq_len=128),
    "large": Config(vocab_size=512, n_layer=8, n_head=8, n_kv_head=8, n_embd=512, ffn_hidden=1376, seq_len=256),
}
