"""The spec the server benchmarks measure: xt_core's class preset with byte tokens and a
129-byte text (T = 128 = seq_len: the largest views the class config draws)."""

from __future__ import annotations

from xt_core import PRESETS

CLASS_CONFIG = PRESETS["class"].to_dict()
CLASS_TEXT = (
    "Attention is all you need, they said. So the model looked back at every token it had seen, "
    "and it learned what comes next, one byte at a time."
)[:129]


def class_spec(seed: int = 0) -> dict:
    """The class spec as a JSON body (or TraceSpec fields)."""
    return {"config": CLASS_CONFIG, "tokenizer": "byte", "text": CLASS_TEXT, "seed": seed}
