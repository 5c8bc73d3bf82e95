"""The pages' side of checkpoints and training: which model the home form offers and starts
on, how a form submission naming a checkpoint is normalised, and the training controls of
the walk page (its "train 10 / 100 steps" links are permalinks with a larger train_steps)."""

from __future__ import annotations

from urllib.parse import urlencode

from app.checkpoints.registry import DEMO_ORDER, registry
from app.settings import Settings
from app.spec import CONFIG_FIELDS, ResolvedSpec
from app.spec.cost import max_steps_within
from app.spec.training import DEFAULT_OPTIMIZER, OPTIMIZER_FIELDS, describe_optimizer

# Form fields of the training controls (beside the spec's own fields on the home form).
TRAINING_FIELDS = ("optimizer", "train_steps", *OPTIMIZER_FIELDS)
TRAIN_MORE = (10, 100)  # the walk page's "train N steps" buttons


def home_context(params: dict[str, str], values: dict[str, str], settings: Settings) -> dict:
    """The checkpoints for the model list; with a bare home page (no query), the form starts
    on the first demo model with its first example text."""
    models = registry(settings).listing()
    fetchable = registry(settings).absent()  # known real models not fetched: the page says how
    if not params:
        demo = next((m for m in models if m["shipped"] and m["name"] in DEMO_ORDER), None)
        if demo is not None:
            values["model"] = demo["name"]
            if demo["examples"]:
                values["text"] = demo["examples"][0]
            if demo["tokenizer"]:
                values["tokenizer"] = demo["tokenizer"]
    values.setdefault("lr", "")
    values.setdefault("train_steps", "0")
    return {
        "models": models,
        "fetchable": fetchable,
        "max_upload_mb": settings.max_upload_bytes / (1 << 20),
        "max_train_steps": settings.max_train_steps,
        "default_lr": DEFAULT_OPTIMIZER["lr"],
    }


def normalise_form(spec: dict[str, str]) -> dict[str, str]:
    """A home-form submission sends every field. A checkpoint brings its own sizes and
    tokenizer (without JS the disabled-looking fields are still sent): drop them. Optimizer
    fields without an optimizer chosen mean nothing: drop them too."""
    if spec.get("model"):
        spec = {k: v for k, v in spec.items() if k not in CONFIG_FIELDS and k != "tokenizer"}
    if not spec.get("optimizer"):
        spec = {k: v for k, v in spec.items() if k not in OPTIMIZER_FIELDS}
    if spec.get("train_steps") in ("0", ""):
        spec.pop("train_steps")
    return spec


def walk_context(resolved: ResolvedSpec, query: dict[str, str], settings: Settings) -> dict:
    """The walk page's summary facts and its training links."""
    steps = resolved.train_steps
    n_seq, T = resolved.inputs.shape
    most = min(
        settings.max_train_steps, max_steps_within(resolved.cfg, n_seq, T, resolved.dtype, settings.max_train_seconds)
    )
    links = []
    for more in TRAIN_MORE:
        total = steps + more
        if total <= most:  # a link the server would refuse is not offered
            # Training a model with no optimizer yet uses the default one: the canonical
            # permalink (after the redirect) names it.
            links.append(
                {"steps": more, "href": "/walk?" + urlencode({**query, "train_steps": str(total), "step": "0"})}
            )
    reset = None
    if steps:
        reset = "/walk?" + urlencode({**{k: v for k, v in query.items() if k != "train_steps"}, "step": "0"})
    # A model trained on its batch is sure of its targets: float32 gradients then lose digits
    # and checks may fail. Offer the same spec in float64.
    float64 = None
    if steps and resolved.dtype == "float32":
        float64 = "/walk?" + urlencode({**query, "dtype": "float64", "step": "0"})
    return {
        "config": resolved.cfg.to_dict(),
        "trace_id": resolved.id,
        "training": {
            "steps": steps,
            "optimizer": describe_optimizer(resolved.optimizer) if resolved.optimizer else None,
            "links": links,
            "reset": reset,
            "max_steps": settings.max_train_steps,
            "float64": float64,
        },
    }
