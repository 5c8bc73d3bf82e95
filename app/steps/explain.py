"""Each step's plain-text explanation: what happens and why, with the classic mistakes the
hand-written C++ backward pass this project started from warns about quoted where they apply
(its variable names beside ours: docs/notation.md). Numbers come from the trace
(app.steps.measured), never from the text."""

from __future__ import annotations

import xt_core
from app.steps import measured
from app.steps.titles import about, local_name
from xt_core import names
from xt_core.trace import Record

# The seed's C++ backward pass, named in words where a sentence quotes it.
CPP = "the hand-written C++ backward pass xt started from"

_FORWARD = {
    "embedding": (
        "Each input token id picks one row of the embedding table tok_embeddings E (V×C); that row is the "
        "token's starting vector x in the residual stream. It is a lookup, not arithmetic: positions holding "
        "the same token start with identical vectors, and position only enters later, through RoPE."
    ),
    "rmsnorm": (
        "RMSNorm rescales each position's vector to unit root-mean-square, r = 1/√(mean(x²)+ε), n = r·x ⊙ g, "
        "with a learned gain g per feature. It keeps the scale of what {reader} reads steady however large the "
        "residual stream grows; unlike LayerNorm it does not subtract the mean. {stream}"
    ),
    "linear": (
        "A matrix product Y = X·W with W stored (in, out), the same for every position: it computes {role}. "
        "Each output feature is a weighted sum of the input features of the same position; nothing mixes "
        "positions here."
    ),
    "rope": (
        "RoPE rotates every pair of features (2c, 2c+1) of every head by the angle φ = t·θ^(−2c/hd), where t "
        "is the position, hd = {hd} the head width and θ = {theta} RoPE's base (the model's rope_theta). The "
        "rotated queries and keys are q̃ and k̃. After rotating both queries and keys, the dot product of a query at position i with "
        "a key at position j depends on their contents and on the offset i − j only: that is how attention "
        "learns about order. Values are not rotated."
    ),
    "scores": (
        "Every query is compared with every key by a dot product, S = q̃·k̃ᵀ/√hd (q̃, k̃: the queries and keys "
        "after RoPE), one T×T matrix per head m; the "
        "scale 1/√hd keeps the spread of the scores from growing with the head width (which would saturate the "
        "softmax). Keys in the future (j > i) are set to −∞, the causal mask: a position must not see the "
        "token it is asked to predict. Masked cells are drawn blank. This is the first op where positions "
        "meet: query i is paired with every key j ≤ i.{gqa}"
    ),
    "softmax_attention": (
        "Each row of scores S becomes a probability distribution P over the keys that row may see: subtract "
        "the row's maximum (for numerical safety, it changes nothing), exponentiate, divide by the sum. Masked "
        "keys get exactly 0. Row i says how much position i takes from each position j ≤ i, itself included."
    ),
    "softmax_output": (
        "The logits of each position become a probability distribution p over the V tokens of the vocabulary: "
        "the model's prediction of the next token. Subtracting the row maximum first keeps exp from "
        "overflowing and changes nothing."
    ),
    "attend": (
        "Each head's output at position i is the average of the value vectors of positions 0..i, weighted by "
        "row i of that head's attention probabilities P. The scores paired each query with the keys; here the "
        "values of those positions are mixed into position i. Every op of the layer except these two works on "
        "each position alone.{gqa}"
    ),
    "merge_heads": (
        "The H head outputs, hd features each, are placed side by side into one vector of H·hd features per "
        "position: a pure re-layout, no arithmetic."
    ),
    "residual": (
        "The branch's output is added to the residual stream, not substituted for it: {sum}. The stream "
        "carries the embedding forward plus whatever each sublayer writes into it, which also gives the "
        "gradient a direct path back."
    ),
    "swiglu": (
        "SwiGLU: the gate a = n·W1 goes through silu(a) = a·σ(a) and multiplies the up projection u = n·W3 "
        "feature by feature, s = silu(a) ⊙ u. The gate decides, per position and hidden feature, how much of "
        "u passes."
    ),
    "unembed": (
        "The LM head: the final normalized vector n of each position is compared with every token's row of "
        "{weight}, logits = n·Wᵀ, one score per vocabulary token.{tied}"
    ),
    "token_loss": (
        "The loss of one position is −log of the probability the model gave to the correct next token (the "
        "target): 0 for a certain right answer, large for a confident wrong one. The bars show it per position."
    ),
    "mean": "{loss_sentence}",
}

