"""Each step's plain-text explanation: what happens and why, with the classic mistakes the C++
reference warns about quoted where they apply."""

from __future__ import annotations

import math

import xt_core
from xt_core import names
from xt_core.trace import Record

_FORWARD = {
    "embedding": (
        "Each input token id picks one row of the embedding table tok_embeddings (V×C); that row is the "
        "token's starting vector in the residual stream. It is a lookup, not arithmetic: positions holding "
        "the same token start with identical vectors, and position only enters later, through RoPE."
    ),
    "rmsnorm": (
        "RMSNorm rescales each position's vector to unit root-mean-square, r = 1/√(mean(x²)+ε), then "
        "multiplies by a learned gain g per feature. It keeps the scale of what {reader} reads steady however "
        "large the residual stream grows; unlike LayerNorm it does not subtract the mean. The normalized copy "
        "only feeds {reader}: the residual stream itself passes on unchanged."
    ),
    "linear": (
        "A matrix product Y = X·W with W stored (in, out), the same for every position: it computes {role}. "
        "Each output feature is a weighted sum of the input features of the same position; nothing mixes "
        "positions here."
    ),
    "rope": (
        "RoPE rotates every pair of features (2i, 2i+1) of every head by the angle t·θ^(−2i/hd), where t is "
        "the position. After rotating both queries and keys, the dot product of a query at i with a key at j "
        "depends on their contents and on the offset i − j only: that is how attention learns about order. "
        "Values are not rotated."
    ),
    "scores": (
        "Every query is compared with every key by a dot product, scaled by 1/√hd so the spread of the scores "
        "does not grow with the head width (which would saturate the softmax). Keys in the future (j > i) are "
        "set to −∞, the causal mask: a position must not see the token it is asked to predict. Masked cells "
        "are drawn blank.{gqa}"
    ),
    "softmax_attention": (
        "Each row of scores becomes a probability distribution over the keys that row may see: subtract the "
        "row's maximum (for numerical safety, it changes nothing), exponentiate, divide by the sum. Masked "
        "keys get exactly 0. Row i says how much position i takes from each earlier position."
    ),
    "softmax_output": (
        "The logits of each position become a probability distribution over the V tokens of the vocabulary: "
        "the model's prediction of the next token. Subtracting the row maximum first keeps exp from "
        "overflowing and changes nothing."
    ),
    "attend": (
        "Each head's output at position i is the average of the value vectors of positions 0..i, weighted by "
        "row i of that head's attention probabilities. This is the only op that moves information between "
        "positions.{gqa}"
    ),
    "merge_heads": (
        "The H head outputs, hd features each, are placed side by side into one vector of H·hd features per "
        "position: a pure re-layout, no arithmetic."
    ),
    "residual": (
        "The branch's output is added to the residual stream, not substituted for it: {out} = {skip} + "
        "{branch}. The stream carries the embedding forward plus whatever each sublayer writes into it, which "
        "also gives the gradient a direct path back."
    ),
    "swiglu": (
        "SwiGLU: the gate a = n·W1 goes through silu(a) = a·σ(a) and multiplies the up projection u = n·W3 "
        "feature by feature. The gate decides, per position and hidden feature, how much of u passes."
    ),
    "unembed": (
        "The final normalized vector of each position is compared with every token's row of {weight}: "
        "logits = X·Wᵀ, one score per vocabulary token.{tied}"
    ),
    "token_loss": (
        "The loss of one position is −log of the probability the model gave to the correct next token (the "
        "target): 0 for a certain right answer, large for a confident wrong one. The bars show it per position."
    ),
    "mean": (
        "The training loss is the mean of the per-position losses over all N = B·T positions. A random model "
        "scores about log V = {log_v:.2f}: the loss of guessing uniformly."
    ),
}

_BATCH_MEAN_ONCE = (
    "The 1/N of the batch mean is already inside the arriving gradient: the C++ reference divides by N once, at the "
    "loss, before any matmul, so every weight gradient below gets the right scale without rescaling."
)

