"""The working bytes of the jobs on a built trace (app/traces/working.py) against their estimates:
each request alone, in process (FastAPI's TestClient, default settings), its tracemalloc peak over
what was traced before it (numpy's arrays are traced), on SmolLM2-135M with the texts of
benchmarks/memory_mix.py (85 positions; float64: 43), or texts of `--positions` positions (float64:
as many as the server takes, 55 by default). Before each request the recomputed segments and the
free large buffers go (xt_core.recompute.RECOMPUTED, xt_core.memory.trim_kept): a job replays its
segment and takes its arrays afresh, as it may in a class's mix; a trace the store let go is built
again first (a read of its tokens). A row marked "rebuilt" built one inside the request all the same
(at 256 positions a compare's two traces do not fit beside the first's twin): its peak is counted
from that build's end, as the job's hold starts once its traces are built. What stays (a recomputed
segment, a cached answer) is inside the peak; a download's body is read a piece at a time and
dropped. The head's and the loss's steps are measured one by one (views, the output softmax's
Jacobian, the logits' gradient as .npy, a diff of a faulty output softmax, checks); the update
step's check at 85 positions (AdamW's trace takes no more). Needs the fetched model (`make
real-model`). Not part of the test run:

    .venv/bin/python benchmarks/working_bytes.py [--positions 256]
"""

from __future__ import annotations

import argparse
import gc
import sys
import tracemalloc
import weakref
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.traces import store, working  # noqa: E402
from benchmarks.memory_mix import SMOL, TEXT, text  # noqa: E402
from tests.helpers.client import make_client  # noqa: E402
from tests.helpers.specs import CLASS_CONFIG, CLASS_TEXT  # noqa: E402
from xt_core.memory import trim_kept  # noqa: E402
from xt_core.recompute import RECOMPUTED  # noqa: E402

MiB = 1 << 20
ROWS: list[tuple[str, float, float]] = []
TEXT_POSITIONS = 21  # SmolLM2's tokens in one TEXT; a digit is one token, a space before it another
HEAD_STEPS = ("norm.out", "logits", "output_probs", "token_loss", "loss")  # the head's segment (xt_core.families)