_BATCH_MEAN_ONCE = (
    "The 1/N of the batch mean is already inside the arriving gradient: {cpp} divides by N once, at the "
    "loss, before any matmul, so every weight gradient below gets the right scale without rescaling."
)
_FAN_OUT = (
    " dW sums over all N positions: the same W is used at every position (it fans out), and each use adds "
    "the outer product of its input row and its output gradient."
)

_BACKWARD = {
    "embedding": (
        "Each position's gradient flows back to the row of the embedding table its token selected. A token "
        "used at several positions receives the sum (np.add.at; fancy-index assignment would keep only the "
        "last one).{tied}"
    ),
    "rmsnorm": (
        "dL/dg = Σ dL/dn ⊙ x̂ over all positions. For the input, dL/dx = r·(dL/dx̂ − x̂·mean(dL/dx̂ ⊙ x̂)): r "
        "depends on x too, which adds the projection term; forgetting it is a classic mistake. The projection "
        "term removes the part of the gradient along x, so dL/dx is perpendicular to x (up to ε): scaling x "
        "does not change x̂, so the loss cannot change along x. {other}"
    ),
    "linear": (
        "dX = dY·Wᵀ passes the gradient to the input, and dW = Xᵀ·dY gives the weight gradient. X comes "
        "first: " + CPP + ' says "dW = X^T @ dY, so X goes first into gemm_tn". Swapped, the product has '
        "shape (out, in) and only fits when the layer is square, where the mistake can hide."
        + _FAN_OUT
        + " "
        + _BATCH_MEAN_ONCE.format(cpp="the C++ pass")
        + "{extra}"
    ),
    "rope": (
        "A rotation is orthogonal, so its backward is the transposed rotation Rᵀ: rotate each pair by the "
        "negative angle (in " + CPP + ', the "transposed rotation" a0·c + a1·s, −a0·s + a1·c, where its a0, '
        "a1 are our ∂L/∂q̃ of the pair, q̃ the rotated query or key, and c, s are cos φ, sin φ). Rotating again by +φ is a classic mistake "
        "that keeps every norm intact and looks plausible; the gradient check catches it."
    ),
    "scores": (
        "dq̃[m,i] = (1/√hd)·Σⱼ dS[m,i,j]·k̃[κ,j], where κ = ⌊m/G⌋ is the kv head query head m reads, and "
        "dk̃[κ,j] = (1/√hd)·Σᵢ dS[m,i,j]·q̃[m,i] summed over every query head m with ⌊m/G⌋ = κ (q̃, k̃ after "
        "RoPE: the next step rotates their gradients back): the scale applies "
        "on the way back too. Masked scores were constants, so no gradient flows through them.{gqa}"
    ),
    "softmax_attention": (
        "dL/dS = J·dL/dP per row, with J = diag(p) − p·pᵀ (p the row of P); J is symmetric, so J and Jᵀ are "
        "the same matrix. Entry by entry dS_j = p_j·(dP_j − Σ_j′ p_j′·dP_j′), j and j′ keys of the row. The "
        "subtracted sum keeps every row of dL/dS summing to zero: Σ_j dS_j = Σ_j p_j·dP_j − (Σ_j p_j)·Σ_j′ "
        "p_j′·dP_j′ = 0 because Σ_j p_j = 1 "
        "(adding a constant to all scores of a row changes nothing).{row_sums} Dropping it is a classic "
        "mistake. Pick a row to see its Jacobian and the chain-rule check."
    ),
    "softmax_output": (
        "dL/dlogits = J·dL/dp per position. Composed with the per-token loss this is the fused rule of "
        + CPP
        + ", dL/dlogits = (p − onehot)/N, shown below with numbers. {output_facts} The C++ pass warns (in "
        'Russian): "a second multiplication by inv must NOT be here: the probabilities are already '
        'normalized". Its inv is 1/Σ_w e^(z_w − max z), where z are the logits; that sum is at least 1 (the '
        "largest logit alone contributes e⁰ = 1), so multiplying by inv a second time would divide every "
        "gradient of a position by it again.{inv_sums}"
    ),
    "attend": (
        "dP = dO·vᵀ gives each attention probability the gradient of how useful its value was; dv = Pᵀ·dO "
        "sends each position's value the gradient of every query that read it (the values of kv head ⌊m/G⌋ "
        "for query head m). dP is dense: a masked entry (j > i), where P is 0, still gets its dO·vᵀ; the "
        "softmax's backward multiplies it by p = 0.{gqa}"
    ),
    "merge_heads": "The gradient of the concatenated vector is cut back into the H heads: a pure re-layout.",
    "residual": (
        "{sum}: along the skip ∂{out_symbol}/∂{skip_symbol} = I (the identity), and ∂{out_symbol}/∂branch = I, "
        "so the skip {skip_symbol} and the branch's output both receive dL/d{out_symbol} unchanged, a copy. "
        "{skip_symbol} is also the branch's input, so in full ∂{out_symbol}/∂{skip_symbol} is I plus the "
        "branch's Jacobian: the branch hands "
        "{skip_symbol} a second share once its own backward has run (through the {norm}), added to the skip's "
        "copy, never substituted for it: residual gradients add. The residual view shows the gradient "
        "arriving along the skip, the part the branch adds, and their sum, the full dL/d{skip_symbol} "
        "({skip} in the recorded names)."
    ),
    "swiglu": (
        "dL/da = dL/ds ⊙ u ⊙ silu′(a) with silu′(a) = σ(a)·(1 + a·(1 − σ(a))), and dL/du = dL/ds ⊙ silu(a): "
        "each factor of the product receives the gradient times the other factor."
    ),
    "unembed": "dn = dlogits·W and dW += dlogitsᵀ·n (V×C)."
    + _FAN_OUT
    + " "
    + _BATCH_MEAN_ONCE.format(cpp=CPP)
    + "{tied}",
    "token_loss": (
        "Only the target's probability receives a gradient: dL/dp_target = −(1/N)/p_target, every other entry "
        "is 0 (the Iverson bracket [v = target] of the formula is 1 for the target, 0 elsewhere). Small "
        "probabilities of the right token give large gradients."
    ),
    "mean": (
        "dL/dℓ = 1/N for every position: the batch mean, applied exactly once, here, before any matmul. The "
        + CPP.removeprefix("the ")
        + ' says: "average over the batch BEFORE multiplying by the matrices: then all the weights below '
        'automatically get the right scale". Dividing again later, or not at all, is a classic mistake.'
    ),
}

