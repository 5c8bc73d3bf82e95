"""The client's-mistake error every layer of the app raises: a leaf module, so the spec's
helpers (app.spec_models) and app.spec can both raise it without importing each other."""

from __future__ import annotations


class SpecError(ValueError):
    """A client's mistake in a spec: `loc` names the field, the message says the rule."""

    def __init__(self, loc: tuple, msg: str):
        super().__init__(msg)
        self.loc = tuple(loc)
        self.msg = msg

    def detail(self) -> list[dict]:
        return [{"loc": list(self.loc), "msg": self.msg, "type": "value_error"}]
