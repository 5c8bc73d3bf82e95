"""Embedding lookup, learned positions, matmuls (with and without bias), the residual add and the
SwiGLU gate.

Dimension names: B sequences, T positions, C = n_embd, V = vocab_size,
F = ffn_hidden; `in`/`out` are a Linear's widths (weights stored (in, out): y = x @ W).
"""

from __future__ import annotations

import numpy as np

from xt_core.memory import reusable_empty

# --------------------------------------------------------------------------- embedding

EMBEDDING_FORWARD_TEX = r"x_{b,t,:} = E_{\mathrm{tok}_{b,t},\,:}"
EMBEDDING_BACKWARD_TEX = r"\frac{\partial L}{\partial E_{v,:}} \mathrel{+}= \sum_{(b,t):\,\mathrm{tok}_{b,t}=v} \frac{\partial L}{\partial x_{b,t,:}}"


def embedding_forward(tokens: np.ndarray, table: np.ndarray):
    """tokens (B, T) int, table (V, C) -> x (B, T, C) = table[tokens]."""
    return table[tokens], (tokens, table.shape)


def embedding_backward(dx: np.ndarray, cache):
    """Forward: x = table[tokens]. Each row of dx (B, T, C) flows back to the row of its token;
    a token used twice gets both rows added (np.add.at, not fancy-index assignment, which
    would keep only the last)."""
    tokens, table_shape = cache
    dtable = np.zeros(table_shape, dtype=dx.dtype)
    np.add.at(dtable, tokens.reshape(-1), dx.reshape(-1, table_shape[1]))
    return None, dtable


def embedding_rows(cache) -> np.ndarray:
    """The rows of the table embedding_backward can make nonzero: the batch's distinct tokens."""
    return np.unique(cache[0])


# --------------------------------------------------------------------------- learned positions (GPT-2)

POSITIONS_FORWARD_TEX = r"x_{b,t,:} = e_{b,t,:} + P_{t,:}"
POSITIONS_BACKWARD_TEX = r"\frac{\partial L}{\partial e} = \frac{\partial L}{\partial x}, \qquad \frac{\partial L}{\partial P_{t,:}} = \sum_{b} \frac{\partial L}{\partial x_{b,t,:}}\ (t < T), \quad 0\ (t \ge T)"


def positions_forward(e: np.ndarray, table: np.ndarray):
    """e (B, T, C) token embeddings, table (seq_len, C) learned positions -> x = e + table[:T]:
    row t of the table is added at position t of every sequence."""
    T = e.shape[1]
    return e + table[:T], table.shape


def positions_backward(dx: np.ndarray, cache):
    """Forward: x = e + table[:T].  de = dx;  dtable[t] = sum over the batch of dx[:, t] for
    t < T (every sequence reads the same row: forgetting the sum keeps one sequence's
    gradient), zero for the rows past T no position read."""
    dtable = np.zeros(cache, dtype=dx.dtype)
    dtable[: dx.shape[1]] = np.sum(dx, axis=0)
    return dx, dtable


# --------------------------------------------------------------------------- linear

LINEAR_FORWARD_TEX = r"Y = X W"
LINEAR_BACKWARD_TEX = r"\frac{\partial L}{\partial X} = \frac{\partial L}{\partial Y} W^{\top}, \qquad \frac{\partial L}{\partial W} = X^{\top} \frac{\partial L}{\partial Y}"


FEW_ROWS = 64  # B*T up to which linear_input_backward multiplies the transposed way


def linear_forward(x: np.ndarray, weight: np.ndarray):
    """x (B, T, in), weight (in, out) -> y (B, T, out) = x @ weight."""
    return x @ weight, (x, weight)


def linear_backward(dy: np.ndarray, cache):
    """Forward: y = x @ weight.  dx = dy @ weight^T;  dweight = x^T @ dy (X first: (in, out))."""
    (dx, _) = linear_input_backward(dy, cache)
    return dx, linear_param_backward(dy, cache)[1]


def linear_param_backward(dy: np.ndarray, cache):
    """linear_backward's weight gradient alone: (None, dweight), the same product (the same bits).
    Made when read where a replay leaves it out (xt_core.recompute.DeferredParams)."""
    x = cache[0]
    return None, x.reshape(-1, x.shape[-1]).T @ dy.reshape(-1, dy.shape[-1])


