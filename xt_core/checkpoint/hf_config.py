"""A Hugging Face Llama, Qwen2/2.5 or Qwen3 config.json -> xt's Config fields, key by key: each
key is either computed by xt (mapped to a Config field), fixed to the one value xt computes, or
known to change nothing a training step computes. Any other key is refused with its name and
value: an unknown key may change the math (a scaling, a bias, another activation), and importing
it silently would show a learner a model that is not the one in the file. A key asking for a
feature xt does not compute (sliding window attention, a mixture of experts, soft-capping) is
refused naming that feature (FEATURES).

Qwen2 and Qwen3 are Llama's script with a part switched on (MODEL_TYPES): Qwen2's q/k/v biases
(qkv_bias), Qwen3's per-head RMSNorm of q and k (qk_norm, with its own head_dim).

Both RoPE layouts are read: transformers >= 5 writes "rope_parameters": {"rope_theta",
"rope_type"}; earlier versions a top-level "rope_theta" (and "rope_scaling").
"""

from __future__ import annotations

import math

from xt_core.checkpoint.common import CheckpointError, short

# Keys that change nothing xt computes: names, token ids for generation, caching, init, dtype
# of the stored tensors (xt reads each tensor's own dtype), the writer's version.
IGNORED = {
    "architectures",
    "transformers_version",
    "dtype",
    "torch_dtype",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "use_cache",
    "initializer_range",
    "_name_or_path",
    "output_attentions",
    "output_hidden_states",
    "return_dict",
}

MODEL_TYPES = {  # model_type -> the Config parts it switches on (Qwen: Llama's script with its parts)
    "llama": {},
    "qwen2": {"qkv_bias": True},  # q, k, v projections with bias, o without (Qwen2, Qwen2.5)
    "qwen3": {"qk_norm": True},  # RMSNorm of each head's q and k before RoPE
}
# Qwen's sliding window's width and first layer: transformers reads them only with use_sliding_window
# (refused when true: FEATURES), so they change nothing here; a Llama has neither
QWEN_IGNORED = ("sliding_window", "max_window_layers")

COMPUTED = {  # config.json key -> Config field
    "vocab_size": "vocab_size",
    "hidden_size": "n_embd",
    "intermediate_size": "ffn_hidden",
    "num_hidden_layers": "n_layer",
    "num_attention_heads": "n_head",
    "num_key_value_heads": "n_kv_head",
    "max_position_embeddings": "seq_len",
    "tie_word_embeddings": "tie_embeddings",
    "rms_norm_eps": "norm_eps",
    "rope_theta": "rope_theta",
    "head_dim": "head_dim",  # a head's width; absent or null: hidden_size / num_attention_heads
}
REQUIRED = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads")
DEFAULTS = {  # transformers' LlamaConfig defaults for keys a config.json may leave out
    "max_position_embeddings": 2048,
    "tie_word_embeddings": False,
    "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0,
}


def _exactly(*allowed):
    """A predicate: the value is one of `allowed`, of the same JSON type (false is not 0)."""
    return lambda v: any(type(v) is type(a) and v == a for a in allowed)


# Every model_type a Hugging Face directory may have (hf_directory.py reads gpt2's with gpt2_files.py):
# a refusal names them all, GPT-2's too, though this module reads the first three only.
SUPPORTED_MODEL_TYPES = (*MODEL_TYPES, "gpt2")
FIXED = {  # key -> (the only values xt computes, what xt computes instead)
    "model_type": (
        _exactly(*MODEL_TYPES),
        "Llama, Qwen2, Qwen3 and GPT-2 models (" + ", ".join(map(repr, SUPPORTED_MODEL_TYPES)) + ")",
    ),
    "hidden_act": (_exactly("silu"), "SwiGLU with silu"),
    "attention_bias": (_exactly(False), "attention projections without bias"),
    "mlp_bias": (_exactly(False), "feed-forward projections without bias"),
    "attention_dropout": (_exactly(0, 0.0), "no dropout"),
    "pretraining_tp": (_exactly(1, None), "unsplit projections (pretraining_tp 1)"),
}


def _asks(value) -> bool:
    """Whether a feature's key asks for it: anything but absent, null, false or 0."""
    return value is not None and value is not False and value != 0


