"""The 8-student mix of issue 35 (finding 7) against a fresh real server with the default settings,
its RSS polled every 50 ms: the peak while the class works and the RSS once the server is idle,
against the stated bound (cache_bytes + 512 MB + SmolLM2's 538 MB of weights: 2,586 MB). Each
student from its own loopback address (127.0.0.2-9), all at once:

    checks    a SmolLM2 text (84 positions, as every SmolLM2 text here but the float64), GET .../checks until complete, views of six steps
    adamw     a SmolLM2 text with AdamW (an update step): its view and its check
    fault     a SmolLM2 text with a fault: the diffs of three backward steps (each builds the
              correct twin's trace: the same text without the fault)
    compare   two SmolLM2 texts: compares on the embedding's step and the head's
    npy       a SmolLM2 text: its embedding's gradient as .npy, three times
    float64   a SmolLM2 text in float64 (42 positions: ~1.4 GB estimated), then a view
    teacher   the class preset training 30 AdamW steps
    tiny      a tiny spec, a new seed every second, and a view of each

Needs the fetched model (`make real-model`). Not part of the test run:

    .venv/bin/python benchmarks/memory_mix.py [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.settings import Settings  # noqa: E402
from tests.helpers.memory_cases import SMOLLM2_WEIGHTS_MB, TEXT, rss_polled  # noqa: E402
from tests.helpers.server import pct, rss_mb, start_server, stop_server, wait_ready, wait_until_idle  # noqa: E402
from tests.helpers.specs import CLASS_CONFIG, CLASS_TEXT, SMALL_SPEC  # noqa: E402

MB = 1 << 20
IDLE_WAIT_S = (
    1800  # the checks student's every-step checks of SmolLM2 (1,092 steps): ~14 min on a quiet Intel Xeon core
)
SMOL = "smollm2-135m"


def text(k: int, repeat: int = 4) -> str:
    """Each student's own text (84 positions; a digit is one token: every text as long)."""
    return f"{TEXT * repeat} {k}"


async def post(http: httpx.AsyncClient, body: dict, answers: list[int]) -> dict | None:
    posted = await http.post("/api/traces", json=body)
    answers.append(posted.status_code)
    return posted.json() if posted.status_code == 200 else None


async def get(http: httpx.AsyncClient, url: str, answers: list[int], **params) -> httpx.Response:
    answer = await http.get(url, params=params)
    answers.append(answer.status_code)
    return answer


