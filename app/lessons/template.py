"""A lesson's text filled from what its claims measured, so a number in lesson prose comes from
the trace: `{id}` is claim `id`'s main number, `{id.field}` one of its measured values, and a
format may follow a colon (`{s1.min:.2f}`). Beside the claims, a few numbers of the walkthrough
itself: `{N}` positions, `{T}` positions per sequence, `{V}` vocabulary size, `{loss}`,
`{quiz_probes}` (the gradient checks a quiz lets a learner open) and the model's widths: `{n_embd}`,
`{ffn_hidden}`, `{n_head}`, `{n_kv_head}`, `{kv_group}` (query heads per kv head), `{head_dim}` (hd), `{q_dim}` (n_head·hd), `{kv_dim}`
(n_kv_head·hd), `{sqrt_head_dim}` (√hd).
"""

from __future__ import annotations

import re

from app.lessons.claims import Measured

PLACE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_]+))?(?::([^{}]*))?\}")
DEFAULT_FLOAT = ".3g"


class TemplateError(ValueError):
    """A placeholder naming no claim or value, or a format that does not fit its value."""


def _value(values: dict[str, Measured | float | int], name: str, key: str | None):
    if name not in values:
        raise TemplateError(f"{{{name}}} names no claim or value (known: {', '.join(sorted(values))})")
    found = values[name]
    if not isinstance(found, Measured):
        if key is not None:
            raise TemplateError(f"{{{name}.{key}}}: {name} is one number, it has no fields")
        return found
    key = found.primary if key is None else key
    if key not in found.values:
        raise TemplateError(f"{{{name}.{key}}}: claim {name} measures {', '.join(found.values)}")
    return found.values[key]


def _formatted(value, spec: str | None) -> str:
    if spec is None:
        spec = DEFAULT_FLOAT if isinstance(value, float) else ""
    try:
        return format(value, spec)
    except (ValueError, TypeError) as exc:
        raise TemplateError(f"format {spec!r} does not fit {value!r}: {exc}") from None


def fill(text: str, values: dict[str, Measured | float | int]) -> str:
    """text with every placeholder replaced (TemplateError naming the first that does not fit)."""
    return PLACE.sub(lambda m: _formatted(_value(values, m.group(1), m.group(2)), m.group(3)), text)
