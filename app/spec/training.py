"""A spec's optimizer as a canonical dict (every field filled in), its label for the page, and
the cost estimate that bounds `train_steps`."""

from __future__ import annotations

from app.errors import SpecError
from app.settings import Settings
from xt_core.config import Config
from xt_core.optim import OPTIMIZERS, make_optimizer, optimizer_dict

# Optimizer fields as flat /walk query keys (optimizer=adamw&lr=0.003); none is a config field.
OPTIMIZER_FIELDS = ("lr", "momentum", "weight_decay", "beta1", "beta2", "eps")


# What "train N steps" uses when the spec names no optimizer.
DEFAULT_OPTIMIZER = {"name": "adamw", "lr": 3e-3}


# xt's defaults where they differ from the optimizer classes' (torch's): AdamW's lr 1e-3 is
# tuned for large models; 3e-3 trains the small demo models in tens of steps.
APP_DEFAULTS = {"adamw": {"lr": DEFAULT_OPTIMIZER["lr"]}}


class OptimizerFieldError(ValueError):
    """A bad optimizer field: `field` is its name within the optimizer object."""

    def __init__(self, field: str, msg: str):
        super().__init__(msg)
        self.field = field
        self.msg = msg


def canonical_optimizer(raw: dict | None, train_steps: int) -> dict | None:
    """The optimizer with every field filled in (floats, `name` first), or None for a trace
    without an update step. Training steps without an optimizer use DEFAULT_OPTIMIZER."""
    if raw is None:
        if not train_steps:
            return None
        raw = DEFAULT_OPTIMIZER
    name = raw.get("name")
    if name not in OPTIMIZERS:
        raise OptimizerFieldError("name", f'optimizer name must be "sgd" or "adamw", got {name!r}')
    known = [f for f in OPTIMIZERS[name].__dataclass_fields__ if f != "name"]
    for field in raw:
        if field != "name" and field not in known:
            raise OptimizerFieldError(field, f"{name} has no field {field!r}; its fields: {', '.join(known)}")
    try:
        optimizer = make_optimizer({**APP_DEFAULTS.get(name, {}), **raw})
    except ValueError as exc:
        message = str(exc)
        field = message.split(" ", 1)[0]
        raise OptimizerFieldError(field if field in known else "name", message) from None
    values = optimizer_dict(optimizer)
    return {"name": name, **{k: float(values[k]) for k in known}}


def describe_optimizer(optimizer: dict | None) -> str:
    """ "AdamW, lr 0.003" for the page."""
    if optimizer is None:
        return "none (forward and backward only)"
    label = {"adamw": "AdamW", "sgd": "SGD"}[optimizer["name"]]
    extras = [f"{k} {optimizer[k]:g}" for k in ("momentum", "weight_decay") if optimizer.get(k)]
    return ", ".join([f"{label}, lr {optimizer['lr']:g}", *extras])


def train_work(cfg: Config, n_tokens: int, steps: int) -> int:
    """A cost estimate: each step touches every parameter once per position."""
    return steps * cfg.n_params() * n_tokens


def max_steps_within(cfg: Config, n_tokens: int, budget: int) -> int:
    return budget // max(1, cfg.n_params() * n_tokens)


def resolve_training(
    optimizer: dict | None, train_steps: int, cfg: Config, n_tokens: int, settings: Settings
) -> dict | None:
    """The canonical optimizer (None: no update step) after checking train_steps' limits."""
    if not 0 <= train_steps <= settings.max_train_steps:
        raise SpecError(
            ("body", "train_steps"), f"train_steps must be between 0 and {settings.max_train_steps}, got {train_steps}"
        )
    try:
        canonical = canonical_optimizer(optimizer, train_steps)
    except OptimizerFieldError as exc:
        raise SpecError(("body", "optimizer", exc.field), exc.msg) from None
    if train_work(cfg, n_tokens, train_steps) > settings.max_train_work:
        most = max_steps_within(cfg, n_tokens, settings.max_train_work)
        raise SpecError(
            ("body", "train_steps"),
            f"train_steps = {train_steps} is more training than this server allows for a model of "
            f"{cfg.n_params():,} parameters on {n_tokens} tokens: at most {most} steps here "
            "(a smaller model or a shorter text allows more)",
        )
    return canonical
