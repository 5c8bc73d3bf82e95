"""A trace shown in a notebook (Jupyter, VS Code): `show(trace)` displays the walk page inline,
offline, as an iframe of the single-file export (app.export). xt_core stays free of web imports:
this lives in the app package.

    import numpy as np, xt_core
    from app.notebook import show
    cfg = xt_core.Config(vocab_size=8, n_layer=1, n_head=2, n_kv_head=1, n_embd=8, ffn_hidden=16, seq_len=8)
    params = xt_core.init_params(cfg, seed=0, dtype=np.float32)
    tokens = np.array([[1, 2, 3, 4, 1, 2, 3, 4]])
    trace = xt_core.forward_backward(cfg, params, tokens[:, :-1], tokens[:, 1:])
    show(trace)

A trace built in the kernel has no spec the app could rebuild it from, so the export's own app
(in process, for the export's few seconds) is handed the trace itself under the spec of its sizes
and tokens; a spec (a dict, as POST /api/traces takes) is shown too: `show({"model": "induction",
"text": "abcabc"})`.
"""

from __future__ import annotations

import html

import numpy as np

import xt_core

HEIGHT = 760  # px: the walk page's first figure in view beside its timeline


class Shown:
    """The notebook's rich display of an export: an iframe whose srcdoc is the whole page."""

    def __init__(self, page: str, height: int = HEIGHT):
        self.page = page
        self.height = height

    def _repr_html_(self) -> str:
        return (
            f'<iframe class="xt-walk" title="xt: one training step, op by op" srcdoc="{html.escape(self.page)}" '
            f'style="width: 100%; height: {self.height}px; border: 1px solid #8a8a8a"></iframe>'
        )


def spec_of(trace: xt_core.Trace) -> dict:
    """The spec of a trace's sizes and tokens (inputs then the last target: the spec's `tokens`)."""
    inputs, targets = np.asarray(trace.tokens), np.asarray(trace.targets)
    if not np.array_equal(inputs[:, 1:], targets[:, :-1]):
        raise ValueError("show() needs targets that are the inputs shifted by one (the next token)")
    tokens = np.concatenate([inputs, targets[:, -1:]], axis=1)
    return {
        "config": trace.cfg.to_dict(),
        "tokens": tokens.tolist() if len(tokens) > 1 else tokens[0].tolist(),
        "dtype": str(np.dtype(trace.dtype)),
        "seed": 0,
    }


def show(what, height: int = HEIGHT, lang: str = "en") -> Shown:
    """`what` (an xt_core.Trace, or a spec dict) as the walk page, inline, in the language `lang`
    (one of app.words.LANGUAGES: "en", "ru")."""
    from app.export import export

    if isinstance(what, xt_core.Trace):
        return Shown(export(spec=spec_of(what), want_html=True, trace=what, lang=lang).html, height)
    return Shown(export(spec=dict(what), want_html=True, lang=lang).html, height)
