"""Every message of a catalogue with sample values, as the server formats it: the pages' reading
of the same catalogue (static/js/lib/words.js) must give the same text (tests/browser/test_home.py)."""

from __future__ import annotations

from fluent.syntax import ast as FTL
from fluent.syntax import parse
from fluent.syntax.visitor import Visitor

from app import words

# Numbers that reach every plural category of the languages here (one, few, many, other) and
# the formatter's fractions; text values for the rest.
NUMBERS = (0, 1, 2, 5, 21, 22, 1.5, 0.0003)


class _Variables(Visitor):
    def __init__(self):
        super().__init__()
        self.names: set[str] = set()

    def visit_VariableReference(self, node):
        self.names.add(node.id.name)


def message_ids(lang: str) -> list[str]:
    """Every message and attribute id of the catalogue ("id", "id.attr")."""
    ids = []
    for entry in parse(words.catalogue_text(lang)).body:
        if isinstance(entry, FTL.Message):
            ids += [entry.id.name] if entry.value is not None else []
            ids += [f"{entry.id.name}.{a.id.name}" for a in entry.attributes]
    return ids


def variables(lang: str) -> dict[str, set[str]]:
    found = {}
    for entry in parse(words.catalogue_text(lang)).body:
        if isinstance(entry, FTL.Message):
            walk = _Variables()
            walk.visit(entry)
            found[entry.id.name] = walk.names
    return found


def cases(lang: str) -> list[tuple[str, dict]]:
    """(id, values): each message once per sample number (all its values that number), and once
    with text values."""
    names = variables(lang)
    out = []
    for message_id in message_ids(lang):
        used = names[message_id.split(".")[0]]
        if not used:
            out.append((message_id, {}))
            continue
        out += [(message_id, dict.fromkeys(used, n)) for n in NUMBERS]
        out.append((message_id, {name: f"<{name}>" for name in used}))
    return out
