"""The pages' side of checkpoints and training: which model the home form offers and starts
on, how a form submission naming a checkpoint is normalised, and the training controls of
the walk page (its "train 10 / 100 steps" links are permalinks with a larger train_steps)."""

from __future__ import annotations

from urllib.parse import urlencode

import numpy as np

from app.checkpoints.formats import upload_formats, upload_suffixes
from app.checkpoints.registry import DEMO_ORDER, model_settings, registry
from app.errors import SpecError
from app.settings import Settings
from app.spec import CONFIG_FIELDS, DEFAULT_TEXT, ResolvedSpec
from app.spec.preview import tokenize_preview
from app.spec.training import (
    DEFAULT_OPTIMIZER_NAME,
    OPTIMIZER_FIELDS,
    OPTIMIZER_LABELS,
    default_lrs,
    describe_optimizer,
    train_steps_limit,
)
from xt_core.training.optim import OPTIMIZERS

# Form fields of the training controls (beside the spec's own fields on the home form).
TRAINING_FIELDS = ("optimizer", "train_steps", *OPTIMIZER_FIELDS)
TRAIN_MORE = (10, 100)  # the walk page's "train N steps" buttons


# The first walk's optimizer on a demo model: plain SGD, w ← w − lr·g, the update a first reader
# can check by eye after the backward pass.
FIRST_OPTIMIZER = "sgd"


def first_walk(models: list[dict]) -> dict[str, str] | None:
    """The walkthrough a newcomer starts on, the same from the home page's hero button and from
    the form's Start (issue 34): the model `xt serve --model` served (the one its person came to
    see), else the first demo model; its first example text; on a demo model, the SGD update.
    None when there is neither (the form is the way in then)."""
    served = next((m for m in models if m["kind"] == "served" and m["tokenizer"]), None)  # one that reads text
    demo = next((m for m in models if m["shipped"] and m["name"] in DEMO_ORDER), None)
    chosen = served or demo
    if chosen is None:
        return None
    walk = {"model": chosen["name"], "text": chosen["examples"][0] if chosen["examples"] else DEFAULT_TEXT}
    return walk | ({"optimizer": FIRST_OPTIMIZER} if chosen is demo else {})


def home_context(params: dict[str, str], values: dict[str, str], settings: Settings) -> dict:
    """The checkpoints for the model list; with a bare home page (no query), the form starts
    on the first walk (first_walk), as the hero button above it does."""
    models = registry(settings).listing()
    fetchable = registry(settings).absent()  # known real models not fetched: the page says how
    first = first_walk(models) if not params.keys() - {"lang"} else None  # a bare home page, in any language
    if first is not None:
        values.update(first)
        tokenizer = next(m["tokenizer"] for m in models if m["name"] == first["model"])
        if tokenizer:
            values["tokenizer"] = tokenizer
    values.setdefault("lr", "")
    values.setdefault("train_steps", "0")
    chosen = next((m for m in models if m["name"] == values.get("model")), None)
    return {
        "models": models,
        "fetchable": fetchable,
        "refused": registry(settings).refused(),  # served models (--model) that could not be opened, and why
        "max_upload_mb": settings.max_upload_bytes / (1 << 20),
        "upload_formats": upload_formats(),
        "upload_suffixes": upload_suffixes(),
        "default_lrs": _shown(default_lrs(chosen["name"] if chosen else None)),  # the chosen model's
        "app_default_lrs": _shown(default_lrs()),  # a random init's and the demo models'
        "optimizer_labels": OPTIMIZER_LABELS,
        # the optimizer whose default lr the form shows: the chosen one (a known name), else the default
        "lr_optimizer": values["optimizer"] if values.get("optimizer") in OPTIMIZERS else DEFAULT_OPTIMIZER_NAME,
        **_checkpoint_preview(chosen, values, settings),
    }


def _shown(lrs: dict[str, float]) -> dict[str, str]:
    """Learning rates as the page's script writes them (JavaScript's String(0.00003) is
    "0.00003", Python's "3e-05"), so the text does not change when the script rewrites it."""
    return {name: np.format_float_positional(lr, trim="-") for name, lr in lrs.items()}


def _checkpoint_preview(chosen: dict | None, values: dict[str, str], settings: Settings) -> dict:
    """The training limit the form states, and a checkpoint's own tokenizer (its label in the
    Tokenizer select): for a checkpoint and the form's text, what GET /api/tokenize answers
    (the page's script keeps both up to date as the text or the model changes)."""
    if chosen is None:
        return {"max_train_steps": settings.max_train_steps, "model_tokenizer": None}
    dtype = values.get("dtype") if values.get("dtype") in ("float32", "float64") else "float32"
    try:
        preview = tokenize_preview(chosen["name"], values.get("text", ""), dtype, settings)
    except SpecError:  # the text does not suit the model: the error beside the field says why
        return {"max_train_steps": settings.max_train_steps, "model_tokenizer": None}
    label = preview["tokenizer_label"] or preview["tokenizer"]
    return {"max_train_steps": preview["max_train_steps"], "model_tokenizer": (preview["tokenizer"], label)}


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


def _film_url(resolved: ResolvedSpec) -> str | None:
    """A run's step links back to its film at that step (GET /film, app/routes/film.py)."""
    if resolved.run is None:
        return None
    return "/film?" + urlencode({"run": resolved.canonical["run"], "step": str(resolved.canonical["run_step"])})


def walk_context(resolved: ResolvedSpec, query: dict[str, str], settings: Settings, lang: str = "en") -> dict:
    """The walk page's summary facts and its training links."""
    steps = resolved.train_steps
    n_seq, T = resolved.inputs.shape
    if resolved.checkpoint is not None:
        settings = model_settings(resolved.checkpoint, settings)  # a real model's own limits
    most = train_steps_limit(resolved.cfg, n_seq, T, resolved.dtype, settings)
    links = []
    # A recorded run's step: the run fixes train_steps (app/spec/run_step.py refuses another), so no
    # link trains more; the page links back to the run's film instead.
    for more in TRAIN_MORE if resolved.run is None else ():
        total = steps + more
        if total <= most:  # a link the server would refuse is not offered
            # Training a model with no optimizer yet uses the default one: the canonical
            # permalink (after the redirect) names it.
            links.append(
                {"steps": more, "href": "/walk?" + urlencode({**query, "train_steps": str(total), "step": "1"})}
            )
    reset = None
    if steps and resolved.run is None:
        reset = "/walk?" + urlencode({**{k: v for k, v in query.items() if k != "train_steps"}, "step": "1"})
    # A model trained on its batch is sure of its targets: float32 gradients then lose digits
    # and checks may fail. Offer the same spec in float64.
    float64 = None
    if steps and resolved.dtype == "float32" and resolved.run is None:
        float64 = "/walk?" + urlencode({**query, "dtype": "float64", "step": "1"})
    return {
        "config": resolved.cfg.to_dict(),
        "trace_id": resolved.id,
        "training": {
            "steps": steps,
            "optimizer": describe_optimizer(resolved.optimizer, lang) if resolved.optimizer else None,
            "links": links,
            "reset": reset,
            "max_steps": most,
            "float64": float64,
            "film": _film_url(resolved),
        },
    }