_ATTENTION_OUT_BACKWARD = (
    " Here " + CPP + ' warns: "read dx (already holding the FFN contribution), NOT dres" (its dx is our dL/dh, '
    "its dres our dL/dx′, the gradient of the layer's output). The gradient arriving at the attention output "
    "is dL/dh, and h = x + attention feeds both the feed-forward branch and the skip to the layer's output, so "
    "dL/dh holds both; using only dL/dx′ would drop the FFN's part."
)

_SHARED_INPUT = (
    " The normalized input n feeds {names}, so its gradient is the sum of {count} such dX (the C++ pass: {sum}, "
    "its {cpp_n} being our dL/dn{more}); this step adds one of them."
)
# What a linear's backward adds, by (role, block) of the tensor it makes (xt_core.names).
_LINEAR_BACKWARD_EXTRA = {
    ("branch out", "attention"): _ATTENTION_OUT_BACKWARD,
    ("projection", "attention"): _SHARED_INPUT.format(
        names="q, k and v", count="three", sum="dxb = dq·Wqᵀ + dk·Wkᵀ + dv·Wvᵀ", cpp_n="dxb", more=""
    ),
    ("projection", "ffn"): _SHARED_INPUT.format(
        names="the gate and the up projection",
        count="two",
        sum="dx2b = dh1·W1ᵀ + dh3·W3ᵀ",
        cpp_n="dx2b",
        more=", its dh1 and dh3 our dL/da and dL/du",
    ),
}

_TIED = {
    "forward": (
        " With tied embeddings W is tok_embeddings E: the table that turns tokens into vectors also scores them."
    ),
    "unembed": (
        " With tied embeddings W is tok_embeddings E, so E receives two gradient contributions that add: this "
        "one (every row), and the embedding lookup's at the last backward step (only the rows of the input "
        "tokens)."
    ),
    "embedding": (
        " With tied embeddings this table E is also the LM head's weight (logits = n·Eᵀ), so it receives two "
        "gradient contributions that add: this lookup's (only the rows of the input tokens) and the one the "
        "logits step added to every row, dE += dlogitsᵀ·n."
    ),
}

# The stream around each norm: the normalized copy feeds one reader, the stream goes on (or ends).
_STREAM = {
    "attention_norm.out": "The normalized copy n only feeds attention: the residual stream x itself goes around "
    "it, unchanged, to the residual add h = x + attention.",
    "ffn_norm.out": "The normalized copy n only feeds the feed-forward: the residual stream h itself goes around "
    "it, unchanged, to the residual add x′ = h + feed-forward.",
    "norm.out": "The residual stream ends here: its last value reaches the LM head, and so the loss, only "
    "through this norm.",
}
_RESIDUAL = {
    "attention_residual": ("h = x + attention(RMSNorm(x))", "h", "x"),
    "ffn_residual": ("x′ = h + FFN(RMSNorm(h))", "x′", "h"),
}