_BACKWARD = {
    "embedding": (
        "Each position's gradient flows back to the row of the embedding table its token selected. A token "
        "used at several positions receives the sum (np.add.at; fancy-index assignment would keep only the "
        "last one).{tied}"
    ),
    "rmsnorm": (
        "dL/dg = Σ dL/dy ⊙ x̂ over all positions. For the input, dL/dx = r·(dL/dx̂ − x̂·mean(dL/dx̂ ⊙ x̂)): r "
        "depends on x too, which adds the projection term; forgetting it is a classic mistake. {other}"
    ),
    "linear": (
        "dX = dY·Wᵀ passes the gradient to the input, and dW = Xᵀ·dY gives the weight gradient. X comes "
        'first: the C++ reference\'s comment says "dW = X^T @ dY, so X goes first into gemm_tn". Swapped, the '
        "product has shape (out, in) and only fits when the layer is square, where the mistake can hide. "
        + _BATCH_MEAN_ONCE
        + "{extra}"
    ),
    "rope": (
        "A rotation is orthogonal, so its backward is the transposed rotation Rᵀ: rotate each pair by the "
        'negative angle (the C++ reference\'s "transposed rotation": a0·c + a1·s, −a0·s + a1·c). Rotating again by '
        "+angle is a classic mistake that keeps every norm intact and looks plausible; the gradient check "
        "catches it."
    ),
    "scores": (
        "dq_i = (1/√hd)·Σ_j dS_ij·k_j and dk_j = (1/√hd)·Σ_i dS_ij·q_i: the scale applies on the way back "
        "too. Masked scores were constants, so no gradient flows through them.{gqa}"
    ),
    "softmax_attention": (
        "dL/ds = J·dL/dp with J = diag(p) − p·pᵀ per row, i.e. ds_j = p_j·(dp_j − Σ_k p_k·dp_k). The "
        "subtracted sum is what keeps every row of dL/ds summing to zero (adding a constant to all scores "
        "changes nothing); dropping it is a classic mistake. Pick a row to see its Jacobian and the "
        "chain-rule check."
    ),
    "softmax_output": (
        "dL/dlogits = J·dL/dp per position. Composed with the per-token loss this is the C++ reference's fused rule "
        'dL/dlogits = (p − onehot)/N, shown below with numbers. The C++ reference warns: "a second multiplication by '
        'inv must NOT be here: the probabilities are already normalized" — normalizing twice would shrink '
        "every gradient by the softmax's sum."
    ),
    "attend": (
        "dP = dO·vᵀ gives each attention probability the gradient of how useful its value was; dv = Pᵀ·dO "
        "sends each position's value the gradient of every query that read it.{gqa}"
    ),
    "merge_heads": "The gradient of the concatenated vector is cut back into the H heads: a pure re-layout.",
    "residual": (
        "h = x + f(x): both summands receive dL/dh unchanged. The skip's share is added to, never substituted "
        "for, the gradient {skip} receives through the branch: residual gradients add. The residual view shows "
        "the gradient arriving along the skip, the part the branch adds once its own backward has run (through "
        "{norm}), and their sum, the full gradient of {skip}."
    ),
    "swiglu": (
        "dL/da = dL/ds ⊙ u ⊙ silu′(a) with silu′(a) = σ(a)·(1 + a·(1 − σ(a))), and dL/du = dL/ds ⊙ silu(a): "
        "each factor of the product receives the gradient times the other factor."
    ),
    "unembed": ("dX = dlogits·W and dW += dlogitsᵀ·X (V×C). " + _BATCH_MEAN_ONCE + "{tied}"),
    "token_loss": (
        "Only the target's probability receives a gradient: dL/dp_target = −(1/N)/p_target, every other entry "
        "is 0. Small probabilities of the right token give large gradients."
    ),
    "mean": (
        "dL/dℓ = 1/N for every position: the batch mean, applied exactly once, here, before any matmul. The C++ "
        'reference: "average over the batch BEFORE multiplying by the matrices: then all the weights below '
        'automatically get the right scale". Dividing again later, or not at all, is a classic mistake.'
    ),
}

_ATTENTION_OUT_BACKWARD = (
    ' Here the C++ reference warns: "read dx (already holding the FFN contribution), NOT dres". The gradient arriving '
    "at the attention output is dL/dh, and h = x + attention feeds both the feed-forward branch and the skip to "
    "the layer's output, so dL/dh holds both; using only the layer output's gradient would drop the FFN's part."
)


