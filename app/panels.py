"""Figure entries of the step JSON: which picture a recorded tensor gets (by its shape and
meaning), with its labels, its 'numbers' table and its notes. Reads a trace, draws with
the pure builders in app.figures."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

import xt_core
from app import figures, head_figures
from app.serialize import figure_json, table
from app.settings import Settings
from app.spec import ResolvedSpec


def unique_labels(labels: list[str]) -> list[str]:
    """A categorical axis merges equal labels: tag repeats with their index."""
    seen: set[str] = set()
    out = []
    for i, label in enumerate(labels):
        out.append(label if label not in seen else f"{label} #{i}")
        seen.add(label)
    return out


@dataclass
class TraceContext:
    """A trace with the spec it was built from and the server's display limits."""

    spec: ResolvedSpec
    trace: xt_core.Trace
    settings: Settings

    @property
    def n_seq(self) -> int:
        return int(self.trace.tokens.shape[0])

    @property
    def T(self) -> int:
        return int(self.trace.tokens.shape[1])

    def input_labels(self, seq: int) -> list[str]:
        return self.spec.token_labels(self.spec.inputs[seq])

    def target_labels(self, seq: int) -> list[str]:
        return self.spec.token_labels(self.spec.targets[seq])

    def positions(self, seq: int) -> list[str]:
        """ "i token" for every input position: unique axis labels that name the token."""
        return [f"{i} {label}" for i, label in enumerate(self.input_labels(seq))]

    def predictions(self, seq: int) -> list[str]:
        """ "i input→target" for the loss charts."""
        return [
            f"{i} {a}→{b}" for i, (a, b) in enumerate(zip(self.input_labels(seq), self.target_labels(seq), strict=True))
        ]

    @cached_property
    def vocab(self) -> list[str]:
        """A label for every token id of the model's vocabulary."""
        tokenizer = self.spec.tokenizer
        known = tokenizer.vocab_size if tokenizer is not None else 0
        labels = [tokenizer.token_label(i) if i < known else f"#{i}" for i in range(self.trace.cfg.vocab_size)]
        return unique_labels(labels)

    def is_param(self, name: str) -> bool:
        return name in self.trace.param_names

    def entry(self, figure_id: str, title: str, role: str, figure, tab, notes=(), heads: dict | None = None) -> dict:
        """One element of the step's "figures" list. `heads`: set on a grid of attention
        heads (how each head was downsampled; the page fetches a head's every value)."""
        fig_json, fig_note = figure_json(figure)
        table_json, table_note = tab if tab is not None else (None, None)
        note = " ".join(n for n in (fig_note, table_note, *notes) if n) or None
        return {
            "id": figure_id,
            "title": title,
            "role": role,
            "figure": fig_json,
            "table": table_json,
            "note": note,
            "heads": heads,
        }

    def table(self, matrix, index, columns):
        return table(matrix, index, columns, self.settings.max_table_rows, self.settings.max_table_cols)


_VALUE_NAMES = {"probs": "p", "logits": "logit", "token_loss": "ℓ"}


def _value_name(name: str, gradient: bool) -> str:
    short = _VALUE_NAMES.get(name, name.rsplit(".", 1)[-1])
    return f"dL/d{short}" if gradient else short


# ---------------------------------------------------------------------- cell budget


def heatmap_cells(ctx: TraceContext, name: str, array: np.ndarray, seq: int) -> int:
    """Cells tensor_entry would draw at full resolution (0 for bars and scalars)."""
    shape = np.shape(array) if ctx.is_param(name) else np.shape(array)[1:]
    return int(np.prod(shape)) if len(shape) >= 2 else 0


def split_budget(needs: list[int], weights: list[float], total: int) -> list[int]:
    """Share `total` cells among figures needing `needs` cells, in proportion to `weights`;
    what a small figure leaves unused goes to the others (water filling)."""
    budgets = [0] * len(needs)
    remaining, weight_left = total, sum(w for n, w in zip(needs, weights, strict=True) if n)
    for i in sorted(range(len(needs)), key=lambda i: needs[i] / weights[i]):
        if not needs[i]:
            continue
        budgets[i] = max(1, min(needs[i], int(remaining * weights[i] / weight_left)))
        remaining, weight_left = remaining - budgets[i], weight_left - weights[i]
    return budgets


# ---------------------------------------------------------------------- tensors


