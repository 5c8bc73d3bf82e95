"""Causal grouped-query attention, split into the steps a learner walks through:
RoPE, scores, softmax, attend (probs @ v), merge heads.

Dimensions: B sequences, T positions, H query heads, K = n_kv_head key/value heads,
G = H / K query heads per kv head, hd = head width. Query head h reads kv head h // G,
so heads are laid out as (K, G) and a kv head is shared by G consecutive query heads:
its gradient is the *sum* over those G heads.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from xt_core.memory import reusable_empty

# --------------------------------------------------------------------------- RoPE

# q is the pair of a head's query before RoPE, q̃ after (keys alike: app.steps.formulas has their own)
ROPE_FORWARD_TEX = r"\begin{pmatrix} \tilde{q}_{2c} \\ \tilde{q}_{2c+1} \end{pmatrix} = \begin{pmatrix} \cos\phi_{t,c} & -\sin\phi_{t,c} \\ \sin\phi_{t,c} & \cos\phi_{t,c} \end{pmatrix} \begin{pmatrix} q_{2c} \\ q_{2c+1} \end{pmatrix}, \quad \phi_{t,c} = t\,\theta^{-2c/d_h} \ (\text{keys alike})"
ROPE_BACKWARD_TEX = r"\begin{pmatrix} \partial q_{2c} \\ \partial q_{2c+1} \end{pmatrix} = \begin{pmatrix} \cos\phi_{t,c} & \sin\phi_{t,c} \\ -\sin\phi_{t,c} & \cos\phi_{t,c} \end{pmatrix} \begin{pmatrix} \partial \tilde{q}_{2c} \\ \partial \tilde{q}_{2c+1} \end{pmatrix} \quad (R^{\top}: \text{rotate back})"


@lru_cache(maxsize=64)
def rope_tables(T: int, hd: int, theta: float, dtype_str: str) -> tuple[np.ndarray, np.ndarray]:
    """cos, sin of shape (T, 1, hd/2): angle[t, i] = t * theta^(-2i/hd), computed in float64
    once, then cast, so float32 and float64 runs rotate by the same angles."""
    inv_freq = theta ** (-np.arange(0, hd, 2, dtype=np.float64) / hd)
    angle = np.arange(T, dtype=np.float64)[:, None] * inv_freq[None, :]
    cos = np.cos(angle)[:, None, :].astype(dtype_str)
    sin = np.sin(angle)[:, None, :].astype(dtype_str)
    cos.flags.writeable = False
    sin.flags.writeable = False
    return cos, sin


@lru_cache(maxsize=64)
def _rotation_tables(T: int, hd: int, theta: float, dtype_str: str) -> tuple[np.ndarray, np.ndarray]:
    """(T, 1, hd/2) complex cos + i sin and its conjugate, from the same cast cos and sin."""
    cos, sin = rope_tables(T, hd, theta, dtype_str)
    rot = np.empty(cos.shape, dtype=np.result_type(cos.dtype, np.complex64))
    rot.real, rot.imag = cos, sin
    conj = rot.conj()
    rot.flags.writeable = False
    conj.flags.writeable = False
    return rot, conj


def _rotate(x: np.ndarray, n_heads: int, theta: float, transpose: bool) -> np.ndarray:
    """A pair (x_2i, x_2i+1) is the complex number x_2i + i x_2i+1, and rotating it by phi is
    multiplying by cos phi + i sin phi: (x_2i cos - x_2i+1 sin) + i (x_2i sin + x_2i+1 cos).
    So the whole rotation is one complex multiply over a view of x (one pass, no temporaries)."""
    B, T, width = x.shape
    hd = width // n_heads
    rot, conj = _rotation_tables(T, hd, float(theta), x.dtype.str)
    pairs = np.ascontiguousarray(x).view(rot.dtype).reshape(B, T, n_heads, hd // 2)
    out = pairs * (conj if transpose else rot)  # (B, T, n_heads, hd/2) complex
    return out.view(x.dtype).reshape(B, T, width)


def rope_forward(x: np.ndarray, n_heads: int, theta: float):
    """x (B, T, n_heads*hd) -> same shape, each pair (2i, 2i+1) of each head rotated by t*theta^(-2i/hd)."""
    return _rotate(x, n_heads, theta, transpose=False), (n_heads, theta)


def rope_backward(dy: np.ndarray, cache):
    """Forward: y = R(t) x per pair. R is orthogonal, so dx = R(t)^T dy: rotate by -angle.
    Applying R again instead of R^T is a classic mistake (the bug lab has it)."""
    n_heads, theta = cache
    return (_rotate(dy, n_heads, theta, transpose=True),)


# --------------------------------------------------------------------------- scores

SCORES_FORWARD_TEX = r"S_{m,i,j} = \frac{\tilde{q}_{m,i} \cdot \tilde{k}_{\lfloor m/G \rfloor,j}}{\sqrt{d_h}} \ (j \le i), \qquad S_{m,i,j} = -\infty \ (j > i)"
SCORES_BACKWARD_TEX = r"\frac{\partial L}{\partial \tilde{q}_{m,i}} = \frac{1}{\sqrt{d_h}} \sum_{j \le i} \frac{\partial L}{\partial S_{m,i,j}} \tilde{k}_{\lfloor m/G \rfloor,j}, \qquad \frac{\partial L}{\partial \tilde{k}_{\kappa,j}} = \frac{1}{\sqrt{d_h}} \sum_{m:\,\lfloor m/G \rfloor = \kappa} \sum_{i \ge j} \frac{\partial L}{\partial S_{m,i,j}} \tilde{q}_{m,i}"


def split_queries(q: np.ndarray, n_head: int, n_kv_head: int) -> np.ndarray:
    """(B, T, H*hd) -> (B, K, G, T, hd)."""
    B, T, width = q.shape
    hd = width // n_head
    return q.reshape(B, T, n_kv_head, n_head // n_kv_head, hd).transpose(0, 2, 3, 1, 4)


def split_kv(k: np.ndarray, n_kv_head: int) -> np.ndarray:
    """(B, T, K*hd) -> (B, K, 1, T, hd): the 1 broadcasts over the G query heads of a group."""
    B, T, width = k.shape
    return k.reshape(B, T, n_kv_head, 1, width // n_kv_head).transpose(0, 2, 3, 1, 4)


def _merge_queries(x: np.ndarray) -> np.ndarray:
    """(B, K, G, T, hd) -> (B, T, K*G*hd)."""
    B, K, G, T, hd = x.shape
    return x.transpose(0, 3, 1, 2, 4).reshape(B, T, K * G * hd)


def merge_kv(x: np.ndarray) -> np.ndarray:
    """(B, K, G, T, hd) summed over G -> (B, T, K*hd): the GQA gradient sum."""
    summed = x.sum(axis=2) if x.shape[2] > 1 else x[:, :, 0]
    B, K, T, hd = summed.shape
    return summed.transpose(0, 2, 1, 3).reshape(B, T, K * hd)


@lru_cache(maxsize=64)
def causal_mask(T: int) -> np.ndarray:
    """(T, T) bool, True where key j is in the future of query i (j > i)."""
    mask = np.triu(np.ones((T, T), dtype=bool), k=1)
    mask.flags.writeable = False
    return mask


def scores_forward(q: np.ndarray, k: np.ndarray, n_head: int, n_kv_head: int):
    """q (B, T, H*hd), k (B, T, K*hd) -> scores (B, H, T, T), scaled by 1/sqrt(hd), future masked to -inf."""
    B, T, width = q.shape
    hd = width // n_head
    scale = q.dtype.type(1.0 / np.sqrt(hd))
    qh = split_queries(q, n_head, n_kv_head)
    kh = split_kv(k, n_kv_head)
    scores = (qh @ kh.swapaxes(-1, -2)).reshape(B, n_head, T, T)
    scores *= scale
    # copyto with a broadcast mask: one pass (boolean-index assignment gathers indices first, ~4x slower)
    np.copyto(scores, -np.inf, where=causal_mask(T))
    return scores, (qh, kh, scale, n_head)


def scores_backward(dscores: np.ndarray, cache):
    """Forward: S = (q @ k^T) * scale, masked. Masked entries are constants, so their
    incoming gradient is dropped.  dq = dS @ k * scale;  dk = sum over the group of dS^T @ q * scale."""
    qh, kh, scale, n_head = cache
    B, K, G, T, hd = qh.shape
    ds = dscores * scale
    np.copyto(ds, 0, where=causal_mask(T))
    ds = ds.reshape(B, K, G, T, T)
    dq = _merge_queries(ds @ kh)
    dk = merge_kv(ds.swapaxes(-1, -2) @ qh)
    return dq, dk


# --------------------------------------------------------------------------- softmax

SOFTMAX_FORWARD_TEX = r"p_{j} = \frac{e^{z_j - \max_{j'} z_{j'}}}{\sum_{j'} e^{z_{j'} - \max_{j'} z_{j'}}}"
SOFTMAX_BACKWARD_TEX = r"\frac{\partial L}{\partial z} = J \frac{\partial L}{\partial p}, \quad J = \mathrm{diag}(p) - p p^{\top} = J^{\top} \quad\Longrightarrow\quad \frac{\partial L}{\partial z_j} = p_j\Big(\frac{\partial L}{\partial p_j} - \sum_{j'} p_{j'} \frac{\partial L}{\partial p_{j'}}\Big)"


def softmax_forward(x: np.ndarray):
    """x (..., N) -> p (..., N), normalized over the last axis; -inf entries get p = 0."""
    # a vocabulary's (B, T, V) probabilities are over 32 MB: a reused buffer, not fresh pages (50 MB
    # of SmolLM2's at 256 positions faulted in cost more than the exp: xt_core.memory)
    e = np.subtract(x, x.max(axis=-1, keepdims=True), out=reusable_empty(x.shape, x.dtype))
    np.exp(e, out=e)
    row_sum = e.sum(axis=-1, keepdims=True)
    e /= row_sum
    return e, (e, row_sum)


def softmax_backward(dp: np.ndarray, cache):
    """Forward: p = softmax(x). Per row, dx = J dp with J = diag(p) - p p^T (symmetric),
    i.e. dx = p * (dp - sum(p * dp)); dropping the `- sum` term is a classic mistake.
    p is already normalized: dividing by the row sum again is another (the seed warns)."""
    p, _ = cache
    dx = reusable_empty(np.broadcast_shapes(p.shape, dp.shape), np.result_type(p, dp))  # (..., N), as forward's
    np.multiply(p, dp, out=dx)  # reused for the result: one buffer instead of three
    row = np.sum(dx, axis=-1, keepdims=True)  # (..., 1) = sum(p * dp)
    np.subtract(dp, row, out=dx)
    dx *= p
    return (dx,)


# --------------------------------------------------------------------------- attend

ATTEND_FORWARD_TEX = r"o_{m,i} = \sum_{j} P_{m,i,j}\, v_{\lfloor m/G \rfloor, j} \ \ (P_{m,i,j} = 0 \text{ for } j > i)"
ATTEND_BACKWARD_TEX = r"\frac{\partial L}{\partial P_{m,i,j}} = \frac{\partial L}{\partial o_{m,i}} \cdot v_{\lfloor m/G \rfloor,j} \ (\text{every } j, \text{ also } j > i), \qquad \frac{\partial L}{\partial v_{\kappa,j}} = \sum_{m:\,\lfloor m/G \rfloor = \kappa} \sum_{i \ge j} P_{m,i,j} \frac{\partial L}{\partial o_{m,i}}"


def attend_forward(probs: np.ndarray, v: np.ndarray, n_kv_head: int):
    """probs (B, H, T, T), v (B, T, K*hd) -> heads (B, H, T, hd) = probs @ v per head."""
    B, H, T, _ = probs.shape
    ph = probs.reshape(B, n_kv_head, H // n_kv_head, T, T)
    vh = split_kv(v, n_kv_head)
    out = ph @ vh
    return out.reshape(B, H, T, out.shape[-1]), (ph, vh)


def attend_backward(dheads: np.ndarray, cache):
    """Forward: o = P @ v.  dP = do @ v^T;  dv = sum over the group of P^T @ do."""
    ph, vh = cache
    B, K, G, T, _ = ph.shape
    do = dheads.reshape(B, K, G, T, dheads.shape[-1])
    dprobs = (do @ vh.swapaxes(-1, -2)).reshape(B, K * G, T, T)
    dv = merge_kv(ph.swapaxes(-1, -2) @ do)
    return dprobs, dv


# --------------------------------------------------------------------------- merge heads

MERGE_HEADS_FORWARD_TEX = r"o_{t} = \big[\,o_{0,t} \,\|\, o_{1,t} \,\|\, \cdots \,\|\, o_{H-1,t}\,\big]"
MERGE_HEADS_BACKWARD_TEX = (
    r"\frac{\partial L}{\partial o_{m,t}} = \Big(\frac{\partial L}{\partial o_t}\Big)_{m d_h : (m+1) d_h}"
)


def merge_heads_forward(heads: np.ndarray):
    """heads (B, H, T, hd) -> y (B, T, H*hd), heads side by side."""
    B, H, T, hd = heads.shape
    return heads.transpose(0, 2, 1, 3).reshape(B, T, H * hd), H


def merge_heads_backward(dy: np.ndarray, n_head: int):
    """Forward: y = concat over heads. Backward slices it back: a pure re-layout."""
    B, T, width = dy.shape
    return (dy.reshape(B, T, n_head, width // n_head).transpose(0, 2, 1, 3),)
