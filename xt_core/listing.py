"""The names a trace answers to, with the words of the one table of recorded names (xt_core.names):
`Trace.names()` lists them for a notebook as the page shows them.

The words are not xt_core's: they live in the catalogues (app/words/locales/<lang>/names.ftl), the
one place every word a person reads is kept, so a title is written once and translated once. This
module reads that one file itself, with fluent.runtime (as app.words does), and imports nothing
of the app: `trace.names()` in a plain Python session has the page's English titles, and
`trace.names(lang="ru")` the Russian ones, without the server's packages.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from fluent.runtime import FluentBundle, FluentResource

from xt_core.config import DEFAULT_FAMILY
from xt_core.names import TOKEN_IDS, lookup

# The catalogues of the words layer (app/words/__init__.py: LOCALES); only names.ftl is read here.
CATALOGUES = Path(__file__).resolve().parent.parent / "app" / "words" / "locales"


@dataclass(frozen=True)
class Listed:
    """One name a trace answers to (`trace[name]`, and `trace.grad(name)` where has_grad)."""

    name: str  # "layers.0.attention.probs", "tok_embeddings", "tokens"
    shape: tuple[int, ...]
    kind: str  # "tensor" (recorded by an op), "parameter" or "token ids"
    title: str  # the op that makes it ("Attention softmax over keys"); "parameter", "token ids" (in `lang`)
    label: str  # what it holds, in words ("layer 0 attention probabilities, all heads")
    has_grad: bool


@lru_cache(maxsize=4)
def _names_catalogue(lang: str) -> FluentBundle:
    words = FluentBundle([lang], use_isolating=False)
    words.add_resource(FluentResource((CATALOGUES / lang / "names.ftl").read_text(encoding="utf-8")))
    return words


def words_of(name: str, layer: int | None, lang: str = "en", family: str = DEFAULT_FAMILY) -> tuple[str, str]:
    """(title, label) of a recorded tensor as names.ftl words them for its model family's row;
    (name, name) for a name the table does not know. The layer enters as text: its digits as they
    are, never grouped."""
    found = lookup(name, family)
    if found is None:
        return name, name
    words = _names_catalogue(lang)
    title, label = (words.get_message(f"{found.words_id}-{part}").value for part in ("title", "label"))
    values = {"layer": "" if layer is None else str(layer)}
    return words.format_pattern(title, values)[0], words.format_pattern(label, values)[0]


def listing(
    held: list[tuple[str, tuple[int, ...]]],
    recorded: list[tuple[str, tuple[int, ...], int | None]],
    lang: str = "en",
    family: str = DEFAULT_FAMILY,
) -> list[Listed]:
    """A trace's token ids, then its recorded tensors (in execution order), then its parameters,
    each with its shape and the words of its model family's table. `held`: the token ids and
    parameters (name, shape); `recorded`: (name, shape, layer)."""
    words = _names_catalogue(lang)
    ids_title, param_title = (
        words.format_pattern(words.get_message(message).value)[0]
        for message in ("names-listed-token-ids", "names-listed-parameter")
    )
    ids = [Listed(name, shape, "token ids", ids_title, name, False) for name, shape in held if name in TOKEN_IDS]
    params = [
        Listed(name, shape, "parameter", param_title, name, True) for name, shape in held if name not in TOKEN_IDS
    ]
    tensors = [
        Listed(name, shape, "tensor", *words_of(name, layer, lang, family), True) for name, shape, layer in recorded
    ]
    return ids + tensors + params
