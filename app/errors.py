"""The client's-mistake error every layer of the app raises: a leaf module (it imports only
app.checkpoints.formats, which imports nothing, and the words layer), so every app.spec module and
the routes raise it without importing each other. Its message is a catalogue sentence
(app.words.said.Said: English as a str, the request's language in the answer; `loc` and `type`
stay the same in every language)."""

from __future__ import annotations

import json
import math

from pydantic_core import PydanticCustomError

from app import words
from app.checkpoints.formats import UPLOAD_SUFFIXES
from app.words import DEFAULT
from app.words.said import Said, in_language

# Past this a message shows an integer by its size, not its digits (a JSON integer may have thousands).
SHOWN_DIGITS = 12


def shown_number(value) -> str:
    """A number as a message quotes it: 1e+308 for a huge integer, never hundreds of its digits."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**SHOWN_DIGITS:
        try:
            return f"{float(value):.3g}"
        except OverflowError:  # past float's range (~1.8e308)
            return Said("error-integer-of-bits", bits=value.bit_length())
    return str(value)


def not_a_boolean(value):
    """A pydantic before-validator for number fields: JSON true/false is not a number (lax
    mode would read it as 1/0). Strings still pass: /walk query values are parsed from text."""
    if isinstance(value, bool):
        raise ValueError(Said("error-not-a-boolean-number", value=str(value).lower()))
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


def an_object_like(example: dict, hint: str | None = None):
    """A pydantic before-validator for a field holding a JSON object (or null): anything else is
    refused showing the form it takes (pydantic's "Input should be a valid dictionary" shows none);
    `hint`: the id of a message that adds to the form."""
    kinds = {
        str: "error-kind-string", bool: "error-kind-boolean", int: "error-kind-number", float: "error-kind-number",
        list: "error-kind-list",
    }  # fmt: skip
    form = json.dumps(example, separators=(", ", ": "))

    def validate(value, info):
        if value is None or isinstance(value, dict):
            return value
        kind = kinds.get(type(value))
        kind_said = Said(kind) if kind else type(value).__name__
        hinted = {"hint": Said(hint)} if hint else {}
        said = Said(
            "error-not-an-object-hinted" if hint else "error-not-an-object",
            field=info.field_name, form=form, kind=kind_said, **hinted,
        )  # fmt: skip
        # pydantic formats the template with the context: the English is the whole message
        raise PydanticCustomError("value_error", "{said}", {"said": said})

    return validate

    return validate


def only_a_boolean(value):
    """A pydantic before-validator for boolean fields: a JSON number is not true/false."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(Said("error-not-a-boolean", value=str(value)))
    return value


# pydantic's own messages by their `type`, for the languages besides English (whose text is pydantic's).
PYDANTIC_MESSAGES = {
    "missing": "error-pydantic-missing",
    "extra_forbidden": "error-pydantic-extra-forbidden",
    "int_type": "error-pydantic-int-type",
    "int_parsing": "error-pydantic-int-parsing",
    "int_from_float": "error-pydantic-int-from-float",
    "float_type": "error-pydantic-float-type",
    "float_parsing": "error-pydantic-float-parsing",
    "finite_number": "error-pydantic-finite-number",
    "bool_type": "error-pydantic-bool-type",
    "bool_parsing": "error-pydantic-bool-parsing",
    "string_type": "error-pydantic-string-type",
    "string_unicode": "error-pydantic-string-unicode",
    "string_too_long": "error-pydantic-string-too-long",
    "string_too_short": "error-pydantic-string-too-short",
    "list_type": "error-pydantic-list-type",
    "dict_type": "error-pydantic-dict-type",
    "model_type": "error-pydantic-model-type",
    "too_long": "error-pydantic-too-long",
    "literal_error": "error-pydantic-literal-error",
    "greater_than_equal": "error-pydantic-greater-than-equal",
    "greater_than": "error-pydantic-greater-than",
    "less_than_equal": "error-pydantic-less-than-equal",
    "less_than": "error-pydantic-less-than",
}


def pydantic_message(error: dict, lang: str) -> str:
    """pydantic's message in `lang`: a validator's own Said (the validators above) as it reads
    there, pydantic's own sentence through PYDANTIC_MESSAGES (English: pydantic's text as it is),
    anything else as pydantic wrote it."""
    ctx = error.get("ctx") or {}
    reason = ctx.get("error")
    reason = reason.args[0] if isinstance(reason, ValueError) and reason.args else None
    if isinstance(ctx.get("said"), Said):
        return ctx["said"].in_(lang)
    if isinstance(reason, Said):
        return words.t(lang, "error-value-error", reason=reason.in_(lang))
    message_id = PYDANTIC_MESSAGES.get(str(error["type"]))
    if lang == words.DEFAULT or message_id is None:
        return str(error["msg"])
    return words.t(lang, message_id, **{name: str(value) for name, value in ctx.items()})


class PydanticSaid:
    """One of pydantic's errors as a value inside a Said: it reads as pydantic_message says, in the sentence's language."""

    def __init__(self, error: dict):
        self.error = {"type": error["type"], "msg": error["msg"], "ctx": error.get("ctx")}

    def __str__(self) -> str:
        return self.in_(DEFAULT)

    def in_(self, lang: str) -> str:
        return pydantic_message(self.error, lang)


class SpecError(ValueError):
    """A client's mistake in a spec: `loc` names the field, the message says the rule."""

    def __init__(self, loc: tuple, msg: str):
        super().__init__(msg)
        self.loc = tuple(loc)
        self.msg = msg  # a Said (English as a str) or, from code not yet on the words layer, English

    def detail(self, lang: str = DEFAULT) -> list[dict]:
        return [{"loc": list(self.loc), "msg": in_language(self.msg, lang), "type": "value_error"}]

    def __reduce__(self):  # raised in a worker process, answered by the server: loc and message kept
        return SpecError, (self.loc, self.msg)


# OpenAPI: the answers besides 200 and FastAPI's own 422 that routes give (docs/api.md, "Errors").
_MESSAGE = {"type": "object", "properties": {"detail": {"type": "string"}}, "required": ["detail"]}
_FIELDS = {"$ref": "#/components/schemas/HTTPValidationError"}


def _answer(description: str, schema: dict = _MESSAGE) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


NOT_FOUND = {404: _answer("unknown trace id (POST its spec again), step out of range, or no such tensor")}
BAD_FIELD = {422: _answer("a bad field: `loc` names it, `msg` gives the rule", _FIELDS)}
BAD_BODY = {400: _answer("the body could not be parsed")}
QUIZ_SEALED = {403: _answer("a quiz not yet answered: its verdicts stay hidden (probe a step, or answer)")}
QUIZ_WEIGHTS = {
    403: _answer("a quiz runs on weights of its own: a parameter's value (or the update's ΔW) waits for the answer")
}
QUIZ_COMPARED = {403: _answer("a quiz's trace cannot be compared: the difference would point at its fault")}
QUIZ_HEALTH = {403: _answer("a quiz's trace: where its numbers overflow could point at its fault")}
PROBES_STORE_DOWN = {
    503: _answer("the store that counts a quiz's probes (Redis) did not answer: retry after Retry-After")
}
PROBES_SPENT = {409: _answer("every probe of this quiz is spent")}
CLASS_QUIZ = {409: _answer("a class's quiz: its poll answers it and its presenter reveals it")}
VOTERS_LIMITED = {429: _answer("this address was given voters_per_address learner identities this hour")}
DOWNLOADS_LIMITED = {
    429: _answer(
        "this client's .npy downloads under way would pass max_download_bytes_per_client: retry after Retry-After"
    )
}
UPLOAD_REFUSED = {
    413: _answer("the upload is larger than max_upload_bytes"),
    415: _answer(f"not multipart/form-data, or not a {' / '.join(UPLOAD_SUFFIXES)} file"),
    507: _answer("the server's uploaded models already fill max_upload_store_bytes"),
}


def check_between(loc: tuple, value, low, high) -> None:
    """SpecError at `loc` unless low <= value <= high (None passes: the field was not given)."""
    if value is not None and not low <= value <= high:
        raise SpecError(
            loc, Said("error-between", field=loc[-1], low=str(low), high=str(high), value=shown_number(value))
        )


def check_range(field: str, value: int, size: int, what: str) -> None:
    """SpecError at the query field unless 0 <= value < size; `what` says where size comes from."""
    if not 0 <= value < size:
        raise SpecError(
            ("query", field),
            Said("error-out-of-range", field=field, last=str(size - 1), why=what, value=shown_number(value)),
        )
