"""The random-init presets the home page offers (and GET /api/models lists)."""

from __future__ import annotations

import xt_core
from app.spec.schema import DEFAULT_CONFIG

_CLASS_TEXT = "Attention is all you need, they said. So the model looked back at every token it had seen, and learned."


def presets() -> list[dict]:
    """The random-init presets the home page offers. Char-tokenizer presets leave
    vocab_size null: it is then the text's alphabet size."""
    tiny = {**DEFAULT_CONFIG, "vocab_size": None}
    class_cfg = xt_core.PRESETS["class"].to_dict()
    return [
        {
            "name": "tiny-1",
            "label": "tiny, 1 layer",
            "tokenizer": "char",
            "config": {**tiny, "n_layer": 1},
            "description": "1 layer, 4 heads (2 kv heads), width 64: every picture small enough to read number by number.",
        },
        {
            "name": "tiny-2",
            "label": "tiny, 2 layers",
            "tokenizer": "char",
            "config": tiny,
            "description": "2 layers, 4 heads (2 kv heads), width 64: the default.",
        },
        {
            "name": "class",
            "label": "class: 4 layers, width 256",
            "tokenizer": "byte",
            "config": class_cfg,
            "text": _CLASS_TEXT,
            "description": "4 layers, 8 heads, width 256, byte tokenizer, up to 128 positions: the classroom demo.",
        },
    ]
