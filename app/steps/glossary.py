"""Every term a first-year student may not know, defined once. The walk page carries this table
(templates/walk.html, `xt-glossary`) and marks the first use of each term on a step
(static/js/lib/glossary.js): the term becomes a button whose definition shows on hover, keyboard
focus and tap. `forms` are the spellings the page looks for, in the order tried."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from app.steps.explain import CPP


@dataclass(frozen=True)
class Term:
    term: str
    forms: tuple[str, ...]
    definition: str


TERMS = (
    Term(
        "C++ backward pass",
        (CPP, "the C++ pass"),
        "The file xt started from: a hand-written C++ backward pass of this same architecture, comments in "
        "Russian, which names classic mistakes on purpose. Its names, ours in brackets: x_in (x), xb (n before "
        "attention), att (P), attout (the concatenated heads), proj (the attention output), x_mid or x2 (h), "
        "x2b (n before the feed-forward), h1 (a), h3 (u), ha (s), fo (the feed-forward output), x_out (x′), "
        "xf (the final norm's output), wte (tok_embeddings E); dres = dL/dx′, dx its running gradient of the "
        "residual stream, dxb and dx2b = dL/dn, dh1 = dL/da, dh3 = dL/du, inv = 1/Σ e^(z − max z). "
        "docs/notation.md lists them all.",
    ),
    Term(
        "Jacobian",
        ("Jacobian",),
        "The matrix of every partial derivative of a function's outputs by its inputs, J[i, j] = ∂outᵢ/∂inⱼ. "
        "A backward step multiplies the arriving gradient by its transpose, dL/din = Jᵀ·dL/dout (a linear "
        "layer's backward is dY·Wᵀ). A softmax's is J = diag(p) − p·pᵀ, which is symmetric: there J = Jᵀ, so "
        "J·dL/dp is the same product.",
    ),
    Term("onehot", ("onehot",), "A vector of zeros with a single 1, at the index of the target token."),
    Term("σ", ("σ(a)",), "The logistic sigmoid σ(a) = 1/(1 + e^(−a)): a number between 0 and 1."),
    Term(
        "RoPE",
        ("RoPE",),
        "Rotary position embedding: each pair of query and key features is rotated by an angle proportional to "
        "the position, so a query·key product depends on how far apart the two positions are.",
    ),
    Term(
        "SwiGLU",
        ("SwiGLU",),
        "The feed-forward's gated activation: silu(a) ⊙ u, one projection (the gate a, through silu) scaling "
        "another (the up projection u) feature by feature.",
    ),
    Term(
        "GQA",
        ("grouped-query attention", "GQA"),
        "Grouped-query attention: G query heads share one key/value head, so query head m reads kv head ⌊m/G⌋ "
        "and the model stores fewer keys and values.",
    ),
    Term(
        "LM head",
        ("LM head",),
        "The last matrix product of a language model: it turns each position's final vector into one score "
        "(logit) per vocabulary token.",
    ),
    Term(
        "residual stream",
        ("residual stream",),
        "The running vector of each position (x, then h, then x′ in each layer) that every sublayer reads a "
        "normalized copy of and adds its output into.",
    ),
    Term(
        "Iverson bracket",
        ("Iverson bracket",),
        "[condition]: 1 when the condition holds, 0 otherwise; [v = target] picks the target's entry.",
    ),
    Term(
        "projection term",
        ("projection term",),
        "In RMSNorm's backward, −x̂·mean(dL/dx̂ ⊙ x̂): it removes the part of the gradient along x, because "
        "the factor r = 1/rms(x) depends on x too.",
    ),
    Term(
        "fan-out",
        ("fans out",),
        "One tensor used in several places (a weight at every position, a vector read by q, k and v): its "
        "gradient is the sum of what each use sends back.",
    ),
    Term(
        "gemm_tn",
        ("gemm_tn",),
        "The C++ pass's matrix product with its first argument transposed: gemm_tn(A, B, C) adds Aᵀ·B into C.",
    ),
    Term(
        "np.add.at",
        ("np.add.at",),
        "NumPy's unbuffered add: np.add.at(table, ids, rows) adds every row into table[id], even when an id repeats.",
    ),
    Term(
        "fancy-index assignment",
        ("fancy-index assignment",),
        "table[ids] += rows in NumPy: with a repeated id only one of its rows lands, the others are lost.",
    ),
    Term("inv", ("inv",), "In the C++ pass, 1/Σ_w e^(z_w − max z): the softmax's normalizer, applied once."),
    Term(
        "dres",
        ("dres",),
        "In the C++ pass, the gradient of a layer's output, dL/dx′; its dx is the running gradient (dL/dh in "
        "the attention half).",
    ),
    Term(
        "float64 twin",
        ("float64 twin",),
        "The same step (same weights, tokens and planted bug) computed in float64: a float32 trace's gradients "
        "are checked on it, so float32 round-off does not read as a wrong gradient.",
    ),
    Term(
        "first-order prediction",
        ("first-order prediction",),
        "What the gradient alone promises: moving by −η·g lowers the loss by η‖g‖², the tangent line of the "
        "loss at η = 0.",
    ),
    Term(
        "curvature",
        ("curvature",),
        "How fast the slope itself changes (the second derivative): it bends the loss away from the "
        "first-order prediction for larger steps.",
    ),
    Term(
        "Richardson extrapolation",
        ("Richardson extrapolation", "extrapolated"),
        "Combining differences taken at several step sizes so their leading error cancels: a sharper "
        "derivative than one central difference where the loss curves strongly.",
    ),
    Term(
        "bias correction",
        ("bias-corrected", "bias correction"),
        "Adam's m and v start at 0, so early on they underestimate the gradient's mean and mean square; "
        "dividing by 1 − β₁ᵗ and 1 − β₂ᵗ undoes that.",
    ),
    Term(
        "decoupled weight decay",
        ("decoupled",),
        "AdamW shrinks the weights by η·λ·W apart from the gradient, instead of adding λW to g (L2), which "
        "Adam would rescale entry by entry.",
    ),
    Term(
        "central difference",
        ("central difference",),
        "(L(X + δ·u) − L(X − δ·u)) / 2δ, δ a small step: the slope of the loss along u from two nearby points, its error of order δ².",
    ),
)


def table() -> list[dict]:
    """The glossary as the page carries it (JSON)."""
    return [{**asdict(t), "forms": list(t.forms)} for t in TERMS]