_SHARED_INPUT = (
    " The normalized input feeds {names}, so its gradient is the sum of {count} such dX (the C++ reference: {sum}); this "
    "step adds one of them."
)
_QKV_INPUT = _SHARED_INPUT.format(names="q, k and v", count="three", sum="dxb = dq·Wqᵀ + dk·Wkᵀ + dv·Wvᵀ")
_GATE_UP_INPUT = _SHARED_INPUT.format(
    names="the gate and the up projection", count="two", sum="dx2b = dh1·W1ᵀ + dh3·W3ᵀ"
)
# What a linear's backward adds, by (role, block) of the tensor it makes (xt_core.names).
_LINEAR_BACKWARD_EXTRA = {
    ("branch out", "attention"): _ATTENTION_OUT_BACKWARD,
    ("projection", "attention"): _QKV_INPUT,
    ("projection", "ffn"): _GATE_UP_INPUT,
}
_SKIP_PATH = (
    "This is one of two contributions to the gradient of {x}: it also reaches the loss directly through the "
    "{which} residual's skip, and the two add (the C++ reference adds the norm's contribution into dx with +=)."
)
_RESIDUAL_NAMES = {"attention": "attention", "ffn": "feed-forward"}  # a layer's two residuals, by block
_NORM_OF_BLOCK = {"attention": "attention_norm", "ffn": "ffn_norm"}  # the gain each block's norm reads


def _explain_kind(record: Record) -> str:
    if record.kind == "softmax":
        return "softmax_output" if names.is_output_softmax(record.name) else "softmax_attention"
    return record.kind


def _gqa(record: Record, cfg: xt_core.Config) -> str:
    if cfg.n_kv_head >= cfg.n_head:
        return ""
    shared = "key" if record.kind == "scores" else "value"
    if record.phase == "backward":
        return (
            f" With grouped-query attention {cfg.kv_group} query heads share each key/value head, so a "
            f"{shared} receives the sum of their gradients."
        )
    return f" With grouped-query attention {cfg.kv_group} query heads share each key/value head."


def _norm_other(record: Record, recorded) -> str:
    """What the norm backward says of the gradient's other path."""
    if recorded is None or recorded.role != "norm out":
        return "along another path"
    if not recorded.per_layer:
        return "The last residual stream reaches the loss only through this norm: this is its whole gradient."
    return _SKIP_PATH.format(x=record.inputs[0], which=_RESIDUAL_NAMES[recorded.block])


def _context(record: Record, cfg: xt_core.Config) -> dict:
    recorded = names.lookup(record.name)
    role, block = (recorded.role, recorded.block) if recorded else ("", "")
    tied = (
        " With tied embeddings W is tok_embeddings, so it receives two gradient contributions — here and at "
        "the embedding lookup — that add."
        if cfg.tie_embeddings
        else ""
    )
    skip, branch = (record.inputs + ("", ""))[:2]
    return {
        "role": recorded.about if role == "projection" or role == "branch out" else "a linear map",
        "reader": recorded.about if role == "norm out" else "the next op",
        "other": _norm_other(record, recorded),
        "gqa": _gqa(record, cfg),
        "tied": tied,
        "weight": "tok_embeddings (tied)" if cfg.tie_embeddings else "the output matrix",
        "out": record.name,
        "skip": skip,
        "branch": branch,
        "norm": f"{_NORM_OF_BLOCK.get(block, 'ffn_norm')} RMSNorm",
        "log_v": math.log(cfg.vocab_size),
        "extra": _LINEAR_BACKWARD_EXTRA.get((role, block), ""),
    }


def explanation(record: Record, cfg: xt_core.Config) -> str:
    """One paragraph of plain text: what this step does and why."""
    table = _BACKWARD if record.phase == "backward" else _FORWARD
    template = table.get(_explain_kind(record))
    if template is None:
        return f"{record.kind} ({record.phase})."
    return template.format(**_context(record, cfg))


def induction_note(ctx, record: Record) -> str:
    """On a checkpoint whose training measured an induction head (xt_core.probes: the head with the
    best score on repeated random tokens), its layer's attention-probability step names it."""
    found = ctx.measured()
    if record.phase != "forward" or "induction_layer" not in found:
        return ""
    layer, head = found["induction_layer"], found["induction_head"]
    if record.name != names.entry("layers.{L}.attention.probs").name(layer):
        return ""
    return (
        f" Layer {layer}, head {head}: induction head — it attends to the token after the earlier occurrence "
        f"of the current one (measured on repeated random letters: {found['induction_score']:.2f} of its "
        "attention lands there). Type a text that repeats to see its stripe."
    )