def _explain_kind(record: Record) -> str:
    if record.kind == "softmax":
        return "softmax_output" if names.is_output_softmax(record.name) else "softmax_attention"
    return record.kind


def _gqa(record: Record, cfg: xt_core.Config) -> str:
    if cfg.n_kv_head >= cfg.n_head:
        return ""
    shared = "key" if record.kind == "scores" else "value"
    base = (
        f" With grouped-query attention (GQA) {cfg.kv_group} query heads share each key/value head: query head m "
        f"reads kv head ⌊m/{cfg.kv_group}⌋."
    )
    if record.phase == "backward":
        return base + f" So a {shared} receives the sum of their gradients."
    return base


def _tied(record: Record, cfg: xt_core.Config) -> str:
    if not cfg.tie_embeddings:
        return ""
    return _TIED["forward"] if record.phase == "forward" else _TIED.get(record.kind, "")


# The norm's input in the notation (its symbol, in words), the residual add whose skip it also
# feeds, that add's output.
_NORM_INPUT = {
    "attention_norm.out": ("x", "the residual stream x entering the layer", "h = x + attention(RMSNorm(x))", "h"),
    "ffn_norm.out": (
        "h",
        "h, the residual stream after attention (the x of the formulas above)",
        "x′ = h + FFN(RMSNorm(h))",
        "x′",
    ),
}


def _norm_other(name: str, recorded_input: str) -> str:
    if name == "norm.out":
        return "The last residual stream reaches the loss only through this norm: this is its whole gradient."
    symbol, stream, add, out = _NORM_INPUT[name]
    return (
        f"Here the norm's input is {stream} ({recorded_input} in the recorded names). This is one of two "
        f"contributions to dL/d{symbol}: the other comes along the skip of the residual add {add}, which hands "
        f"{symbol} the gradient dL/d{out} unchanged, a gradient that itself came back through every later layer. "
        f"The two add ({CPP} adds the norm's contribution into its running gradient dx with +=)."
    )


def _context(record: Record, trace: xt_core.Trace, judge: bool) -> dict:
    cfg, name = trace.cfg, local_name(record.name)
    skip, branch = (record.inputs + ("", ""))[:2]
    recorded = names.lookup(record.name)
    role, block = (recorded.role, recorded.block) if recorded else ("", "")
    residual_sum, out_symbol, skip_symbol = _RESIDUAL.get(name, ("out = skip + branch", "out", "skip"))
    norm = "attention_norm" if name == "attention_residual" else "ffn_norm"
    return {
        "role": about(record.name) if role in ("projection", "branch out") else "a linear map",
        "reader": about(record.name) if role == "norm out" else "the LM head",
        "hd": cfg.head_dim,
        "theta": f"{cfg.rope_theta:g}",
        "stream": _STREAM.get(name, ""),
        "other": _norm_other(name, record.inputs[0]) if record.kind == "rmsnorm" else "",
        "gqa": _gqa(record, cfg),
        "tied": _tied(record, cfg),
        "weight": "tok_embeddings (tied)" if cfg.tie_embeddings else "the output matrix",
        "sum": residual_sum,
        "out_symbol": out_symbol,
        "skip_symbol": skip_symbol,
        "skip": skip,
        "branch": branch,
        "norm": f"{norm} RMSNorm",
        "extra": _LINEAR_BACKWARD_EXTRA.get((role, block), ""),
        **measured.sentences(_explain_kind(record), record, trace, judge),
    }


def explanation(record: Record, trace: xt_core.Trace, judge: bool = True) -> str:
    """One paragraph of plain text: what this step does and why, its numbers from `trace`; judge
    False (a sealed quiz's step): its numbers, never a verdict on them."""
    table = _BACKWARD if record.phase == "backward" else _FORWARD
    template = table.get(_explain_kind(record))
    if template is None:
        return f"{record.kind} ({record.phase})."
    return template.format(**_context(record, trace, judge))


def induction_note(ctx, record: Record) -> str:
    """On a checkpoint whose training measured an induction head (xt_core.lab.probes: the head with the
    best score on repeated random tokens), its layer's attention-probability step names it."""
    found = ctx.measured()
    if record.phase != "forward" or "induction_layer" not in found:
        return ""
    layer, head = found["induction_layer"], found["induction_head"]
    if record.name != names.entry("layers.{L}.attention.probs").name(layer):
        return ""
    return (
        f" Layer {layer}, head {head}: induction head — it attends to the token after an earlier occurrence "
        f"of the current one (measured on repeated random letters: {found['induction_score']:.2f} of its "
        f"attention lands there). {measured.repeat_sentence(ctx.trace.tokens, ctx.trace[record.name], head)}"
    )
