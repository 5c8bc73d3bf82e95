"""The spec as a /walk query string and back: flat config fields, token rows as '1,2;3,4',
comma-separated faults, optimizer fields as flat keys (optimizer=adamw&lr=0.003)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from app.errors import PydanticSaid, SpecError
from app.spec.precision import PRECISION_FIELDS, precision_to_query
from app.spec.schema import CONFIG_FIELDS, TraceSpec
from app.spec.training import OPTIMIZER_FIELDS
from app.words.said import Said
from xt_core.training.optim import OPTIMIZERS

_QUERY_SCALARS = (
    "model",
    "tokenizer",
    "seed",
    "text",
    "dtype",
    "train_steps",
    "fault_layer",
    "quiz",
    *PRECISION_FIELDS,
    "run",
    "run_step",
)


def _tokens_from_query(value: str) -> list[int] | list[list[int]]:
    """'1,2,3' -> one row [1, 2, 3]; '1,2;3,4' -> rows [[1, 2], [3, 4]]."""
    try:
        rows = [[int(t) for t in row.split(",") if t.strip()] for row in value.split(";")]
    except ValueError:
        raise SpecError(("query", "tokens"), Said("error-query-tokens")) from None
    return rows[0] if len(rows) == 1 else rows


def _validated_spec(data: dict[str, Any]) -> TraceSpec:
    """The spec the query's fields make; pydantic's first error as a SpecError under ("query", ...)."""
    try:
        return TraceSpec.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ("query",) + tuple(str(p) for p in err["loc"] if not isinstance(p, int))
        raise SpecError(loc, Said("error-query-field", field=".".join(loc[1:]), reason=PydanticSaid(err))) from None


def spec_from_query(params: Mapping[str, str]) -> TraceSpec:
    """/walk?text=...&n_layer=1&seed=3 -> TraceSpec. Config fields are flat; tokens are
    '1,2,3' (rows separated by ';'); faults comma-separated. `step` is not part of the spec."""
    data: dict[str, Any] = {}
    config: dict[str, Any] = {}
    for key, value in params.items():
        if key == "step":
            continue
        if key in CONFIG_FIELDS:
            config[key] = value
        elif key in _QUERY_SCALARS:
            data[key] = value if value != "" or key == "text" else None
        elif key == "tokens":
            data["tokens"] = _tokens_from_query(value)
        elif key == "faults":
            data["faults"] = [f for f in value.split(",") if f]
        elif key == "optimizer" or key in OPTIMIZER_FIELDS:
            continue  # gathered below, into one optimizer object
        else:
            raise SpecError(("query", key), Said("error-query-unknown", key=repr(key)))
    if config:
        data["config"] = config
    optimizer = optimizer_from_query(params)
    if optimizer is not None:
        data["optimizer"] = optimizer
    return _validated_spec(data)


def spec_to_query(canonical: dict) -> dict[str, str]:
    """The inverse of spec_from_query for a canonical spec: a flat, complete permalink."""
    if canonical.get("run") is not None:  # a recorded run's step: the run fixes every other field
        return {"run": canonical["run"], "run_step": str(canonical["run_step"])}
    query: dict[str, str] = {}
    for key in ("model", "tokenizer", "text"):
        if canonical.get(key) is not None:
            query[key] = canonical[key]
    query["seed"] = str(canonical["seed"])
    query["dtype"] = canonical["dtype"]
    query.update(precision_to_query(canonical))
    if canonical.get("tokens") is not None:
        query["tokens"] = ";".join(",".join(map(str, row)) for row in canonical["tokens"])
    for key, value in (canonical["config"] or {}).items():  # None: the model's checkpoint fixes it
        query[key] = str(value).lower() if isinstance(value, bool) else str(value)
    if canonical.get("faults"):
        query["faults"] = ",".join(canonical["faults"])
    query.update(optimizer_to_query(canonical.get("optimizer")))
    if canonical.get("train_steps"):
        query["train_steps"] = str(canonical["train_steps"])
    if canonical.get("quiz") is not None:
        query["quiz"] = str(canonical["quiz"])
    if canonical.get("fault_layer") is not None:
        query["fault_layer"] = str(canonical["fault_layer"])
    return query


def optimizer_from_query(params: Mapping[str, str]) -> dict[str, Any] | None:
    """optimizer=adamw&lr=0.003&beta2=0.99 -> {"name": "adamw", "lr": 0.003, "beta2": 0.99}."""
    given = {k: v for k, v in params.items() if k in OPTIMIZER_FIELDS}
    name = params.get("optimizer") or None
    if name is None:
        if given:
            field = next(iter(given))
            raise SpecError(("query", field), Said("error-query-optimizer-field", field=field))
        return None
    out: dict[str, Any] = {"name": name}
    for field, raw in given.items():
        try:
            out[field] = float(raw)
        except ValueError:
            raise SpecError(("query", field), Said("error-query-not-number", field=field, value=repr(raw))) from None
    return out


def optimizer_to_query(optimizer: dict | None) -> dict[str, str]:
    """The canonical optimizer as query keys: its name and the fields that differ from the
    optimizer's defaults (the permalink stays short; the spec it parses to is the same)."""
    if optimizer is None:
        return {}
    defaults = OPTIMIZERS[optimizer["name"]]()
    query = {"optimizer": optimizer["name"]}
    for field in OPTIMIZER_FIELDS:
        if field in optimizer and optimizer[field] != getattr(defaults, field):
            query[field] = repr(optimizer[field])
    return query