async def checks(http, answers):
    trace = await post(http, {"model": SMOL, "text": text(1)}, answers)
    if trace is None:
        return
    for _ in range(30):  # its progress for a while; the job goes on in the background
        if (await get(http, f"/api/traces/{trace['id']}/checks", answers)).json().get("complete", True):
            break
        await asyncio.sleep(1.0)
    steps = trace["steps"]
    for step in steps[:: max(1, len(steps) // 6)][:6]:
        await get(http, f"/api/traces/{trace['id']}/steps/{step['index']}", answers)


async def adamw(http, answers):
    trace = await post(http, {"model": SMOL, "text": text(2), "optimizer": {"name": "adamw"}}, answers)
    if trace is not None:
        last = trace["steps"][-1]["index"]
        await get(http, f"/api/traces/{trace['id']}/steps/{last}", answers)
        await get(http, f"/api/traces/{trace['id']}/steps/{last}/check", answers)


async def fault(http, answers):
    trace = await post(http, {"model": SMOL, "text": text(3), "faults": ["softmax_missing_sum_term"]}, answers)
    if trace is not None:
        backward = [s["index"] for s in trace["steps"] if s["phase"] == "backward"]
        for index in (backward[0], backward[len(backward) // 2], backward[-1]):
            await get(http, f"/api/traces/{trace['id']}/steps/{index}/diff", answers)


async def compare(http, answers):
    a = await post(http, {"model": SMOL, "text": text(4)}, answers)
    b = await post(http, {"model": SMOL, "text": text(5)}, answers)
    if a is not None and b is not None:
        names = [s["name"] for s in a["steps"]]
        for index in (0, names.index("logits")):
            await get(http, f"/api/traces/{a['id']}/steps/{index}/compare/{b['id']}", answers)


async def npy(http, answers):
    trace = await post(http, {"model": SMOL, "text": text(6)}, answers)
    for _ in range(3 if trace is not None else 0):
        await get(http, f"/api/traces/{trace['id']}/tensors/tok_embeddings", answers, grad="true")


async def float64(http, answers):
    trace = await post(http, {"model": SMOL, "text": text(7, repeat=2), "dtype": "float64"}, answers)
    if trace is not None:
        await get(http, f"/api/traces/{trace['id']}/steps/{trace['steps'][5]['index']}", answers)


async def teacher(http, answers):
    body = {"config": CLASS_CONFIG, "tokenizer": "byte", "text": CLASS_TEXT, "seed": 7}
    await post(http, {**body, "optimizer": {"name": "adamw"}, "train_steps": 30}, answers)


TINY_SECONDS: list[float] = []  # the tiny student's POSTs this run: its build's wait in the mix


async def tiny(http, answers):
    for seed in range(200, 215):
        started = time.perf_counter()
        trace = await post(http, {**SMALL_SPEC, "seed": seed}, answers)
        TINY_SECONDS.append(time.perf_counter() - started)
        if trace is not None:
            await get(http, f"/api/traces/{trace['id']}/steps/3", answers)
        await asyncio.sleep(1.0)


STUDENTS = [checks, adamw, fault, compare, npy, float64, teacher, tiny]


async def class_works(base: str) -> dict[str, list[int]]:
    async def one(k: int, student) -> list[int]:
        answers: list[int] = []
        transport = httpx.AsyncHTTPTransport(local_address=f"127.0.0.{k + 2}")
        async with httpx.AsyncClient(base_url=base, transport=transport, timeout=900, trust_env=False) as http:
            await student(http, answers)
        return answers

    done = await asyncio.gather(*(one(k, s) for k, s in enumerate(STUDENTS)))
    return {s.__name__: answers for s, answers in zip(STUDENTS, done, strict=True)}


def run_mix(idle_wait: float = IDLE_WAIT_S, sample: str | None = None) -> dict:
    """One run against a fresh server: every student's answers, the peak and idle RSS (MB)."""
    TINY_SECONDS.clear()
    env = {"XT_MODELS_DIR": "data/models"}
    if sample:  # the server's own accounting beside its RSS (benchmarks/variant_app.py)
        server = start_server(env | {"XT_BENCH_SAMPLE": sample}, app="benchmarks.variant_app:app")
    else:
        server = start_server(env)
    try:
        wait_ready(server, 120)
        with rss_polled(server.pid) as samples:
            started = time.perf_counter()
            answers = asyncio.run(class_works(server.base))
            seconds = time.perf_counter() - started
            working = max(samples)  # the class at work; after it, the checks student's job alone
            try:
                wait_until_idle(server.pid, timeout=idle_wait, quiet=2.0)  # the background checks done too
                idle_note = ""
            except AssertionError:
                idle_note = " (checks still running)"
        idle = f"{rss_mb(server.pid):,.0f}{idle_note}"
    finally:
        stop_server(server)
    tiny_wait = f"{pct(TINY_SECONDS, 50):.1f} / {pct(TINY_SECONDS, 95):.1f}"
    peaks = {"peak": max(samples), "working": working}
    return {"answers": answers, "idle": idle, "seconds": seconds, "tiny": tiny_wait} | peaks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--idle-wait", type=float, default=IDLE_WAIT_S, help="seconds to wait for an idle server")
    parser.add_argument("--sample", help="write the server's accounting every 50 ms to SAMPLE.N (run N)")
    args = parser.parse_args()
    bound = Settings().cache_bytes / MB + 512 + SMOLLM2_WEIGHTS_MB
    print(
        f"stated bound {bound:,.0f} MB\n\n| run | seconds | peak RSS MB: the class at work, then its checks | idle RSS MB | within | tiny POST p50 / p95 s | answers not 200 |"
    )
    print("|---|---|---|---|---|---|---|")
    for run in range(1, args.runs + 1):
        mix = run_mix(args.idle_wait, args.sample and f"{args.sample}.{run}")
        refused = {name: [a for a in answers if a != 200] for name, answers in mix["answers"].items()}
        refused = {name: codes for name, codes in refused.items() if codes} or "none"
        within = "yes" if mix["peak"] <= bound and float(mix["idle"].split()[0].replace(",", "")) <= bound else "**no**"
        print(
            f"| {run} | {mix['seconds']:.0f} | {mix['working']:,.0f}, {mix['peak']:,.0f} | {mix['idle']} | {within} | {mix['tiny']} | {refused} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