def linear_input_backward(dy: np.ndarray, cache):
    """linear_backward without the weight's gradient: (dx, None). Where only activation
    gradients are wanted (the float64 twin of gradient checks, xt_core.checks.twin)."""
    weight = cache[1]
    rows = dy.reshape(-1, dy.shape[-1])  # (B*T, out)
    if rows.shape[0] > FEW_ROWS:
        return dy @ weight.T, None
    # (weight @ dy^T)^T: OpenBLAS then packs the (in, out) weight as it lies, not transposed: 1.3-1.7x
    # faster at 32 rows, about even at 128, slower from 256 (docs/performance.md); copy: B*T*in floats
    dx = np.ascontiguousarray((weight @ rows.T).T)
    return dx.reshape(*dy.shape[:-1], weight.shape[0]), None


# --------------------------------------------------------------------------- linear with bias (GPT-2)

LINEAR_BIAS_FORWARD_TEX = r"Y = X W + b"
LINEAR_BIAS_BACKWARD_TEX = r"\frac{\partial L}{\partial X} = \frac{\partial L}{\partial Y} W^{\top}, \qquad \frac{\partial L}{\partial W} = X^{\top} \frac{\partial L}{\partial Y}, \qquad \frac{\partial L}{\partial b} = \sum_{b,t} \frac{\partial L}{\partial Y_{b,t,:}}"


def linear_bias_forward(x: np.ndarray, weight: np.ndarray, bias: np.ndarray):
    """x (B, T, in), weight (in, out), bias (out,) -> y (B, T, out) = x @ weight + bias."""
    y = x @ weight
    y += bias
    return y, (x, weight)


def linear_bias_backward(dy: np.ndarray, cache):
    """Forward: y = x @ weight + bias.  dx, dweight as linear_backward;  dbias = dy summed over
    its rows (B, T): the bias is added at every position of every sequence, so each adds its
    gradient (keeping one row's is the classic mistake)."""
    dx, dweight = linear_backward(dy, cache)
    return dx, dweight, np.sum(dy.reshape(-1, dy.shape[-1]), axis=0)


def linear_bias_param_backward(dy: np.ndarray, cache):
    """linear_bias_backward's parameter gradients alone: (None, dweight, dbias), the same bits."""
    return None, linear_param_backward(dy, cache)[1], np.sum(dy.reshape(-1, dy.shape[-1]), axis=0)


def linear_bias_input_backward(dy: np.ndarray, cache):
    """linear_bias_backward without the parameters' gradients: (dx, None, None)."""
    return linear_input_backward(dy, cache)[0], None, None


# --------------------------------------------------------------------------- unembed (LM head)

UNEMBED_FORWARD_TEX = r"\mathrm{logits} = n W^{\top}, \quad W \in \mathbb{R}^{V \times C}"
UNEMBED_BACKWARD_TEX = r"\frac{\partial L}{\partial n} = \frac{\partial L}{\partial \mathrm{logits}} W, \qquad \frac{\partial L}{\partial W} \mathrel{+}= \Big(\frac{\partial L}{\partial \mathrm{logits}}\Big)^{\top} n"


VOCAB_BLOCK = 2048  # rows of the (V, C) weight per matmul in unembed_forward


def unembed_blocks(weight: np.ndarray) -> bool:
    """Whether unembed_forward multiplies `weight` a block of rows at a time (a real vocabulary).
    Then a float32 weight in a float64 step is cast block by block inside each product, with the
    bits of the weight cast whole first (and so is its backward's dlogits @ weight), without a
    float64 (V, C) copy: 226 MB for SmolLM2, whose fresh pages cost 0.04 to 1.4 s on a loaded
    machine (the float64 twin and every check's replays made one each)."""
    return weight.shape[0] > VOCAB_BLOCK


def read_uncast(kind: str, slot: int, a) -> bool:
    """Whether a float64 replay (the twin, a check's) hands argument `slot` of an op of this kind to
    it uncast: a real vocabulary's LM head weight (unembed_blocks), not copied whole to float64."""
    return kind == "unembed" and slot == 1 and np.ndim(a) == 2 and unembed_blocks(a)