def positions_text(k: int, positions: int | None) -> str:
    """Text k of the mix (None: memory_mix's, 85 positions) or of `positions` positions."""
    if positions is None:
        return text(k)
    copies = max(1, (positions - 2) // TEXT_POSITIONS)  # copies of TEXT: 21 per copy, less one
    digits = positions - TEXT_POSITIONS * copies  # a space, then one token a digit
    return f"{TEXT * copies} {str(k).ljust(digits, '0')}"


def peak_of(request, client, ids) -> tuple[float, bool]:
    """MiB the request's peak took over what was traced before it, its segment replayed afresh, the
    traces `ids` built beforehand (a cheap read brings back one the store let go); and whether it
    built a trace all the same (the store could not keep both of a compare's): then its peak over
    what was traced once the build ended (the trace is the store's, built before the job's hold)."""
    for trace_id in ids:
        client.get(f"/api/traces/{trace_id}/tensors/tokens", params={"format": "json"})
    RECOMPUTED.clear()
    trim_kept(0)
    gc.collect()
    before, build = [tracemalloc.get_traced_memory()[0]], store.build_trace

    def built(*args):
        trace = build(*args)
        before.append(tracemalloc.get_traced_memory()[0])
        tracemalloc.reset_peak()
        return trace

    store.build_trace = built
    tracemalloc.reset_peak()
    try:
        answer = request()
    finally:
        store.build_trace = build
    assert answer.status_code == 200, answer.text[:300]
    return (tracemalloc.get_traced_memory()[1] - before[-1]) / MiB, len(before) > 1


def downloaded(client, url: str, **params):
    """GET a download, its body read a piece at a time and dropped: the server's bytes alone (the
    test client's own copy of a whole .npy would be traced beside them)."""
    with client.stream("GET", url, params=params) as answer:
        if answer.status_code != 200:
            answer.read()
        for _ in answer.iter_raw():
            pass
    return answer


def measured(job: str, estimate: int, requests, client, ids) -> None:
    """The largest peak of `requests` beside the job's estimate (the traces `ids` built before each:
    a row marked "rebuilt" built one all the same, its peak counted from the build's end)."""
    peaks = [peak_of(r, client, ids) for r in requests]
    ROWS.append((job, max(peak for peak, _ in peaks), estimate / MiB))
    mark = " (rebuilt)" if any(rebuilt for _, rebuilt in peaks) else ""
    print(f"| {job}{mark} | {ROWS[-1][1]:,.0f} | {ROWS[-1][2]:,.0f} |", flush=True)


def traced(client, body: dict):
    """POST the spec: its summary and its trace (the server's own object, by a weak reference: held
    here, a trace the store let go would stay counted and keep the next build waiting)."""
    answer = client.post("/api/traces", json=body)
    assert answer.status_code == 200, answer.text[:300]
    summary = answer.json()
    store = client.app.state.services.store
    return summary, weakref.proxy(store.get(store.spec(summary["id"])))


def steps(client, summary: dict, label: str, pick, estimate: int) -> None:
    url = f"/api/traces/{summary['id']}/steps"
    chosen = [s for s in summary["steps"] if pick(s)]
    measured(label, estimate, [lambda s=s: client.get(f"{url}/{s['index']}") for s in chosen], client, [summary["id"]])


def views(client, summary: dict, trace, tag: str) -> None:
    """Two rows: the views of layer 0's steps (each holds its layer's segment) and of the steps outside
    the layers (the embedding, the final norm, the head, the loss: the head's)."""
    layer0 = next(s["index"] for s in summary["steps"] if s["name"].startswith("layers.0."))
    in_layer0 = lambda s: s["name"].startswith("layers.0.")  # noqa: E731
    steps(client, summary, f"a view, {tag}, layer 0's steps", in_layer0, working.view_bytes(trace, layer0))
    outside = lambda s: not s["name"].startswith("layers.")  # noqa: E731
    steps(client, summary, f"a view, {tag}, a step outside the layers", outside, working.view_bytes(trace))


def head_steps(summary: dict, phase: str | None = None) -> list[dict]:
    """The head's and the loss's steps (of one phase)."""
    return [s for s in summary["steps"] if s["name"] in HEAD_STEPS and phase in (None, s["phase"])]


def head_jobs(client, body: dict, tag: str) -> None:
    """Every job on the head's and the loss's steps of a new trace (no answer cached), one row each:
    views, the Jacobian of the output softmax, the logits' gradient as .npy, checks (the float32
    trace's twin built first: the first check's row)."""
    summary, trace = traced(client, body)
    url, ids = f"/api/traces/{summary['id']}", [summary["id"]]
    viewed, download = working.view_bytes(trace), working.tensor_bytes(trace, "logits", True)
    checked = {s["index"]: working.check_bytes(trace, s["index"]) for s in head_steps(summary)}
    for s in head_steps(summary):
        job = f"{tag} view: {s['name']} ({s['phase']})"
        measured(job, viewed, [lambda s=s: client.get(f"{url}/steps/{s['index']}")], client, ids)
    jacobian = [lambda: client.get(f"{url}/jacobian", params={"layer": "output"})]
    measured(f"{tag} the output softmax's Jacobian", viewed, jacobian, client, ids)
    grads = [lambda: downloaded(client, f"{url}/tensors/logits", grad="true")]
    measured(f"{tag} the logits' gradient, .npy", download, grads, client, ids)
    client.get(f"{url}/steps/{summary['steps'][0]['index']}/check")  # the twin built (float32)
    for s in head_steps(summary):
        job = f"{tag} check: {s['name']} ({s['phase']})"
        check = [lambda s=s: client.get(f"{url}/steps/{s['index']}/check")]
        measured(job, checked[s["index"]], check, client, ids)


def head_diffs(client, positions: int | None) -> None:
    """Diffs of every backward step of the head and the loss on a faulty head (the correct trace built)."""
    body = {"model": SMOL, "text": positions_text(6, positions), "faults": ["softmax_ce_normalized_twice"]}
    summary, trace = traced(client, body)
    url = f"/api/traces/{summary['id']}/steps"
    backward = head_steps(summary, "backward")
    estimates = {s["index"]: working.diff_bytes(trace, s["index"]) for s in backward}
    layer = next(s["index"] for s in summary["steps"] if s["phase"] == "backward" and s["name"].startswith("layers."))
    client.get(f"{url}/{layer}/diff")  # the correct trace built first (a layer's diff: its answer not measured)
    for s in backward:
        job = f"float32 diff: {s['name']} (backward, faulty output_probs)"
        diff = [lambda s=s: client.get(f"{url}/{s['index']}/diff")]
        measured(job, estimates[s["index"]], diff, client, [summary["id"]])


def float32_jobs(client, positions: int | None) -> None:
    summary, trace = traced(client, {"model": SMOL, "text": positions_text(1, positions)})
    print(f"| float32: {trace.tokens.shape[1]} positions | | |", flush=True)
    views(client, summary, trace, "float32")
    url = f"/api/traces/{summary['id']}"
    first = summary["steps"][0]["index"]
    measured(
        "the first check (builds the twin)",
        working.check_bytes(trace, first),
        [lambda: client.get(f"{url}/steps/{first}/check")],
        client,
        [summary["id"]],
    )
    later = [s["index"] for s in summary["steps"][1:3] + summary["steps"][-3:]]
    download = working.tensor_bytes(trace, "tok_embeddings", True)
    compared = working.compare_bytes(trace, 8 * trace.tokens.size * trace.cfg.vocab_size)  # the logits
    checks = [lambda i=i: client.get(f"{url}/steps/{i}/check") for i in later]
    measured("a later check (float64 segments)", working.check_bytes(trace, later[0]), checks, client, [summary["id"]])
    head_jobs(client, {"model": SMOL, "text": positions_text(8, positions)}, "float32")
    grads = [lambda: downloaded(client, f"{url}/tensors/tok_embeddings", grad="true")] * 2
    measured("the embedding's gradient, .npy", download, grads, client, [summary["id"]])
    other, _ = traced(client, {"model": SMOL, "text": positions_text(5, positions)})
    names = [s["name"] for s in summary["steps"]]
    compares = [lambda i=i: client.get(f"{url}/steps/{i}/compare/{other['id']}") for i in (0, names.index("logits"))]
    measured("a compare (the embedding, the logits)", compared, compares, client, [summary["id"], other["id"]])


def other_jobs(client, positions: int | None) -> None:
    summary, trace = traced(client, {"model": SMOL, "text": text(2), "optimizer": {"name": "adamw"}})
    last = summary["steps"][-1]["index"]
    measured(
        "the update step's check (AdamW, 85 positions)",
        working.check_bytes(trace, last),
        [lambda: client.get(f"/api/traces/{summary['id']}/steps/{last}/check")],
        client,
        [summary["id"]],
    )
    body = {"model": SMOL, "text": positions_text(3, positions), "faults": ["softmax_missing_sum_term"]}
    summary, trace = traced(client, body)
    backward = [s for s in summary["steps"] if s["phase"] == "backward"]
    in_layers = [s["index"] for s in backward if s["name"].startswith("layers.")]
    outside = [s["index"] for s in backward if not s["name"].startswith("layers.")]
    jobs = {"a layer's step": in_layers[1::40], "a step outside the layers": outside}
    estimates = {label: max(working.diff_bytes(trace, i) for i in picked) for label, picked in jobs.items()}
    client.get(f"/api/traces/{summary['id']}/steps/{in_layers[0]}/diff")  # the correct trace built first
    for label, picked in jobs.items():
        estimate = estimates[label]
        diffs = [lambda i=i: client.get(f"/api/traces/{summary['id']}/steps/{i}/diff") for i in picked]
        measured(f"a diff, {label} (the correct trace built)", estimate, diffs, client, [summary["id"]])
    head_diffs(client, positions)


def float64_jobs(client, positions: int | None) -> None:
    most = next(m for m in client.get("/api/models").json()["models"] if m["name"] == SMOL)["max_positions"]
    float64 = None if positions is None else min(positions, most["float64"]["step"])
    words = (lambda k: text(k, repeat=2)) if float64 is None else (lambda k: positions_text(k, float64))
    summary, trace = traced(client, {"model": SMOL, "text": words(7), "dtype": "float64"})
    print(f"| float64: {trace.tokens.shape[1]} positions | | |", flush=True)
    views(client, summary, trace, "float64")
    head_jobs(client, {"model": SMOL, "text": words(9), "dtype": "float64"}, "float64")


def class_jobs(client) -> None:
    body = {"config": CLASS_CONFIG, "tokenizer": "byte", "text": CLASS_TEXT, "seed": 7}
    summary, trace = traced(client, body)
    every = summary["steps"][1:]  # after the first: the words and figures' one-time loads
    estimate = working.view_bytes(trace) + working.check_bytes(trace)  # a small model's view checks its step
    steps(client, summary, "a view, the class preset (its check inside)", lambda s: s in every, estimate)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=None, help="positions of SmolLM2's texts (default: 85)")
    positions = parser.parse_args().positions
    tracemalloc.start()
    print("| job | measured peak MiB | estimate MiB |\n|---|---|---|")
    with make_client(models_dir=Path("data/models")) as client:
        float32_jobs(client, positions)
        other_jobs(client, positions)
        float64_jobs(client, positions)
        class_jobs(client)
    missed = [job for job, peak, estimate in ROWS if peak > estimate]
    print(f"\nestimates below the measured peak: {missed or 'none'}")


if __name__ == "__main__":
    main()