def tensor_entry(
    ctx: TraceContext,
    name: str,
    array: np.ndarray,
    seq: int,
    *,
    figure_id: str,
    title: str,
    role: str,
    gradient: bool,
    max_cells: int | None = None,
) -> dict | None:
    """The picture of one tensor (a value or a gradient of tensor `name`) for sequence
    `seq`; None for a scalar (the loss), whose number the page shows as text. `max_cells`:
    this figure's share of the step's cell budget (default: the per-figure limits)."""
    s, array = ctx.settings, np.asarray(array)
    value_name = _value_name(name, gradient)
    cells = s.max_heatmap_cells if max_cells is None else min(max_cells, s.max_heatmap_cells)
    if ctx.is_param(name):
        return _param_entry(ctx, name, array, figure_id, title, role, gradient, value_name, cells)
    if array.ndim == 0:
        return None
    a = array[seq]
    if a.ndim == 1:  # (T,): per-token losses and their gradients
        labels = ctx.predictions(seq)
        fig = figures.bars(
            a, labels, title=title, value_name=value_name, x_title="position: input→target", gradient=gradient
        )
        return ctx.entry(figure_id, title, role, fig, ctx.table(a, labels, [value_name]))
    rows = ctx.positions(seq)
    if a.ndim == 3:  # (H, T, T) scores / probs or (H, T, hd) head outputs: every head
        figure_cells = s.max_figure_cells if max_cells is None else min(max_cells, s.max_figure_cells)
        return _head_grid_entry(ctx, name, a, rows, figure_id, title, gradient, value_name, figure_cells)
    vocab_axis = name in ("logits", "probs")
    cols = ctx.vocab if vocab_axis else None
    fig = figures.heatmap(
        a,
        rows,
        cols,
        title=title,
        value_name=value_name,
        col_title="token" if vocab_axis else "feature",
        gradient=gradient,
        max_cells=cells,
    )
    return ctx.entry(figure_id, title, role, fig, ctx.table(a, rows, cols))


def _head_axes(ctx: TraceContext, a: np.ndarray, rows: list[str]) -> tuple[list[str] | None, str]:
    """(column labels, column title) of a (H, T, ·) tensor: keys for scores and probs,
    features for head outputs."""
    square = a.shape[-1] == a.shape[-2] == ctx.T
    return (rows, "key") if square else (None, "feature")


def _mask_notes(name: str, gradient: bool) -> list[str]:
    return ["Masked (future) keys hold −∞ and are drawn blank."] if name.endswith(".scores") and not gradient else []


def _head_grid_entry(ctx, name, a, rows, figure_id, title, gradient, value_name, figure_cells) -> dict:
    s = ctx.settings
    cols, col_title = _head_axes(ctx, a, rows)
    fig = head_figures.head_grid(
        a,
        rows,
        cols,
        title=title,
        value_name=value_name,
        col_title=col_title,
        gradient=gradient,
        max_cells=s.max_heatmap_cells,
        max_figure_cells=figure_cells,
    )
    n_head, R, C = a.shape
    pooling = head_figures.grid_pooling(n_head, R, C, s.max_heatmap_cells, figure_cells)
    heads = {
        "count": n_head,
        "shape": [R, C],
        "shown": list(head_figures.pooled_shape((R, C), pooling)),
        "pooled": pooling.active,
    }
    index = [f"h{h} {label}" for h in range(n_head) for label in rows]
    tab = ctx.table(a.reshape(-1, a.shape[-1]), index, cols)
    return ctx.entry(figure_id, title, "attention", fig, tab, _mask_notes(name, gradient), heads=heads)


def head_entry(
    ctx: TraceContext, name: str, array: np.ndarray, seq: int, head: int, *, figure_id: str, title: str, gradient: bool
) -> dict:
    """One head of a grid (sequence `seq`), every value up to settings.max_head_cells: the
    enlarged view. Same entry shape as a step's figures, `heads` naming the head."""
    a = np.asarray(array)[seq, head]
    rows = ctx.positions(seq)
    cols, col_title = _head_axes(ctx, np.asarray(array)[seq], rows)
    title = f"{title} — head {head}"
    fig = head_figures.single_head(
        a,
        head,
        rows,
        cols,
        title=title,
        value_name=_value_name(name, gradient),
        col_title=col_title,
        gradient=gradient,
        max_cells=ctx.settings.max_head_cells,
    )
    heads = {"count": int(np.shape(array)[1]), "shape": list(a.shape), "head": head}
    return ctx.entry(
        f"{figure_id}.head{head}", title, "attention", fig, ctx.table(a, rows, cols), _mask_notes(name, gradient), heads
    )


# ---------------------------------------------------------------------- parameters