def unembed_forward(x: np.ndarray, weight: np.ndarray):
    """x (B, T, C), weight (V, C) -> logits (B, T, V) = x @ weight^T.
    With tied embeddings `weight` is tok_embeddings, which then gets a second gradient."""
    if weight.shape[0] <= VOCAB_BLOCK:  # a toy vocabulary: nothing to gain below
        return x @ weight.T, (x, weight)
    columns = x.reshape(-1, x.shape[-1]).T  # (C, B*T)
    # (B, T, V): over 32 MB from 160 positions, a reused buffer (its shape the probabilities' too)
    logits = reusable_empty((*x.shape[:-1], weight.shape[0]), np.result_type(x, weight))
    rows = logits.reshape(columns.shape[1], weight.shape[0])  # (B*T, V), a view
    # weight @ x^T, not x @ weight^T: OpenBLAS packs the (V, C) weight as it lies, ~1.4x faster at
    # 32 rows; block by block so each (block, B*T) result is transposed into logits while in cache
    for start in range(0, weight.shape[0], VOCAB_BLOCK):
        rows[:, start : start + VOCAB_BLOCK] = (weight[start : start + VOCAB_BLOCK] @ columns).T
    return logits, (x, weight)


def unembed_backward(dlogits: np.ndarray, cache):
    """Forward: logits = x @ weight^T.  dx = dlogits @ weight;  dweight = dlogits^T @ x (V, C)."""
    (dx, _) = unembed_input_backward(dlogits, cache)
    return dx, unembed_param_backward(dlogits, cache)[1]


def unembed_param_backward(dlogits: np.ndarray, cache):
    """unembed_backward's weight gradient alone: (None, dweight), the same product (the same bits)."""
    x, weight = cache
    dweight = reusable_empty(weight.shape, np.result_type(dlogits, x))  # (V, C): 113 MB for SmolLM2
    np.matmul(dlogits.reshape(-1, dlogits.shape[-1]).T, x.reshape(-1, x.shape[-1]), out=dweight)
    return None, dweight


def unembed_input_backward(dlogits: np.ndarray, cache):
    """unembed_backward without the weight's gradient: (dx, None) (see linear_input_backward)."""
    return dlogits @ cache[1], None


# --------------------------------------------------------------------------- residual add

RESIDUAL_FORWARD_TEX = r"\mathrm{out} = \mathrm{skip} + \mathrm{branch}"
RESIDUAL_BACKWARD_TEX = r"\frac{\partial L}{\partial \mathrm{skip}} \mathrel{+}= \frac{\partial L}{\partial \mathrm{out}}, \qquad \frac{\partial L}{\partial \mathrm{branch}} = \frac{\partial L}{\partial \mathrm{out}}"


def residual_forward(x: np.ndarray, branch: np.ndarray):
    """x, branch (B, T, C) -> h = x + branch."""
    return x + branch, None


def residual_backward(dh: np.ndarray, cache):
    """Forward: h = x + branch. The gradient is copied unchanged to both summands; x also
    receives its branch's contribution later, so the tape *adds* into dx."""
    return dh, dh


# --------------------------------------------------------------------------- SwiGLU

SWIGLU_FORWARD_TEX = r"s = \mathrm{silu}(a) \odot u, \quad \mathrm{silu}(a) = a\,\sigma(a), \quad a = n W_1,\ u = n W_3"
SWIGLU_BACKWARD_TEX = r"\frac{\partial L}{\partial a} = \frac{\partial L}{\partial s} \odot u \odot \sigma(a)\big(1 + a(1-\sigma(a))\big), \qquad \frac{\partial L}{\partial u} = \frac{\partial L}{\partial s} \odot \mathrm{silu}(a)"


def _sigmoid(a: np.ndarray) -> np.ndarray:
    """sigma(a) = (1 + tanh(a/2)) / 2: never overflows, and one transcendental pass in place
    instead of exp, abs and a branch."""
    s = np.multiply(a, a.dtype.type(0.5))
    np.tanh(s, out=s)
    s *= a.dtype.type(0.5)
    s += a.dtype.type(0.5)
    return s


def swiglu_forward(gate: np.ndarray, up: np.ndarray):
    """gate = n @ W1, up = n @ W3, both (B, T, F) -> s (B, T, F) = silu(gate) * up."""
    sig = _sigmoid(gate)
    silu = gate * sig
    return silu * up, (gate, up, sig, silu)


def swiglu_backward(ds: np.ndarray, cache):
    """Forward: s = silu(gate) * up.
    dgate = ds * up * silu'(gate), silu'(a) = sigma(a) * (1 + a * (1 - sigma(a)));  dup = ds * silu(gate)."""
    gate, up, sig, silu = cache
    one = sig.dtype.type(1)
    dsilu = np.subtract(one, sig)  # (B, T, F), built in place: sig * (1 + gate * (1 - sig))
    dsilu *= gate
    dsilu += one
    dsilu *= sig
    dgate = np.multiply(ds, up)
    dgate *= dsilu
    return dgate, ds * silu
