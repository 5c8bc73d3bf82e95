"""The one place that decides what a tensor's axes are: which labels run along its rows and
columns, and their titles. Every picture of a tensor (a step's figures, the update's ΔW, the
bug lab's diff) asks here. The titles and notes are the catalogues' (names.ftl, `names-axis-…`),
in the context's language (TraceContext.lang).

* a (V, C) parameter (the token embedding, an untied LM head): one row per vocabulary token;
* a Linear weight (in, out): input features down, output features across;
* an activation of one sequence (T, X): positions down; the vocabulary across for the logits and the output softmax;
* one head's (T, T) scores or probabilities: queries down, keys across; (T, hd): features across.

A vocabulary beyond VOCAB_WHOLE tokens (a real model's: 49,152) is never drawn whole: the axis
shows the tokens that matter, named by their text, at most VOCAB_SHOWN of them, and says which
(`Axes.note`): the batch's tokens and targets, then the tokens of highest probability (a value)
or largest gradient; the rows of a gradient that are zero outside the batch's tokens (the
lookup's) are those rows, and the note says the rest are zero. `Axes.shown(z)` picks them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from app import words
from app.steps.context import TraceContext
from app.steps.titles import local_name
from app.words import t
from app.words.numbers import group_separator
from xt_core import names

VOCAB_ROWS = ("tok_embeddings", "output")  # (V, C) parameters
# The parameters' symbols in the formulas (Wq, W1, ...), by name without "layers.{L}."; a recorded
# tensor's is in xt_core.names (p, logit, x, h, x′, n, ...), any other's its name's last part.
_PARAM_SYMBOLS = {
    **{f"attention.w{m}": f"W{m}" for m in "qkvo"},
    **{f"feed_forward.w{i}": f"W{i}" for i in "123"},
}
VOCAB_WHOLE = 512  # a vocabulary up to this many tokens is drawn whole (pooled if need be)
VOCAB_SHOWN = 64  # beyond: at most this many of its tokens are drawn
VOCAB_TOP = 16  # of which at least this many are the top tokens (the rest: targets, batch tokens)


@dataclass(frozen=True)
class Axes:
    rows: list[str] | None  # labels down the y axis (None: plain indices)
    cols: list[str] | None  # labels across
    row_title: str
    col_title: str
    row_ids: np.ndarray | None = None  # the rows drawn (a vocabulary too large to draw whole); None: all
    col_ids: np.ndarray | None = None  # ... the columns drawn
    note: str | None = None  # which of a vocabulary's tokens are drawn, and why

    def shown(self, z: np.ndarray) -> np.ndarray:
        """The part of a 2-D array these axes label."""
        z = np.asarray(z)
        if self.row_ids is not None:
            z = z[self.row_ids]
        if self.col_ids is not None:
            z = z[:, self.col_ids]
        return z


def param_axes(ctx: TraceContext, name: str, array=None, gradient: bool = False) -> Axes:
    """A 2-D parameter (`array`: its value, gradient or update, which picks a large vocabulary's rows)."""
    if name not in VOCAB_ROWS:
        return Axes(None, None, _word(ctx, "names-axis-input-feature"), _word(ctx, "names-axis-output-feature"))
    V = ctx.trace.cfg.vocab_size
    token, feature = _word(ctx, "names-axis-token"), _word(ctx, "names-axis-feature")
    if V <= VOCAB_WHOLE or array is None:
        return Axes(ctx.vocab if V <= VOCAB_WHOLE else None, None, token, feature)
    ids, note = _vocab_rows(ctx, np.asarray(array), gradient, name)
    return Axes(ctx.vocab_labels(ids), None, token, feature, row_ids=ids, note=note)


def activation_axes(ctx: TraceContext, name: str, seq: int, array=None, gradient: bool = False) -> Axes:
    """A (T, X) activation or gradient of sequence `seq` (`array`: that slice, which picks a
    large vocabulary's columns)."""
    rows, position = ctx.positions(seq), _word(ctx, "names-axis-position")
    if not vocab_columns(name):
        return Axes(rows, None, position, _word(ctx, "names-axis-feature"))
    V, token = ctx.trace.cfg.vocab_size, _word(ctx, "names-axis-token")
    if V <= VOCAB_WHOLE or array is None:
        return Axes(rows, ctx.vocab if V <= VOCAB_WHOLE else None, position, token)
    ids, note = _vocab_columns(ctx, np.asarray(array), seq, gradient)
    return Axes(rows, ctx.vocab_labels(ids), position, token, col_ids=ids, note=note)


def vocab_columns(name: str) -> bool:
    """Whether a recorded tensor's last axis is the vocabulary (the logits, the output softmax)."""
    recorded = names.lookup(name)
    return recorded is not None and recorded.axes[-1:] == ("V",)


def head_axes(ctx: TraceContext, shape: tuple[int, ...], seq: int) -> Axes:
    """One head of a (H, T, X) tensor of sequence `seq`: keys across for scores and probs
    (T × T), features for head outputs (T × hd)."""
    rows = ctx.positions(seq)
    square = shape[-1] == shape[-2] == ctx.T
    across = "names-axis-key" if square else "names-axis-feature"
    return Axes(rows, rows if square else None, _word(ctx, "names-axis-query"), _word(ctx, across))


def value_name(name: str, gradient: bool, lang: str) -> str:
    """The short name of a tensor's entries on a colour bar or value axis: p, logit, dL/dp, …
    A recorded row's symbol that is a word ("scores") is the catalogue's (names-value-scores: S
    in Russian, the formulas' letter); a letter (p, x′) and a parameter's name stay as they are."""
    recorded = names.lookup(name)
    short = recorded.short if recorded else _PARAM_SYMBOLS.get(local_name(name), name.rsplit(".", 1)[-1])
    if recorded is not None and words.has(lang, value_words_id(short)):
        short = t(lang, value_words_id(short))
    return f"dL/d{short}" if gradient else short


def value_words_id(symbol: str) -> str:
    """The catalogue's id of a recorded row's symbol that is a word: "q_rot" -> "names-value-q-rot"."""
    return "names-value-" + re.sub(r"[._]", "-", symbol)


# ---------------------------------------------------------------------- a large vocabulary's tokens


def _word(ctx: TraceContext, message: str, **values) -> str:
    """A message in the language of the context's answer."""
    return t(ctx.lang, message, **values)


def _count(ctx: TraceContext, n: int) -> str:
    """A count of rows or tokens, grouped as xt has always printed a vocabulary ("49,152"; in
    Russian with a no-break space, "49 152"): the sentences say "N of M" and need no plural of it."""
    return f"{n:,}".replace(",", group_separator(ctx.lang))


def _first_seen(ids) -> list[int]:
    """Distinct token ids in order of first appearance."""
    return list(dict.fromkeys(int(i) for i in np.asarray(ids).reshape(-1)))


def _top(score: np.ndarray, taken: list[int], room: int) -> list[int]:
    """Up to `room` ids of highest score not already taken (NaN scores last)."""
    if room <= 0:
        return []
    score = np.where(np.isnan(score), -np.inf, score)
    candidates = np.argpartition(-score, min(room + len(taken), score.size - 1))[: room + len(taken)]
    ranked = candidates[np.argsort(-score[candidates], kind="stable")]
    chosen = set(taken)
    return [int(i) for i in ranked if int(i) not in chosen][:room]


def _vocab_columns(ctx: TraceContext, a: np.ndarray, seq: int, gradient: bool) -> tuple[np.ndarray, str]:
    """(token ids, note) across a (T, V) tensor of sequence `seq`: its targets, then the tokens
    of highest probability at any position (a value) or of largest |gradient| (a gradient)."""
    V = a.shape[-1]
    targets = _first_seen(ctx.trace.targets[seq])[: VOCAB_SHOWN - VOCAB_TOP]
    if gradient:
        score, message = np.max(np.abs(a), axis=0), "names-axis-columns-gradient-note"
    else:
        score, message = (
            np.max(np.asarray(ctx.trace[names.OUTPUT_PROBS][seq]), axis=0),
            "names-axis-columns-probability-note",
        )
    ids = targets + _top(np.asarray(score, dtype=np.float64), targets, VOCAB_SHOWN - len(targets))
    drawn = {"shown": len(ids), "total": _count(ctx, V), "targets": len(targets), "rest": _count(ctx, V - len(ids))}
    note = _word(ctx, message, **drawn)
    return np.array(ids, dtype=np.int64), note


# Which rows of a (V, C) parameter each op reading it reads: the lookup only its input tokens',
# the LM head every row (each row scores its token at every position).
_READS = {"lookup": "names-axis-reads-lookup", "head": "names-axis-reads-head", "both": "names-axis-reads-both"}


def _value_rows_note(ctx: TraceContext, name: str, ids: list[int], V: int) -> str:
    """Which of a (V, C) parameter's rows are drawn, and which rows the ops that read it read."""
    inputs = len(set(ids) & set(np.unique(ctx.trace.tokens).tolist()))
    tied = ctx.trace.cfg.tie_embeddings
    reads = "head" if name == "output" else ("both" if tied else "lookup")
    drawn = {"shown": len(ids), "total": _count(ctx, V), "inputs": inputs, "reads": _word(ctx, _READS[reads])}
    if len(ids) > inputs:
        return _word(ctx, "names-axis-rows-more-note", more=len(ids) - inputs, **drawn)
    return _word(ctx, "names-axis-rows-note", **drawn)


def _vocab_rows(ctx: TraceContext, a: np.ndarray, gradient: bool, name: str) -> tuple[np.ndarray, str]:
    """(token ids, note) down a (V, C) parameter: the batch's input tokens and targets; of a
    gradient nonzero only there (the lookup's), exactly those rows; of one nonzero elsewhere
    too (the LM head's), then the rows of largest |gradient|."""
    V = a.shape[0]
    batch = _first_seen(np.concatenate([ctx.trace.tokens.reshape(-1), ctx.trace.targets.reshape(-1)]))
    if not gradient:
        ids = batch[:VOCAB_SHOWN]
        return np.array(ids, dtype=np.int64), _value_rows_note(ctx, name, ids, V)
    # each row's largest |entry|, with no (V, C) temporary (113 MB for SmolLM2): a row is all zero
    # where it is 0 (a NaN stays nonzero), and it ranks the rows below
    row_peaks = np.maximum(np.max(a, axis=1), -np.min(a, axis=1))
    nonzero = np.flatnonzero(row_peaks != 0)
    if nonzero.size <= VOCAB_SHOWN:
        found = set(nonzero.tolist())
        ids = [i for i in batch if i in found] + [i for i in nonzero.tolist() if i not in set(batch)]
        note = _word(
            ctx, "names-axis-lookup-rows-note", shown=len(ids), rest=_count(ctx, V - len(ids)), total=_count(ctx, V)
        )
        return np.array(ids, dtype=np.int64), note
    taken = batch[: VOCAB_SHOWN - VOCAB_TOP]
    ids = taken + _top(row_peaks.astype(np.float64), taken, VOCAB_SHOWN - len(taken))
    drawn = {"shown": len(ids), "total": _count(ctx, V), "nonzero": _count(ctx, nonzero.size)}
    if nonzero.size < V:
        note = _word(ctx, "names-axis-gradient-rows-zero-note", zero=_count(ctx, V - nonzero.size), **drawn)
    else:
        note = _word(ctx, "names-axis-gradient-rows-note", **drawn)
    return np.array(ids, dtype=np.int64), note
