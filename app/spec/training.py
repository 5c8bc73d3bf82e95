"""A spec's optimizer as a canonical dict (every field filled in), its label for the page, and
the limit on `train_steps` from the cost model (app.spec.cost: seconds on this class of machine)."""

from __future__ import annotations

import math

from app.checkpoints import real_models
from app.errors import SpecError, shown_number
from app.settings import Settings
from app.spec.core_words import core_said
from app.spec.cost import max_steps_within, step_seconds
from app.words.numbers import with_separator
from app.words.said import Fixed, Grouped, Said, Short
from xt_core.config import Config
from xt_core.training.optim import OPTIMIZERS, make_optimizer, optimizer_dict

# Optimizer fields as flat /walk query keys (optimizer=adamw&lr=0.003); none is a config field.
OPTIMIZER_FIELDS = ("lr", "momentum", "weight_decay", "beta1", "beta2", "eps")


# Each optimizer's name on every page and in every title, in the order the home form offers them.
OPTIMIZER_LABELS = {"adamw": "AdamW", "sgd": "SGD"}

# What "train N steps" uses when the spec names no optimizer (with the model's default lr).
DEFAULT_OPTIMIZER_NAME = "adamw"


# xt's defaults where they differ from the optimizer classes' (torch's): AdamW's lr 1e-3 is
# tuned for large models; 3e-3 trains the small demo models in tens of steps. A real model
# brings its own (app.checkpoints.real_models: default_lr).
APP_DEFAULTS = {"adamw": {"lr": 3e-3}}


def default_lrs(model: str | None = None) -> dict[str, float]:
    """The learning rate each optimizer gets when a spec naming `model` gives none: the one
    source of the defaults the server applies and the home form states."""
    lrs = {name: float(make_optimizer({"name": name, **APP_DEFAULTS.get(name, {})}).lr) for name in OPTIMIZERS}
    return {**lrs, **(real_models.default_lr(model) if model else {})}


class OptimizerFieldError(ValueError):
    """A bad optimizer field: `field` is its name within the optimizer object."""

    def __init__(self, field: str, msg: str):
        super().__init__(msg)
        self.field = field
        self.msg = msg


