"""The client's-mistake error every layer of the app raises: a leaf module (it imports only
app.checkpoints.formats, which imports nothing), so every app.spec module and the routes raise
it without importing each other."""

from __future__ import annotations

import json
import math

from pydantic_core import PydanticCustomError

from app.checkpoints.formats import UPLOAD_SUFFIXES

# Past this a message shows an integer by its size, not its digits (a JSON integer may have thousands).
SHOWN_DIGITS = 12


def shown_number(value) -> str:
    """A number as a message quotes it: 1e+308 for a huge integer, never hundreds of its digits."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**SHOWN_DIGITS:
        try:
            return f"{float(value):.3g}"
        except OverflowError:  # past float's range (~1.8e308)
            return f"an integer of {value.bit_length()} bits"
    return str(value)


def not_a_boolean(value):
    """A pydantic before-validator for number fields: JSON true/false is not a number (lax
    mode would read it as 1/0). Strings still pass: /walk query values are parsed from text."""
    if isinstance(value, bool):
        raise ValueError(f"must be a number, not {str(value).lower()}")
    return value


def whole_number(value, info):
    """A pydantic before-validator for integer fields: not true/false (not_a_boolean), and a number
    written with an exponent (1e20, 1e308) read as the integer it is, so that the range check after
    validation names the field's limit (pydantic's own parsing stops past 2^63 with "exceeded
    maximum size", naming no limit). A fraction or an infinity is left to pydantic's message."""
    not_a_boolean(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def an_object_like(example: dict, hint: str = ""):
    """A pydantic before-validator for a field holding a JSON object (or null): anything else is
    refused showing the form it takes (pydantic's "Input should be a valid dictionary" shows none)."""
    kinds = {str: "a string", bool: "true/false", int: "a number", float: "a number", list: "a list"}
    form = json.dumps(example, separators=(", ", ": "))

    def validate(value, info):
        if value is None or isinstance(value, dict):
            return value
        kind = kinds.get(type(value), type(value).__name__)
        raise PydanticCustomError(
            "value_error", "{field} must be an object such as {form}{hint}, got {kind}",
            {"field": info.field_name, "form": form, "hint": hint, "kind": kind},
        )  # fmt: skip

    return validate


def only_a_boolean(value):
    """A pydantic before-validator for boolean fields: a JSON number is not true/false."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(f"must be true or false, not {value}")
    return value


class SpecError(ValueError):
    """A client's mistake in a spec: `loc` names the field, the message says the rule."""

    def __init__(self, loc: tuple, msg: str):
        super().__init__(msg)
        self.loc = tuple(loc)
        self.msg = msg

    def detail(self) -> list[dict]:
        return [{"loc": list(self.loc), "msg": self.msg, "type": "value_error"}]


# OpenAPI: the answers besides 200 and FastAPI's own 422 that routes give (docs/api.md, "Errors").
_MESSAGE = {"type": "object", "properties": {"detail": {"type": "string"}}, "required": ["detail"]}
_FIELDS = {"$ref": "#/components/schemas/HTTPValidationError"}


def _answer(description: str, schema: dict = _MESSAGE) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


NOT_FOUND = {404: _answer("unknown trace id (POST its spec again), step out of range, or no such tensor")}
BAD_FIELD = {422: _answer("a bad field: `loc` names it, `msg` gives the rule", _FIELDS)}
BAD_BODY = {400: _answer("the body could not be parsed")}
QUIZ_SEALED = {403: _answer("a quiz not yet answered: its verdicts stay hidden (probe a step, or answer)")}
PROBES_SPENT = {409: _answer("every probe of this quiz is spent")}
CLASS_QUIZ = {409: _answer("a class's quiz: its poll answers it and its presenter reveals it")}
VOTERS_LIMITED = {429: _answer("this address was given voters_per_address learner identities this hour")}
UPLOAD_REFUSED = {
    413: _answer("the upload is larger than max_upload_bytes"),
    415: _answer(f"not multipart/form-data, or not a {' / '.join(UPLOAD_SUFFIXES)} file"),
    507: _answer("the server's uploaded models already fill max_upload_store_bytes"),
}


def check_between(loc: tuple, value, low, high, what: str = "") -> None:
    """SpecError at `loc` unless low <= value <= high (None passes: the field was not given)."""
    if value is not None and not low <= value <= high:
        raise SpecError(loc, f"{loc[-1]} must be between {low} and {high}{what}, got {shown_number(value)}")


def check_range(field: str, value: int, size: int, what: str) -> None:
    """SpecError at the query field unless 0 <= value < size; `what` says where size comes from."""
    if not 0 <= value < size:
        raise SpecError(
            ("query", field), f"{field} must be between 0 and {size - 1} ({what}), got {shown_number(value)}"
        )
