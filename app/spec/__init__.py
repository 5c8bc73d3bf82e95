"""The trace spec: what a user asks for (JSON body or /walk query string), validated against the
limits in Settings and resolved into a config, token ids and a stable id.

`schema` is the JSON shape, `query` the /walk query string, `resolve` the validation (with
`checkpoint`, `training` and `faults` for the model, optimizer and bug-lab fields), `form` the
home form, `presets` the random-init choices.
"""

from app.errors import SpecError
from app.spec.query import spec_from_query, spec_to_query
from app.spec.resolve import ResolvedSpec, resolve, spec_id, without_faults
from app.spec.schema import CONFIG_FIELDS, DEFAULT_CONFIG, DEFAULT_TEXT, TraceSpec

__all__ = [
    "CONFIG_FIELDS",
    "DEFAULT_CONFIG",
    "DEFAULT_TEXT",
    "ResolvedSpec",
    "SpecError",
    "TraceSpec",
    "resolve",
    "spec_from_query",
    "spec_id",
    "spec_to_query",
    "without_faults",
]
