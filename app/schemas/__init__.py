"""What every JSON route of /api answers, as pydantic models: the route decorators name them
(`response_model=`) so /openapi.json describes each answer and schemathesis checks the real
answers against it. One module per resource, beside app/routes; the shared pieces (a figure
entry, a gradient check, a config, a spec) in common.py.

A route that returns an encoded Response (the step views, cached as bytes) is documented by its
model and not validated again; a route that returns a dict is validated and serialized by it,
so its model lists exactly the keys the dict has (extra keys are refused: additionalProperties
is false, and schemathesis then reports an answer whose fields the model does not name)."""