def _param_entry(ctx, name, array, figure_id, title, role, gradient, value_name, cells) -> dict:
    if array.ndim == 1:  # an RMSNorm gain
        fig = figures.bars(array, None, title=title, value_name=value_name, x_title="feature", gradient=gradient)
        return ctx.entry(figure_id, title, role, fig, ctx.table(array, None, [value_name]))
    if name in ("tok_embeddings", "output"):  # (V, C): one row per vocabulary token
        rows, row_title, col_title = ctx.vocab, "token", "feature"
    else:  # a Linear weight (in, out)
        rows, row_title, col_title = None, "input feature", "output feature"
    fig = figures.heatmap(
        array,
        rows,
        None,
        title=title,
        value_name=value_name,
        row_title=row_title,
        col_title=col_title,
        gradient=gradient,
        max_cells=cells,
        keep_rows=False,
    )
    return ctx.entry(figure_id, title, role, fig, ctx.table(array, rows, None))


def loss_entry(ctx: TraceContext, seq: int) -> dict:
    losses = ctx.trace["token_loss"][seq]
    labels = ctx.predictions(seq)
    title = "Loss per position, −log p(target); dashed: the mean L over all positions"
    fig = figures.loss_bars(losses, labels, ctx.trace.loss, title=title)
    return ctx.entry("loss.per_token", title, "loss", fig, ctx.table(losses, labels, ["−log p(target)"]))


def residual_entry(ctx: TraceContext, record, seq: int, max_cells: int | None = None) -> dict:
    """Residual gradients add: the gradient arriving along the skip (this op's share of
    dL/dx), what the branch adds through its norm, and the sum, the full dL/dx."""
    skip_name = record.inputs[0]
    skip = np.asarray(record.contributions[skip_name])[seq]
    total = np.asarray(ctx.trace.grad(skip_name))[seq]
    branch = total - skip
    rows = ctx.positions(seq)
    title = f"Residual gradients add: dL/d({skip_name}) = skip + branch"
    names = ("arriving along the skip (dL/dh)", "added by the branch", f"sum = dL/d({skip_name})")
    cells = ctx.settings.max_heatmap_cells if max_cells is None else min(max_cells, ctx.settings.max_heatmap_cells)
    fig = figures.residual_view(skip, branch, total, rows, title=title, names=names, max_cells=cells)
    per = max(1, ctx.settings.max_table_cols // 3)
    n = min(per, skip.shape[1])
    interleaved = np.stack([skip[:, :n], branch[:, :n], total[:, :n]], axis=-1).reshape(skip.shape[0], 3 * n)
    columns = [f"{part}[{j}]" for j in range(n) for part in ("skip", "branch", "sum")]
    tab = ctx.table(interleaved, rows, columns)
    notes = [f"The table shows features 0–{n - 1} of {skip.shape[1]}: skip + branch = sum in every row."]
    return ctx.entry("residual", title, "residual", fig, tab, notes)


def top_tokens(p: np.ndarray, target: int, k: int) -> np.ndarray:
    """The k most probable tokens and the target, most probable first."""
    top = list(np.argsort(-p, kind="stable")[:k])
    if target not in top:
        top.append(target)
    return np.array(sorted(top, key=lambda i: -p[i]), dtype=np.int64)


def identity_entry(ctx: TraceContext, seq: int, pos: int, k: int = 10) -> tuple[dict, float]:
    """The output softmax + cross-entropy identity dL/dlogits = (p − onehot)/N at one
    position, with numbers; and the largest deviation over every position."""
    trace = ctx.trace
    p = np.asarray(trace["probs"][seq, pos], dtype=np.float64)
    target = int(trace.targets[seq, pos])
    N = trace.targets.size
    onehot = np.zeros_like(p)
    onehot[target] = 1.0
    expected = (p - onehot) / N
    recorded = np.asarray(trace.grad("logits")[seq, pos], dtype=np.float64)
    idx = top_tokens(p, target, k)
    labels = [f"{ctx.vocab[i]}{' (target)' if i == target else ''}" for i in idx]
    title = f"dL/dlogits = (p − onehot)/N at position {pos} ({ctx.positions(seq)[pos]}), N = {N}"
    fig = figures.series_bars(
        labels,
        {"recorded dL/dlogits": recorded[idx], "(p − onehot)/N": expected[idx]},
        title=title,
        value_name="dL/dlogit",
        x_title="token",
    )
    columns = ["p", "onehot", "(p − onehot)/N", "recorded dL/dlogits"]
    matrix = np.stack([p[idx], onehot[idx], expected[idx], recorded[idx]], axis=1)
    error = trace.logits_identity_error()
    notes = [
        f"Largest |dL/dlogits − (p − onehot)/N| over all {N} positions and {p.shape[0]} tokens: {error:.3g}.",
        f"Shown: the {min(k, p.shape[0])} most probable tokens and the target.",
    ]
    return ctx.entry("identity", title, "check", fig, ctx.table(matrix, labels, columns), notes), error
