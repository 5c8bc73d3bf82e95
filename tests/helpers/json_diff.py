"""Where two JSON values differ, as a person reads it: the path of each differing key or item
(`figures[0].table.rows[3][5]`) with the old and the new value, shortened."""

from __future__ import annotations

import re

SHOWN_CHARS = 120  # a value longer than this is cut, with its length


def shown(value) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}… ({len(text)} chars)"


def differences(old, new, path: str = "", limit: int = 5, alike=None) -> list[tuple[str, object, object]]:
    """The first `limit` places where `new` differs from `old`, depth first in document order:
    (path, old value, new value); a key or item one side lacks is `<absent>` there.
    alike(old, new), if given, judges two unequal values first: True (the same here), False (a
    difference at this path), None (compared as usual: dicts and lists item by item)."""
    found: list[tuple[str, object, object]] = []
    _walk(old, new, path, found, limit, alike)
    return found


ABSENT = "<absent>"


def _walk(old, new, path: str, found: list, limit: int, alike) -> None:
    if len(found) >= limit or (type(old) is type(new) and old == new):
        return
    verdict = None if alike is None else alike(old, new)
    if verdict is True:
        return
    if verdict is None and isinstance(old, dict) and isinstance(new, dict):
        for key in [*old, *(k for k in new if k not in old)]:
            _walk(old.get(key, ABSENT), new.get(key, ABSENT), f"{path}.{key}" if path else key, found, limit, alike)
    elif verdict is None and isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _walk(a, b, f"{path}[{i}]", found, limit, alike)
    else:  # a leaf changed, a list changed length, or a value changed type
        found.append((path or "(the whole answer)", old, new))


def report(name: str, old, new, limit: int = 5) -> str:
    """`name` and its differing paths, one a line: `  path: old -> new`."""
    lines = [f"{name}:"]
    lines += [f"  {path}: {shown(a)} -> {shown(b)}" for path, a, b in differences(old, new, limit=limit)]
    return "\n".join(lines)


def numbers_as_hash(text: str) -> str:
    # a number's point needs a digit after it: the full stop ending "... tokens: 0." stays a word;
    # Russian writes the point as a comma ("0,0625": app/words/numbers.py)
    return re.sub(r"[-+]?(?:\d+(?:[.,]\d+)?|\.\d+)(?:[eE][-+]?\d+)?", "#", text)


def shape_differences(old, new, path: str = "", limit: int = 5) -> list[tuple[str, object, object]]:
    """Like `differences`, with every number free: the same keys, list lengths, types, strings
    (their numbers aside) and typed arrays' dtype and shape. What two answers computed with other
    BLAS kernels still share: their float32 sums end in other bits, and a tie's argmax may move."""
    return differences(old, new, path, limit, alike=_same_shape)


def _same_shape(old, new) -> bool | None:
    if isinstance(old, dict) and isinstance(new, dict) and "bdata" in old and "bdata" in new:
        return {**old, "bdata": None} == {**new, "bdata": None}  # a typed array: its dtype and shape exact
    if isinstance(old, dict | list) or isinstance(new, dict | list):
        return None
    if isinstance(old, str) and isinstance(new, str):
        return numbers_as_hash(old) == numbers_as_hash(new)
    number = (int, float)
    return isinstance(old, number) and isinstance(new, number) and not isinstance(old, bool) and type(old) is type(new)