def canonical_optimizer(raw: dict | None, train_steps: int, model: str | None = None) -> dict | None:
    """The optimizer with every field filled in (floats, `name` first), or None for a trace
    without an update step. Training steps without an optimizer use DEFAULT_OPTIMIZER_NAME;
    a missing lr is `model`'s default (default_lrs)."""
    if raw is None:
        if not train_steps:
            return None
        raw = {"name": DEFAULT_OPTIMIZER_NAME}
    name = raw.get("name")
    if not isinstance(name, str) or name not in OPTIMIZERS:
        raise OptimizerFieldError("name", Said("error-optimizer-name", value=_short(name)))
    known = [f for f in OPTIMIZERS[name].__dataclass_fields__ if f != "name"]
    numbers = {}
    for field, value in raw.items():
        if field != "name" and field not in known:
            raise OptimizerFieldError(
                field, Said("error-optimizer-field", name=name, field=repr(field), known=", ".join(known))
            )
        if field != "name":
            numbers[field] = _finite(field, value)
    try:
        defaults = {**APP_DEFAULTS.get(name, {}), "lr": default_lrs(model)[name]}
        optimizer = make_optimizer({**defaults, "name": name, **numbers})
    except ValueError as exc:
        message = str(exc)
        field = message.split(" ", 1)[0]
        raise OptimizerFieldError(field if field in known else "name", core_said(message)) from None
    values = optimizer_dict(optimizer)
    return {"name": name, **{k: float(values[k]) for k in known}}


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _finite(field: str, value) -> float:
    """An optimizer field as a finite float: JSON true/false, strings, lists and numbers past
    float's range (a JSON integer may have hundreds of digits) are refused by name."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OptimizerFieldError(field, Said("error-optimizer-not-number", field=field, value=_short(value)))
    if isinstance(value, int) and value.bit_length() > 1000:
        bits = Said("error-integer-of-bits", bits=value.bit_length())
        raise OptimizerFieldError(field, Said("error-optimizer-not-finite", field=field, value=bits))
    number = float(value)
    if not math.isfinite(number):
        raise OptimizerFieldError(field, Said("error-optimizer-not-finite", field=field, value=repr(value)))
    return number


def describe_optimizer(optimizer: dict | None, lang: str = "en") -> str:
    """ "AdamW, lr 0.003" for the page (field names as they are, numbers with `lang`'s decimal mark:
    «AdamW, lr 0,003» in Russian)."""
    if optimizer is None:
        return "none (forward and backward only)"
    label = OPTIMIZER_LABELS[optimizer["name"]]
    fields = [(k, optimizer[k]) for k in ("lr", "momentum", "weight_decay") if k == "lr" or optimizer.get(k)]
    return ", ".join([label, *(f"{k} {with_separator(f'{value:g}', lang)}" for k, value in fields)])


def train_steps_limit(cfg: Config, n_seq: int, T: int, dtype: str, settings: Settings) -> int:
    """The most train_steps a spec of these sizes may ask for: settings.max_train_steps, or fewer
    when that much training would take longer than settings.max_train_seconds (app.spec.cost)."""
    return min(settings.max_train_steps, max_steps_within(cfg, n_seq, T, dtype, settings.max_train_seconds))


def resolve_training(
    optimizer: dict | None,
    train_steps: int,
    cfg: Config,
    n_seq: int,
    T: int,
    dtype: str,
    settings: Settings,
    model: str | None = None,
) -> dict | None:
    """The canonical optimizer (None: no update step) after checking train_steps' limits: the
    count, and the estimated seconds of that much training (app.spec.cost, attention included).
    `model` names the checkpoint (None: a random init): its default lr, and its sizes are fixed."""
    if not 0 <= train_steps <= settings.max_train_steps:  # the count first: the time estimate needs a sane one
        raise SpecError(
            ("body", "train_steps"),
            Said("error-train-steps-range", most=str(settings.max_train_steps), value=shown_number(train_steps)),
        )
    most = train_steps_limit(cfg, n_seq, T, dtype, settings)
    try:
        canonical = canonical_optimizer(optimizer, train_steps, model)
    except OptimizerFieldError as exc:
        raise SpecError(("body", "optimizer", exc.field), exc.msg) from None
    if train_steps > most:
        raise SpecError(
            ("body", "train_steps"), _too_long(train_steps, most, cfg, n_seq, T, dtype, settings, model is not None)
        )
    return canonical


def _too_long(
    train_steps: int, most: int, cfg: Config, n_seq: int, T: int, dtype: str, settings: Settings, fixed_sizes: bool
) -> str:
    """Why train_steps is refused, and only the changes that would allow more: a checkpoint's
    sizes are fixed (its text's length is not), and float32 only helps a float64 spec."""
    per_step, limit = step_seconds(cfg, n_seq, T, dtype), settings.max_train_seconds
    at_most = Said("error-train-at-most", most=most) if most else Said("error-train-not-one")
    changes = "sizes" if not fixed_sizes else ""
    if fixed_sizes and T > 1 and max_steps_within(cfg, n_seq, 1, dtype, limit) > most:
        changes = "text"
    advice = _MORE_IF.get((changes, dtype == "float64"))
    return Said(
        "error-train-steps-too-long-advice" if advice else "error-train-steps-too-long",
        steps=str(train_steps), seconds=Grouped(round(train_steps * per_step)), layers=str(cfg.n_layer),
        heads=str(cfg.n_head), n_seq=str(n_seq), positions=str(T), dtype=dtype, per_step=Fixed(per_step, 2),
        limit=Short(limit), at_most=at_most, **({"advice": Said(advice)} if advice else {}),
    )  # fmt: skip


# What would allow more training steps: (the sizes or the text, or neither; float64) -> its message.
_MORE_IF = {
    ("sizes", False): "error-train-more-sizes",
    ("sizes", True): "error-train-more-sizes-float32",
    ("text", False): "error-train-more-text",
    ("text", True): "error-train-more-text-float32",
    ("", True): "error-train-more-float32",
}
