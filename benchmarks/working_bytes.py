"""The working bytes of the jobs on a built trace (app/traces/working.py) against their estimates:
each request alone, in process (FastAPI's TestClient, default settings), its tracemalloc peak over
what was traced before it (numpy's arrays are traced), on SmolLM2-135M with the texts of
benchmarks/memory_mix.py (84 positions; float64: 42). What stays (a recomputed segment, a cached
answer) is inside the peak. Needs the fetched model (`make real-model`). Not part of the test run:

    .venv/bin/python benchmarks/working_bytes.py
"""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.traces import working  # noqa: E402
from benchmarks.memory_mix import SMOL, text  # noqa: E402
from tests.helpers.client import make_client  # noqa: E402
from tests.helpers.specs import CLASS_CONFIG, CLASS_TEXT  # noqa: E402

MiB = 1 << 20
ROWS: list[tuple[str, float, float]] = []


def peak_of(request) -> float:
    """MiB the request's peak took over what was traced before it."""
    before = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    answer = request()
    assert answer.status_code == 200, answer.text[:300]
    return (tracemalloc.get_traced_memory()[1] - before) / MiB


def measured(job: str, estimate: int, requests) -> None:
    """The largest peak of `requests` beside the job's estimate."""
    ROWS.append((job, max(peak_of(r) for r in requests), estimate / MiB))
    print(f"| {job} | {ROWS[-1][1]:,.0f} | {ROWS[-1][2]:,.0f} |", flush=True)


def traced(client, body: dict):
    """POST the spec: its summary and its trace (the server's own object)."""
    summary = client.post("/api/traces", json=body).json()
    store = client.app.state.services.store
    return summary, store.get(store.spec(summary["id"]))


def steps(client, summary: dict, label: str, pick, estimate: int) -> None:
    url = f"/api/traces/{summary['id']}/steps"
    chosen = [s for s in summary["steps"] if pick(s)]
    measured(label, estimate, [lambda s=s: client.get(f"{url}/{s['index']}") for s in chosen])


def float32_jobs(client) -> None:
    summary, trace = traced(client, {"model": SMOL, "text": text(1)})
    layer0 = lambda s: not s["name"].startswith("layers.") or s["name"].startswith("layers.0.")  # noqa: E731
    steps(
        client,
        summary,
        "a view, float32 (every kind: layer 0, embedding, head, loss)",
        layer0,
        working.view_bytes(trace),
    )
    url = f"/api/traces/{summary['id']}"
    first = summary["steps"][0]["index"]
    measured(
        "the first check (builds the twin)",
        working.check_bytes(trace, first),
        [lambda: client.get(f"{url}/steps/{first}/check")],
    )
    later = [s["index"] for s in summary["steps"][1:3] + summary["steps"][-3:]]
    checks = [lambda i=i: client.get(f"{url}/steps/{i}/check") for i in later]
    measured("a later check (float64 segments)", working.check_bytes(trace, later[0]), checks)
    grads = [lambda: client.get(f"{url}/tensors/tok_embeddings", params={"grad": "true"})] * 2
    measured("the embedding's gradient, .npy", working.tensor_bytes(trace, "tok_embeddings", True), grads)
    other, _ = traced(client, {"model": SMOL, "text": text(5)})
    names = [s["name"] for s in summary["steps"]]
    compares = [lambda i=i: client.get(f"{url}/steps/{i}/compare/{other['id']}") for i in (0, names.index("logits"))]
    logits = 8 * trace.tokens.size * trace.cfg.vocab_size
    measured("a compare (the embedding, the logits)", working.compare_bytes(trace, logits), compares)


def other_jobs(client) -> None:
    summary, trace = traced(client, {"model": SMOL, "text": text(2), "optimizer": {"name": "adamw"}})
    last = summary["steps"][-1]["index"]
    measured(
        "the update step's check (AdamW)",
        working.check_bytes(trace, last),
        [lambda: client.get(f"/api/traces/{summary['id']}/steps/{last}/check")],
    )
    summary, trace = traced(client, {"model": SMOL, "text": text(3), "faults": ["softmax_missing_sum_term"]})
    backward = [s for s in summary["steps"] if s["phase"] == "backward"]
    in_layers = [s["index"] for s in backward if s["name"].startswith("layers.")]
    outside = [s["index"] for s in backward if not s["name"].startswith("layers.")]
    client.get(f"/api/traces/{summary['id']}/steps/{in_layers[0]}/diff")  # the correct trace built first
    for label, picked in (("a layer's step", in_layers[1::40]), ("a step outside the layers", outside)):
        diffs = [lambda i=i: client.get(f"/api/traces/{summary['id']}/steps/{i}/diff") for i in picked]
        estimate = max(working.diff_bytes(trace, i) for i in picked)
        measured(f"a diff, {label} (the correct trace built)", estimate, diffs)
    summary, trace = traced(client, {"model": SMOL, "text": text(7, repeat=2), "dtype": "float64"})
    layer0 = lambda s: not s["name"].startswith("layers.") or s["name"].startswith("layers.0.")  # noqa: E731
    steps(client, summary, "a view, float64", layer0, working.view_bytes(trace))
    body = {"config": CLASS_CONFIG, "tokenizer": "byte", "text": CLASS_TEXT, "seed": 7}
    summary, trace = traced(client, body)
    every = summary["steps"][1:]  # after the first: the words and figures' one-time loads
    estimate = working.view_bytes(trace) + working.check_bytes(trace)  # a small model's view checks its step
    steps(client, summary, "a view, the class preset (its check inside)", lambda s: s in every, estimate)


def main() -> None:
    tracemalloc.start()
    print("| job | measured peak MiB | estimate MiB |\n|---|---|---|")
    with make_client(models_dir=Path("data/models")) as client:
        float32_jobs(client)
        other_jobs(client)
    missed = [job for job, peak, estimate in ROWS if peak > estimate]
    print(f"\nestimates below the measured peak: {missed or 'none'}")


if __name__ == "__main__":
    main()
