"""xt_core's refusals a page shows, as catalogue sentences: xt_core keeps its English for programs
(the CLI, a notebook), and the ones a person meets through the home form (a config that does not
divide, a character the model's alphabet lacks) are read here into a Said with the same values.
A message this table does not know stays xt_core's English (docs/translating.md)."""

from __future__ import annotations

import re

from app.words.said import Said

# (xt_core's sentence, the catalogue's message): each pattern's named groups are the message's values.
KNOWN = [
    (r"n_embd \((?P<width>\d+)\) must be divisible by n_head \((?P<heads>\d+)\)", "error-core-embd-by-heads"),
    (r"n_head \((?P<heads>\d+)\) must be divisible by n_kv_head \((?P<kv_heads>\d+)\)", "error-core-heads-by-kv"),
    (r"head_dim = (?P<width>\d+) must be even: RoPE rotates pairs \(2i, 2i\+1\)", "error-core-head-dim-odd"),
    (
        r"head_dim = n_embd / n_head = (?P<width>\d+) must be even: RoPE rotates pairs \(2i, 2i\+1\)",
        "error-core-derived-head-dim-odd",
    ),
    (r"(?P<field>\w+) must be a positive finite number, got (?P<value>.+)", "error-core-positive-finite"),
    (r"(?P<field>\w+) must be positive, got (?P<value>.+)", "error-core-positive"),
    (r"family must be one of (?P<known>.+), got (?P<value>.+)", "error-core-family"),
    (
        r"(?P<field>\w+) = (?P<value>.+) is not computed for the (?P<family>'\w+') family: it computes (?P<known>.+)",
        "error-core-part",
    ),
    (
        r"character (?P<char>.+) at position (?P<position>\d+) is not in the tokenizer's vocabulary",
        "error-core-char-not-in-alphabet",
    ),
    # a tensor asked of a trace by name (errors-traces.ftl)
    (r"no recorded tensor named (?P<name>'[^']*')", "error-core-no-tensor"),
    (r"no recorded tensor named (?P<name>'[^']*'); did you mean (?P<close>.+)\?", "error-core-no-tensor-close"),
    (r"(?P<name>\w+) are integer token ids: they have no gradient", "error-core-token-ids-no-grad"),
]
_COMPILED = [(re.compile(pattern, re.S), message_id) for pattern, message_id in KNOWN]


def core_said(message: str) -> str:
    """xt_core's `message` as a catalogue sentence when it is a known one (its English unchanged), else as it is."""
    for pattern, message_id in _COMPILED:
        found = pattern.fullmatch(message)
        if found:
            values = {name: int(value) if name == "position" else value for name, value in found.groupdict().items()}
            said = Said(message_id, **values)
            return said if said == message else message  # a catalogue that drifted from xt_core: its English wins
    return message
