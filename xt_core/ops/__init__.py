"""Every op of the step as a forward/backward pair, plus its math as LaTeX.

`forward(*inputs, **attrs) -> (out, cache)`; `backward(dout, cache) -> tuple` with one
gradient per input (None for integer inputs such as token ids). Backward functions
return the *contribution* of this op to each input's gradient; the tape adds the
contributions up (residuals, tied embeddings).
"""

from xt_core.ops.registry import OPS, Op

__all__ = ["OPS", "Op"]
