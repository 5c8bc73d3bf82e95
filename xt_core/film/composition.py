"""Which gradients build an induction head: layer L's dL/dW_Q and dL/dW_K split by what wrote the
residual stream they read (docs/film.md, "Which gradients build the head").

Layer L's attention reads n = RMSNorm(x) = x ⊙ (g r), r = 1 / sqrt(mean(x²) + ε), where the residual
stream x is the sum of what the layers before wrote into it: the token embedding, each earlier
attention head h's output o_h W_O[h] (its rows of W_O), each earlier feed-forward's output. At the
step's own x, r is one number per position, so n is linear in those writes: n = Σ_c c ⊙ (g r). The
projection k = n W_K makes dL/dW_K = Σ_{b,t} n[b,t]ᵀ dk[b,t] (dk: the loss's gradient at k, before
RoPE), hence

    dL/dW_K = Σ_c G_c,    G_c = Σ_{b,t} (c[b,t] ⊙ g r[b,t])ᵀ dk[b,t],

exactly (up to rounding), and the same for W_Q with dq. G_c is the part of the gradient that reads
write c: for c = layer 0's previous-token head, the part of W_K's gradient by which layer 1's keys
learn to read the token before (K-composition). Its share of the gradient is ⟨G_c, G⟩ / ‖G‖² (the
shares of all writes sum to 1); its cosine with the change of W_K over the next steps, measured on
the run, says whether training went where that part pointed.

parts = gradient_parts(cfg, params, trace, layer=1)   # {"wq": {write: G_c}, "wk": {...}}
"""

from __future__ import annotations

import numpy as np

from xt_core.config import Config
from xt_core.trace import Trace

PROJECTIONS = ("wq", "wk")  # the weights whose gradient is split (W_V reads the same n: "wv" works too)


def residual_writes(cfg: Config, params: dict, trace: Trace, layer: int) -> dict[str, np.ndarray]:
    """What wrote layer `layer`'s residual stream, by name ("embedding", "L0.head1", "L0.ffn", ...):
    each (B, T, C) in float64; their sum is the stream layer `layer` reads."""
    _check(cfg, layer)
    writes = {"embedding": np.asarray(trace["embedding"], np.float64)}
    hd = cfg.head_dim
    for L in range(layer):
        heads = np.asarray(trace[f"layers.{L}.attention.heads"], np.float64)  # (B, H, T, hd)
        wo = np.asarray(params[f"layers.{L}.attention.wo"], np.float64)  # (H hd, C)
        for h in range(cfg.n_head):
            writes[f"L{L}.head{h}"] = heads[:, h] @ wo[h * hd : (h + 1) * hd]
        writes[f"L{L}.ffn"] = np.asarray(trace[f"layers.{L}.feed_forward.out"], np.float64)
    return writes


def gradient_parts(
    cfg: Config, params: dict, trace: Trace, layer: int, projections=PROJECTIONS
) -> dict[str, dict[str, np.ndarray]]:
    """{projection: {write: G_c}}: layer `layer`'s gradient of each projection (W_Q, W_K) split by the
    writes of the residual stream it reads (the module's docstring); each G_c (C, out) in float64."""
    writes = residual_writes(cfg, params, trace, layer)
    stream = sum(writes.values())
    gain = np.asarray(params[f"layers.{layer}.attention_norm"], np.float64)
    r = 1.0 / np.sqrt(np.mean(stream * stream, axis=-1, keepdims=True) + cfg.norm_eps)
    parts = {}
    for projection in projections:
        dout = np.asarray(trace.grad(f"layers.{layer}.attention.{projection[1]}"), np.float64)  # (B, T, out)
        rows = dout.reshape(-1, dout.shape[-1])
        parts[projection] = {name: (c * gain * r).reshape(-1, c.shape[-1]).T @ rows for name, c in writes.items()}
    return parts


def shares(parts: dict[str, np.ndarray]) -> dict[str, float]:
    """Each part's share of the whole gradient G = Σ parts: ⟨G_c, G⟩ / ‖G‖² (they sum to 1)."""
    whole = sum(parts.values())
    total = float(np.sum(whole * whole))
    return {name: float(np.sum(part * whole)) / total if total else 0.0 for name, part in parts.items()}


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64))) / norms if norms else 0.0


def _check(cfg: Config, layer: int) -> None:
    if cfg.family != "llama" or cfg.qkv_bias or cfg.qk_norm:
        raise ValueError("the split reads RMSNorm'd writes through bias-free projections: a Llama config")
    if isinstance(layer, bool) or not isinstance(layer, int) or not 1 <= layer < cfg.n_layer:
        raise ValueError(f"layer must be an integer in [1, n_layer = {cfg.n_layer}), got {layer!r}")


def composition_at(run, step: int, layer: int = 1, ahead: int = 100, verify: bool = True) -> dict:
    """At `step` of a recorded run (xt_core.film.files.Run), for W_Q and W_K of `layer`: each write's
    share of the gradient and the cosine of its descent direction −G_c with the weight's change over
    the next `ahead` steps (W at step + ahead minus W at step), for step's own gradient ("one_step")
    and for the gradients of the `ahead` steps summed ("summed", each at its own weights): the run
    replayed from the checkpoint before step, its weights checked against the recorded digests. JSON-able.
    verify=False: weights at step + ahead that differ from the recorded ones (the run recorded on
    another CPU, whose BLAS rounds differently) are measured anyway, "exact" saying so (a lesson's
    claim about a shipped run holds within its stated bounds, not to the bit)."""
    from xt_core.film.files import RunError, digest, stream_at  # the run's side: the split reads traces
    from xt_core.film.rebuild import advance, replay

    if isinstance(ahead, bool) or not isinstance(ahead, int) or not 1 <= ahead < run.plan.steps - step:
        raise ValueError(f"ahead must be an integer in [1, {run.plan.steps - step}), got {ahead!r}")
    params, state, _ = replay(run, step)
    before, batches, held = params, run.plan.stream(step, stream_at(run, step)), {}
    for s in range(step, step + ahead):
        inputs, targets = next(batches)

        def seen(trace, weights=params):
            parts = gradient_parts(run.cfg, weights, trace, layer)
            held.setdefault("one_step", parts)  # step's own; the rest only summed (no list of every step's)
            held["summed"] = parts if "summed" not in held else _added(held["summed"], parts)

        params, state, *_ = advance(run.cfg, params, state, run.plan.optimizer_at(s), inputs, targets, seen)
    exact = digest(params) == int(run.log.digest[step + ahead])
    if verify and not exact:
        raise RunError(f"step {step + ahead} replayed from step {step} differs from the recorded weights")
    answer = {"step": step, "layer": layer, "ahead": ahead, "exact": exact, "projections": {}}
    for projection in held["one_step"]:
        name = f"layers.{layer}.attention.{projection}"
        change = np.asarray(params[name], np.float64) - np.asarray(before[name], np.float64)
        answer["projections"][projection] = {
            kind: _against(held[kind][projection], change) for kind in ("one_step", "summed")
        }
    return answer


def _added(total: dict, parts: dict) -> dict:
    return {p: {w: total[p][w] + g for w, g in split.items()} for p, split in parts.items()}


def _against(parts: dict[str, np.ndarray], change: np.ndarray) -> dict:
    """The whole gradient's cosine with the change, and each part's share and cosine (descent: −G)."""
    whole = sum(parts.values())
    return {
        "cosine_with_change": cosine(-whole, change),
        "writes": {
            write: {"share": share, "cosine_with_change": cosine(-parts[write], change)}
            for write, share in shares(parts).items()
        },
    }
