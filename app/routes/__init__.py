"""Every route of the app, by resource, in one place (each module's router lists its own):

| module | routes |
|---|---|
| meta | GET /healthz |
| traces | POST /api/traces; GET /api/traces/{id}/steps/{i}, .../steps/{i}/head, .../jacobian, .../tensors/{name} |
| buglab | GET /api/faults, /api/traces/{id}/checks, .../steps/{i}/diff; GET .../quiz; POST .../quiz/probe, .../quiz/answer; GET /quiz |
| checkpoints | GET, POST /api/models; GET /api/tokenize |
| training | GET /api/traces/{id}/progress, /api/traces/{id}/queue, /api/traces/{id}/update |
| precision | GET /api/traces/{id}/precision (a bfloat16 or float16 step's numbers' health) |
| runs | GET /api/runs, /api/runs/{name}; POST /api/runs, GET /api/runs/{name}/progress (recorded training runs, one recorded from the page: docs/film.md) |
| film | GET /film (a recorded run as a film: its curves and a scrubber) |
| film_api | GET /api/runs/{name}/attention, /api/runs/{name}/composition (the film's frames; which gradients build the head) |
| bench | GET /api/traces/{id}/tensors/{name}/slice, /api/traces/{a}/steps/{i}/compare/{b} |
| pages | GET /, /walk |
| assets | GET /assets/plotly-{version}-{hash}.min.js, /assets/plotly-locale-{lang}.js (and /static, mounted by main) |
| words | GET /words/{lang}.ftl (the Fluent catalogue the pages read; /vendor/fluent, mounted by main) |
| docs | GET /docs, /docs/oauth2-redirect (and /assets/swagger, mounted by main) |
| sessions | POST /api/sessions; GET /api/sessions/{code}, .../events, .../qr.svg; POST .../state, .../poll, .../answers; GET /api/lessons, /api/lessons/{name}, /lessons/{name}, /join, /join/{code} |
"""

from fastapi import APIRouter

from app.routes import (
    assets,
    bench,
    buglab,
    checkpoints,
    docs,
    film,
    film_api,
    meta,
    pages,
    precision,
    runs,
    sessions,
    traces,
    training,
    words,
)

ROUTERS: list[APIRouter] = [
    meta.router,
    traces.router,
    bench.router,
    buglab.router,
    checkpoints.router,
    training.router,
    precision.router,
    runs.router,
    film.router,
    film_api.router,
    assets.router,
    pages.router,
    words.router,
    docs.router,
    sessions.router,
]
