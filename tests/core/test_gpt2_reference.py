"""The gpt2 family against transformers' own GPT2LMHeadModel: random tiny models made in the
test (no download), their weights handed to xt under its names (GPT-2's fused c_attn cut into
Wq, Wk, Wv and their biases, Conv1D weights already (in, out)), then the loss, the logits and
every parameter's gradient compared: in float64 to 1e-10 / 1e-8 (measured: 1e-15; nothing in GPT-2
upcasts to float32; the loss is taken by torch in float64), and in float32 within float32's
round-off. Both GELUs: GPT-2's "gelu_new" (tanh) and nanoGPT's exact "gelu".

Skips without torch and transformers (optional extra `reference`), except in CI (XT_REQUIRE_TORCH=1).
"""

import numpy as np
import pytest

import xt_core
from tests.helpers.env import skip_unless_installed
from tests.helpers.specs import make_batch

pytestmark = pytest.mark.torch
skip_unless_installed("torch", "transformers", hint="pip install -e '.[reference]'")
torch = transformers = None  # imported by load_transformers, when this module's tests run


@pytest.fixture(autouse=True, scope="module")
def load_transformers():
    global torch, transformers
    import torch
    import transformers

    transformers.logging.set_verbosity_error()


SIZES = dict(vocab_size=40, n_positions=16, n_embd=32, n_layer=2, n_head=4)
CASES = {  # name: GPT2Config fields beside SIZES
    "gpt2-gelu-new": dict(activation_function="gelu_new", layer_norm_epsilon=1e-5),
    "nanogpt-exact-gelu": dict(activation_function="gelu", layer_norm_epsilon=1e-5, n_inner=48),
}


def hf_gpt2(fields: dict, seed: int = 0):
    """A random GPT2LMHeadModel with unit-scale activations (transformers' init, std 0.02, leaves
    attention uniform) and gains and biases away from 1 and 0, dropout off."""
    torch.manual_seed(seed)
    config = transformers.GPT2Config(**{**SIZES, **fields}, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model = transformers.GPT2LMHeadModel(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.ndim == 1:
                p.copy_((1.0 if "ln_" in name and name.endswith("weight") else 0.0)
                        + 0.3 * torch.randn_like(p))  # fmt: skip
            else:
                p.copy_(1.5 * torch.randn_like(p) / p.shape[0] ** 0.5)
    return model


def xt_config(model) -> xt_core.Config:
    c = model.config
    activation = {"gelu_new": "gelu_tanh", "gelu": "gelu"}[c.activation_function]
    return xt_core.Config(
        family="gpt2", vocab_size=c.vocab_size, n_layer=c.n_layer, n_head=c.n_head, n_kv_head=c.n_head,
        n_embd=c.n_embd, ffn_hidden=c.n_inner or 4 * c.n_embd, seq_len=c.n_positions,
        norm_eps=c.layer_norm_epsilon, activation=activation,
    )  # fmt: skip


def as_xt(hf: dict[str, np.ndarray], cfg: xt_core.Config) -> dict[str, np.ndarray]:
    """transformers' tensors (or their gradients) under xt's names, written out apart from the
    importer: c_attn's columns [q | k | v] cut in three, every Conv1D weight kept (in, out)."""
    C = cfg.n_embd
    out = {"tok_embeddings": hf["transformer.wte.weight"], "pos_embeddings": hf["transformer.wpe.weight"]}
    out["norm"], out["norm_bias"] = hf["transformer.ln_f.weight"], hf["transformer.ln_f.bias"]
    for L in range(cfg.n_layer):
        h, p = f"transformer.h.{L}.", f"layers.{L}."
        for part in ("weight", "bias"):
            fused = hf[h + f"attn.c_attn.{part}"]
            for i, letter in enumerate("qkv"):
                name = f"attention.w{letter}" if part == "weight" else f"attention.b{letter}"
                out[p + name] = fused[..., i * C : (i + 1) * C]
        out[p + "attention_norm"], out[p + "attention_norm_bias"] = hf[h + "ln_1.weight"], hf[h + "ln_1.bias"]
        out[p + "ffn_norm"], out[p + "ffn_norm_bias"] = hf[h + "ln_2.weight"], hf[h + "ln_2.bias"]
        out[p + "attention.wo"], out[p + "attention.bo"] = hf[h + "attn.c_proj.weight"], hf[h + "attn.c_proj.bias"]
        out[p + "feed_forward.w1"], out[p + "feed_forward.b1"] = hf[h + "mlp.c_fc.weight"], hf[h + "mlp.c_fc.bias"]
        out[p + "feed_forward.w2"], out[p + "feed_forward.b2"] = hf[h + "mlp.c_proj.weight"], hf[h + "mlp.c_proj.bias"]
    return {k: np.ascontiguousarray(v) for k, v in out.items()}


def reference_step(model, inputs, targets):
    """Logits, loss and {HF name: grad} from transformers' model, the loss by torch in the model's dtype."""
    model.zero_grad(set_to_none=True)
    logits = model(torch.tensor(inputs)).logits
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.tensor(targets).reshape(-1))
    loss.backward()
    grads = {name: p.grad.numpy() for name, p in model.named_parameters()}
    return logits.detach().numpy(), loss.item(), grads


def normwise(ours, reference) -> float:
    return float(np.max(np.abs(ours - reference)) / max(float(np.max(np.abs(reference))), 1e-30))


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("dtype,loss_tol,grad_tol", [("float64", 1e-10, 1e-8), ("float32", 1e-5, 1e-4)])
def test_loss_logits_and_every_gradient_match_transformers(case, dtype, loss_tol, grad_tol):
    model = hf_gpt2(CASES[case]).to(getattr(torch, dtype))
    cfg = xt_config(model)
    weights = {name: p.detach().numpy() for name, p in model.named_parameters()}
    params = as_xt(weights, cfg)
    assert set(params) == set(xt_core.param_shapes(cfg))  # every parameter of the family, none other
    inputs, targets = make_batch(cfg, 3, 12, seed=4)
    logits, loss, hf_grads = reference_step(model, inputs, targets)

    trace = xt_core.forward_backward(cfg, params, inputs, targets, keep_param_grads=True)
    assert abs(trace.loss - loss) <= loss_tol * max(1.0, abs(loss))
    assert normwise(trace["logits"], logits) <= loss_tol * 10
    grads = as_xt(hf_grads, cfg)
    for name, grad in grads.items():
        if name.endswith(".bk"):  # q·(k + bk) shifts a query's every score alike, which softmax ignores:
            scale = np.max(np.abs(grads[name.replace(".bk", ".bq")]))  # dL/dbk is 0 up to round-off
            assert max(np.max(np.abs(trace.grads[name])), np.max(np.abs(grad))) <= grad_tol * scale, name
        else:
            assert normwise(trace.grads[name], grad) <= grad_tol, name


def test_the_two_gelus_make_different_models():
    """Run with the other GELU, GPT-2's weights give another loss: the activation is not a detail."""
    model = hf_gpt2(CASES["gpt2-gelu-new"]).double()
    cfg = xt_config(model)
    params = as_xt({name: p.detach().numpy() for name, p in model.named_parameters()}, cfg)
    inputs, targets = make_batch(cfg, 2, 10, seed=1)
    _, loss, _ = reference_step(model, inputs, targets)
    tanh = xt_core.forward_backward(cfg, params, inputs, targets).loss
    exact = xt_core.forward_backward(xt_core.Config(**{**cfg.to_dict(), "activation": "gelu"}), params, inputs, targets)
    assert abs(tanh - loss) < 1e-10 < 1e-6 < abs(exact.loss - loss)
