"""What the server does once before its first request: render a tiny trace (loading what the
first requests would load lazily), then move every object alive out of the garbage
collector's sight."""

from __future__ import annotations

import gc
import threading

from app.settings import Settings
from app.spec import TraceSpec, resolve
from app.steps import summary, view
from app.steps.context import TraceContext
from app.traces.store import build_trace
from xt_core.checks.gradcheck import check_record

# The smallest model that still has every kind of step (warm_up).
WARM_UP_CONFIG = {"n_layer": 1, "n_head": 2, "n_embd": 8, "ffn_hidden": 8, "seq_len": 8}

_settle_lock = threading.Lock()
_settled = False


def settle_heap(templates_env) -> None:
    """Once per process: creates what the first requests would create lazily (warm_up), then
    moves every object alive (modules, classes, routes, Pydantic's validators, Plotly's 10,000
    validator entries: ~100,000 objects) out of the garbage collector's sight for good.

    Why: a full collection walks every tracked object while holding the GIL, pausing the event
    loop and so /healthz; measured 170-250 ms under the load test with them (on 2 shared cores
    the walk is cache-bound: ~1.5 us an object), and they live as long as the process anyway."""
    global _settled
    with _settle_lock:
        if _settled:
            return
        warm_up(templates_env)
        gc.collect()  # only live objects get frozen, never garbage a collection would free
        gc.freeze()
        _settled = True


def warm_up(templates_env) -> None:
    """Renders every step of a tiny trace (not kept) and compiles every page template: it loads
    Plotly's validators, the LaTeX converter's tables and Jinja's compiled templates now
    (~1 s), before settle_heap freezes them, rather than during the first requests."""
    settings = Settings()
    spec = resolve(TraceSpec(config=WARM_UP_CONFIG, text="abcab", seed=0), settings)
    ctx = TraceContext(spec, build_trace(spec), settings)
    summary.trace_summary(ctx)
    for index in range(len(ctx.trace.records)):
        view.step_view_json(ctx, index, 0, 0, check_record(ctx.trace, index))
    for name in templates_env.list_templates():  # the pages and every template they include
        templates_env.get_template(name)
