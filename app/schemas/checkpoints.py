"""The answers of app/routes/checkpoints.py: the model listing, a tokenize preview, an upload."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from app.schemas.common import Answer, ModelConfig


class PositionLimit(Answer):
    step: int = Field(description="the most positions a trace of this model takes")
    training: dict[str, int] = Field(
        description="the same with training steps first, by optimizer (their state is held too: AdamW's m and v)"
    )


class PositionLimits(Answer):
    float32: PositionLimit
    float64: PositionLimit


class Measured(Answer):
    """What `xt train` measured of a demo model (each key only when measured)."""

    induction_layer: int = Field(None)
    induction_head: int = Field(None)
    induction_score: float = Field(None)
    heldout_loss: float = Field(None)
    train_loss: float = Field(None)
    sample: str = Field(None, description="a greedy sample")
    sample_prompt: str = Field(None)


class ModelEntry(Answer):
    """A checkpoint: a shipped demo, a real model, or an upload."""

    name: str = Field(description="what a spec's `model` names")
    label: str
    shipped: bool
    config: ModelConfig
    n_params: int
    tokenizer: str | None
    alphabet: str | None = Field(description="a char tokenizer's characters")
    description: str
    examples: list[str]
    final_loss: float | None
    measured: Measured
    kind: str = Field(description="demo, real, served (xt serve --model) or upload")
    default_lr: dict[str, float] = Field(None, description="a real model only: learning rate by optimizer")
    tokenizer_label: str = Field(None, description="a real model only")
    max_positions: PositionLimits = Field(None, description="absent for an upload that came or went mid-listing")


class PresetConfig(Answer):
    """A random-init preset's config: its vocabulary is its tokenizer's (null until a text picks it)."""

    n_layer: int
    n_head: int
    n_kv_head: int
    n_embd: int
    ffn_hidden: int
    seq_len: int
    tie_embeddings: bool
    rope_theta: float
    norm_eps: float
    vocab_size: int | None
    family: Literal["llama"] = Field(description="every preset is Llama's: choosing one resets the form's family")


class Preset(Answer):
    name: str
    label: str
    tokenizer: str
    config: PresetConfig
    description: str
    text: str = Field(None, description="a text the preset suggests")


class Fetchable(Answer):
    name: str
    description: str
    size_mb: int
    command: str = Field(description="how to fetch it")


class ModelListing(Answer):
    """GET /api/models."""

    models: list[ModelEntry]
    presets: list[Preset] = Field(description="random-init configs")
    fetchable: list[Fetchable] = Field(description="real models not fetched on this server")


class TokenizePreview(Answer):
    """GET /api/tokenize: a text as the checkpoint's tokenizer splits it, and the limits."""

    model: str
    tokenizer: str | None
    tokenizer_label: str | None
    count: int = Field(description="tokens")
    positions: int = Field(description="count − 1: inputs are tokens[:-1]")
    pieces: list[str]
    seq_len: int
    max_positions: int
    max_positions_training: dict[str, int] = Field(description="by optimizer: the most with training steps first")
    max_train_steps: int


class Uploaded(Answer):
    """POST /api/models: the stored upload's name and its listing entry."""

    name: str = Field(description="sha256-<hex>: what a spec's `model` names")
    model: ModelEntry
