"""GELU, GPT-2's feed-forward activation, in its two forms: the tanh approximation GPT-2 was
trained with (transformers' `gelu_new`, `gelu_pytorch_tanh`; kind "gelu_tanh") and the exact
x * Phi(x) with the Gaussian's erf (nanoGPT's `nn.GELU()`; kind "gelu"). They differ by up to
~5e-4 near |x| = 2: a model trained with one is a different model under the other.

Shapes: a (B, T, F) -> g (B, T, F), F = ffn_hidden; elementwise, so the backward is the
forward's derivative times the arriving gradient.
"""

from __future__ import annotations

import math

import numpy as np

# --------------------------------------------------------------------------- tanh approximation (GPT-2)

GELU_TANH_FORWARD_TEX = (
    r"g = \tfrac{1}{2}\,a\,\big(1 + \tanh u\big), \quad u = \sqrt{2/\pi}\,\big(a + 0.044715\,a^3\big)"
)
GELU_TANH_BACKWARD_TEX = r"\frac{\partial L}{\partial a} = \frac{\partial L}{\partial g} \odot \Big(\tfrac{1}{2}(1 + \tanh u) + \tfrac{1}{2}\,a\,(1 - \tanh^2 u)\,\sqrt{2/\pi}\,(1 + 3 \cdot 0.044715\,a^2)\Big)"

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_CUBIC = 0.044715


def gelu_tanh_forward(a: np.ndarray):
    """a (B, T, F) -> g = 0.5 a (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3)))."""
    k, c = a.dtype.type(_SQRT_2_OVER_PI), a.dtype.type(_CUBIC)
    tanh_u = np.tanh(k * (a + c * a * a * a))
    return a.dtype.type(0.5) * a * (1 + tanh_u), (a, tanh_u)


def gelu_tanh_backward(dg: np.ndarray, cache):
    """Forward: g = 0.5 a (1 + tanh u), u = sqrt(2/pi) (a + 0.044715 a^3).
    dg/da = 0.5 (1 + tanh u) + 0.5 a (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 a^2):
    the product rule, with tanh' = 1 - tanh^2 and du/da."""
    a, tanh_u = cache
    half, k, c3 = a.dtype.type(0.5), a.dtype.type(_SQRT_2_OVER_PI), a.dtype.type(3 * _CUBIC)
    slope = half * (1 + tanh_u) + half * a * (1 - tanh_u * tanh_u) * k * (1 + c3 * a * a)
    return (dg * slope,)


# --------------------------------------------------------------------------- exact erf form (nanoGPT)

GELU_FORWARD_TEX = r"g = a\,\Phi(a) = \tfrac{1}{2}\,a\,\big(1 + \operatorname{erf}(a/\sqrt{2})\big)"
GELU_BACKWARD_TEX = r"\frac{\partial L}{\partial a} = \frac{\partial L}{\partial g} \odot \big(\Phi(a) + a\,\varphi(a)\big), \quad \varphi(a) = e^{-a^2/2} \big/ \sqrt{2\pi}"

# NumPy has no erf; the C library's (math.erf, correctly rounded in practice) is applied per entry
# in float64: ~0.12 s per million entries, ~70x the tanh form, paid only by exact-GELU models.
_ERF = np.frompyfunc(math.erf, 1, 1)


def _phi_cdf(a: np.ndarray) -> np.ndarray:
    """Phi(a) = (1 + erf(a / sqrt 2)) / 2, the standard normal's CDF, in a's dtype."""
    erf = _ERF(a.astype(np.float64) / math.sqrt(2.0)).astype(np.float64)
    return ((1.0 + erf) * 0.5).astype(a.dtype, copy=False)


def gelu_forward(a: np.ndarray):
    """a (B, T, F) -> g = a Phi(a), Phi the standard normal CDF (exact, via erf)."""
    cdf = _phi_cdf(a)
    return a * cdf, (a, cdf)


def gelu_backward(dg: np.ndarray, cache):
    """Forward: g = a Phi(a).  dg/da = Phi(a) + a phi(a), phi(a) = exp(-a^2/2) / sqrt(2 pi)
    the normal density (Phi' = phi)."""
    a, cdf = cache
    density = np.exp(a * a * a.dtype.type(-0.5)) * a.dtype.type(1.0 / math.sqrt(2.0 * math.pi))
    return (dg * (cdf + a * density),)