_SLIDING = "sliding window attention: xt's attention reads every earlier position"
_MOE = "a mixture of experts: xt computes one dense SwiGLU feed-forward"
_SOFTCAP = "soft-capping (c tanh(x / c)): xt computes plain scores and logits"
FEATURES = {  # key -> (whether a value asks for the feature, the feature and what xt computes instead)
    "use_sliding_window": (_asks, _SLIDING),
    "layer_types": (lambda v: not isinstance(v, list) or any(t != "full_attention" for t in v), _SLIDING),
    "num_experts": (_asks, _MOE),
    "num_local_experts": (_asks, _MOE),
    "n_routed_experts": (_asks, _MOE),
    "num_experts_per_tok": (_asks, _MOE),
    "moe_intermediate_size": (_asks, _MOE),
    "attn_logit_softcapping": (_asks, _SOFTCAP),
    "final_logit_softcapping": (_asks, _SOFTCAP),
}
MOE_MODEL_TYPES = ("qwen2_moe", "qwen3_moe", "mixtral")  # a mixture of experts said by its model_type

# a key -> why xt refuses a value other than its one (the file format's refusals)
REFUSED = {key: f"xt computes only {what}" for key, (_, what) in FIXED.items()}
REFUSED |= {key: why for key, (_, why) in FEATURES.items()}


def _refuse(key: str, value, why: str, source: str):
    raise CheckpointError(f"{source}: config.json {key} = {short(value)}: {why}")


def _rope_theta(hf: dict, source: str) -> float:
    """rope_parameters.rope_theta or the top-level rope_theta (equal when both are given)."""
    scaling = hf.get("rope_scaling")
    if scaling is not None:
        kind = scaling.get("rope_type", scaling.get("type")) if isinstance(scaling, dict) else scaling
        if kind != "default" or set(scaling) - {"rope_type", "type", "rope_theta"}:
            _refuse("rope_scaling", scaling, "xt computes plain RoPE only (rope_type default)", source)
    theta = hf.get("rope_theta")
    params = hf.get("rope_parameters")
    if params is not None:
        if not isinstance(params, dict):
            _refuse("rope_parameters", params, "not an object", source)
        if params.get("rope_type", "default") != "default":
            _refuse("rope_parameters.rope_type", params["rope_type"], "xt computes plain RoPE only (default)", source)
        for key in set(params) - {"rope_type", "rope_theta"}:
            _refuse(f"rope_parameters.{key}", params[key], "unknown RoPE parameter; it may change the math", source)
        inner = params.get("rope_theta")
        if theta is not None and inner is not None and inner != theta:
            _refuse("rope_theta", theta, f"disagrees with rope_parameters.rope_theta = {short(inner)}", source)
        theta = inner if inner is not None else theta
    return DEFAULTS["rope_theta"] if theta is None else theta


def _check_number(key: str, value, source: str):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        _refuse(key, value, "not a finite number", source)
    return float(value)


def _check_key(key: str, value, model_type, source: str) -> None:
    """A key xt computes, ignores or has fixed, at a value it computes; else refused naming it."""
    if key in FEATURES and FEATURES[key][0](value):
        _refuse(key, value, REFUSED[key], source)
    if key in FIXED and not FIXED[key][0](value):
        _refuse(key, value, REFUSED[key], source)
    known = key in IGNORED or key in COMPUTED or key in FIXED or key in FEATURES
    known |= key in ("rope_parameters", "rope_scaling") or (key in QWEN_IGNORED and model_type in ("qwen2", "qwen3"))
    if not known:
        _refuse(key, value, "unknown key; it may change what the model computes, so xt does not import it", source)


def config_fields(hf, source: str) -> dict:
    """xt Config fields from a parsed config.json; refuses what xt would not compute."""
    if not isinstance(hf, dict):
        raise CheckpointError(f"{source}: config.json is not an object")
    if hf.get("model_type") in MOE_MODEL_TYPES:
        _refuse("model_type", hf["model_type"], _MOE, source)
    for key, value in hf.items():
        _check_key(key, value, hf.get("model_type"), source)
    for key in REQUIRED:
        if key not in hf:
            raise CheckpointError(f"{source}: config.json lacks {key}")
    values = {**DEFAULTS, **{k: v for k, v in hf.items() if k in COMPUTED and v is not None}}
    values.setdefault("num_key_value_heads", hf["num_attention_heads"])
    values["rope_theta"] = _rope_theta(hf, source)
    for key in ("rms_norm_eps", "rope_theta"):
        values[key] = _check_number(key, values[key], source)
    return {COMPUTED[k]: v for k, v in values.items()} | MODEL_TYPES[hf.get("model_type", "llama")]
