"""What a user asks for: the spec's JSON schema (the body of POST /api/traces) and its defaults."""

from __future__ import annotations

from dataclasses import fields
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from app.checkpoints.registry import MAX_NAME_CHARS
from app.errors import an_object_like, not_a_boolean, only_a_boolean, whole_number
from app.words.said import Said
from xt_core import Config

CONFIG_FIELDS = [f.name for f in fields(Config)]
CONFIG_INTEGERS = ("vocab_size", "n_layer", "n_head", "n_kv_head", "n_embd", "ffn_hidden", "seq_len", "head_dim")
# The model family and its parts (xt_core.config.FAMILY_PARTS): omitted, the family's defaults (Llama's).
FAMILY_SWITCHES = ("norm_bias", "qkv_bias", "o_bias", "mlp_bias", "qk_norm")
MAX_WORD_CHARS = 40  # past every family's and part's name


# A random-init model when the spec names no sizes: the tiny preset, with room for a sentence.
DEFAULT_CONFIG = dict(
    n_layer=2,
    n_head=4,
    n_kv_head=2,
    n_embd=64,
    ffn_hidden=172,
    seq_len=64,
    tie_embeddings=True,
    rope_theta=10000.0,
    norm_eps=1e-5,
)


DEFAULT_TEXT = "the cat sat on the mat. the cat sat on the hat."

# Bounds the schema itself states, far above any server's limits (Settings: max_seq_len,
# max_n_seq), so that a body of 100,000 ids fails at the first id past them
# instead of after validating every one (~16 ms on the event loop per 240,000 ids), and a
# body that passes them is still under max_body_bytes.
MAX_ROW_TOKENS = 4_096
MAX_ROWS = 64
MAX_TEXT_CHARS = 65_536
TokenRow = Annotated[list[StrictInt], Field(max_length=MAX_ROW_TOKENS)]


class ConfigSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    vocab_size: int | None = None
    n_layer: int | None = None
    n_head: int | None = None
    n_kv_head: int | None = None
    n_embd: int | None = None
    ffn_hidden: int | None = None
    seq_len: int | None = None
    tie_embeddings: bool | None = None
    rope_theta: float | None = None
    norm_eps: float | None = None
    family: str | None = Field(None, max_length=MAX_WORD_CHARS)
    head_dim: int | None = None  # a head's width; omitted: n_embd / n_head
    positions: str | None = Field(None, max_length=MAX_WORD_CHARS)
    norm_type: str | None = Field(None, max_length=MAX_WORD_CHARS)
    norm_bias: bool | None = None
    activation: str | None = Field(None, max_length=MAX_WORD_CHARS)
    qkv_bias: bool | None = None
    o_bias: bool | None = None
    mlp_bias: bool | None = None
    qk_norm: bool | None = None

    _integers = field_validator(*CONFIG_INTEGERS, mode="before")(whole_number)  # seq_len 1e20: the limit named
    _numbers = field_validator("rope_theta", "norm_eps", mode="before")(not_a_boolean)
    _booleans = field_validator("tie_embeddings", *FAMILY_SWITCHES, mode="before")(only_a_boolean)


class TraceSpec(BaseModel):
    """The JSON body of POST /api/traces."""

    model_config = ConfigDict(extra="forbid")
    model: str | None = Field(
        None, max_length=MAX_NAME_CHARS, description="a checkpoint name from /api/models, or null for a random init"
    )
    config: ConfigSpec | None = Field(None, description="random-init sizes; omitted fields take defaults")
    tokenizer: Literal["byte", "char", "bpe"] | None = Field(
        None, description='"char" (default) or "byte" for a random init; a checkpoint\'s own ("bpe": a real model\'s)'
    )
    seed: int = Field(0, ge=0, description="random-init seed")
    text: str | None = Field(
        None, max_length=MAX_TEXT_CHARS, description="encoded with the tokenizer; inputs = ids[:-1], targets = ids[1:]"
    )
    # Strict: JSON true/false and 1.5 are not token ids (lax mode read true as 1).
    tokens: TokenRow | Annotated[list[TokenRow], Field(max_length=MAX_ROWS)] | None = Field(
        None, description="token ids instead of text (one or several rows)"
    )
    dtype: Literal["float32", "float64", "bfloat16", "float16"] = Field(
        "float32", description='"bfloat16" and "float16": float32 master weights, each op rounded (docs/precision.md)'
    )
    loss_scale: float | None = Field(
        None, description="a bfloat16/float16 step's loss scale: a power of two in [1, 2^32] (default 1)"
    )
    loss_scale_growth: int | None = Field(
        None,
        description="the dynamic scaler over the training steps: double the scale after this many clean steps, "
        "halve it and skip the update on inf/NaN (null: a static scale)",
    )
    flush_to_zero: bool | None = Field(None, description="a bfloat16/float16 step's subnormal results become 0")
    faults: list[str] = Field(
        default_factory=list, description="bug-lab faults by name (GET /api/faults): each swaps one op's backward"
    )
    fault_layer: int | None = Field(None, description="the layer layer-specific faults hit (default: the last)")
    quiz: int | None = Field(None, description="bug-lab quiz: the server hides a fault chosen by this seed")
    optimizer: dict[str, Any] | None = Field(
        None, description='{"name": "adamw"|"sgd", "lr": ..., ...}: the trace ends with this update step'
    )
    run: str | None = Field(
        None, max_length=64, description="a recorded run's name (GET /api/runs): its step run_step, and no other field"
    )
    run_step: int | None = Field(None, description="the step of `run` the trace rebuilds (docs/film.md)")
    run_digest: str | None = Field(
        None,
        max_length=16,
        description="the run's weights before the step (its canonical spec's): refused if recorded again",
    )
    train_steps: int = Field(
        0,
        ge=0,
        description="optimizer steps on this batch before the shown one (AdamW at the model's default lr unless optimizer given: 3e-3 for a random init, a checkpoint's own, e.g. SmolLM2 3e-5)",
    )

    _integers = field_validator(
        "seed", "fault_layer", "quiz", "train_steps", "loss_scale_growth", "run_step", mode="before"
    )(whole_number)
    _scale = field_validator("loss_scale", mode="before")(not_a_boolean)
    _flush = field_validator("flush_to_zero", mode="before")(only_a_boolean)
    _optimizer = field_validator("optimizer", mode="before")(
        an_object_like({"name": "adamw", "lr": 0.003}, "error-hint-optimizer-name")
    )

    @field_validator("text", "model", "run")
    @classmethod
    def _whole_characters(cls, value: str | None) -> str | None:
        """JSON may escape half a UTF-16 pair ("\\ud800"): no tokenizer can encode that."""
        if value is not None and any(0xD800 <= ord(c) <= 0xDFFF for c in value):
            index = next(i for i, c in enumerate(value) if 0xD800 <= ord(c) <= 0xDFFF)
            raise ValueError(Said("error-lone-surrogate", index=index))
        return value
