"""Reading every value of a SmolLM2-135M step in order, xt against the hooks approach (issue 37):
an engineer who wants every activation and its gradient either builds an xt trace and reads it, or
runs transformers with a forward hook on every module that keeps its output and `retain_grad()`s
it, then backward. Not part of the test run; needs the fetched model (`make real-model`), torch and
transformers (a benchmark-only dependency: `pip install -e '.[reference]'`):

    .venv/bin/python benchmarks/read_in_order.py [--positions 32 128 256] [--repeats 5]

xt: forward_backward, then trace[name] for every recorded tensor in the tape's order, then
trace.grad(name) in the backward's order (the walkthrough's records: forward steps, then backward
steps), the process's cache of recomputed segments emptied first, three ways: on the engineer's
own server (the default Settings, this the one trace alive: the build reserves its estimate in a
TraceStore, the trace is cached there, and the recomputed segments may grow into the budget's free
room, app.traces.store); on a busy server, whose traces take that room (the floor alone,
settings.recompute_bytes); and at a bound that holds the whole step. hooks: the model's forward with a
hook on every module, the loss, backward, then every kept output and its .grad read; once as torch
runs it by default (every weight's gradient made too) and once with the weights frozen (the
activations' gradients only: xt makes a weight's gradient only when it is read). One BLAS/torch
thread each, interleaved (each repeat in the order rotated by one), medians; wall and CPU seconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import xt_core  # noqa: E402
from app.checkpoints.registry import load_checkpoint, registry  # noqa: E402
from app.settings import Settings  # noqa: E402
from app.spec import TraceSpec, resolve  # noqa: E402
from app.spec.cost import spec_cost  # noqa: E402
from app.traces.store import TraceStore  # noqa: E402
from benchmarks.machine import cpu_name, load_average  # noqa: E402
from xt_core.recompute import RECOMPUTED  # noqa: E402

NAME = "smollm2-135m"
WHOLE_STEP_BYTES = 8 << 30  # a bound every replay of one step fits under
XT_RUNS = ("xt, own server", "xt, busy server (floor)", "xt, whole step's bound")
MB = 1 << 20


def read_all(trace: xt_core.Trace, peak: list[int]) -> int:
    """Every value in order, then every gradient in the backward's order; the recomputed segments'
    largest bytes into peak."""
    read = 0
    for record in trace.records:
        value = trace[record.name] if record.phase != "backward" else trace.grad(record.name)
        read += value.size
        peak[0] = max(peak[0], RECOMPUTED.nbytes)
    return read


def xt_reading(cfg, params, tokens: np.ndarray, bound: int, peak: list[int]):
    """Build the trace, then read it all, the recomputed segments bounded by `bound` alone."""
    inputs, targets = tokens[:, :-1], tokens[:, 1:]

    def run() -> int:
        RECOMPUTED.clear()
        RECOMPUTED.resize(bound)
        return read_all(xt_core.forward_backward(cfg, params, inputs, targets), peak)

    return run


def xt_on_own_server(tokens: np.ndarray, settings: Settings, peak: list[int]):
    """As the engineer's own server builds and reads it: its estimate reserved in a fresh
    TraceStore (which lends the recomputed segments its free room), built and cached by it
    (TraceStore.get: the checkpoint's weights, loaded once), read all, then forgotten (the next
    run's trace is the one alive)."""
    spec = resolve(TraceSpec.model_validate({"model": NAME, "tokens": tokens[0].tolist()}), settings)
    estimate = spec_cost(spec).nbytes

    def run() -> int:
        RECOMPUTED.clear()
        store = TraceStore(settings)
        read = read_all(store.get(spec, store.reserve(estimate)), peak)
        with store._lock:
            store._forget(spec.id)  # a store's finalizers hold it while its traces live: none is left
        return read

    return run


def hooks_reading(model, tokens: np.ndarray, frozen: bool = False):
    """transformers with a forward hook on every module: keep each output, retain its gradient.
    frozen: no parameter requires a gradient (the embedding's output is made the leaf that does),
    so the backward makes the activations' gradients only, as xt's reads ask (like for like: xt
    makes a weight's gradient only when it is read); else every weight's gradient too (torch's
    default, what an engineer's hooks usually run)."""
    import torch

    inputs, targets = torch.tensor(tokens[:, :-1]), torch.tensor(tokens[:, 1:])
    kept: list = []
    embedding = model.get_input_embeddings()

    def keep(module, args, output):
        out = output[0] if isinstance(output, tuple) else output
        if frozen and module is embedding:
            out = output = out.detach().requires_grad_(True)
        if isinstance(out, torch.Tensor) and out.requires_grad:
            out.retain_grad()
            kept.append(out)
        return output

    def run() -> int:
        handles = [module.register_forward_hook(keep) for module in model.modules()]
        for param in model.parameters():
            param.requires_grad_(not frozen)
        kept.clear()
        model.zero_grad(set_to_none=True)
        logits = model(inputs).logits
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        read = 0
        for out in kept:
            read += out.detach().numpy().size + (out.grad.numpy().size if out.grad is not None else 0)
        for handle in handles:
            handle.remove()
        return read

    return run


def report(T: int, walls: dict[str, list[float]], cpus: dict[str, list[float]]) -> None:
    """Medians, wall and CPU (this thread's: on a machine shared with other jobs wall time also
    counts waiting for a core), each against the hooks' (every weight's gradient made) and the
    frozen hooks' (the activations' only)."""
    hooks = {k: statistics.median(cpus[k]) for k in ("hooks", "hooks, weights frozen")}
    for k in walls:
        wall, cpu = statistics.median(walls[k]), statistics.median(cpus[k])
        print(
            f"T={T:4d} {k:24} {wall:6.2f} s wall (range {min(walls[k]):.2f}-{max(walls[k]):.2f}), "
            f"{cpu:6.2f} s CPU; {cpu / hooks['hooks']:4.2f}x hooks CPU, {cpu / hooks['hooks, weights frozen']:4.2f}x "
            "frozen hooks CPU (target <= 1.2)"
        )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, nargs="+", default=[32, 128, 256])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--models-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    import torch

    from tests.helpers.hf_reference import load_hf

    settings = Settings(models_dir=args.models_dir) if args.models_dir else Settings()
    info = registry(settings).info(NAME)
    checkpoint = load_checkpoint(info)
    model = load_hf(Path(info.path))
    torch.set_num_threads(1)
    print(
        f"CPU: {cpu_name()}; load average {load_average():.1f}; one BLAS/torch thread each; torch {torch.__version__}; "
        f"xt from {Path(xt_core.__file__).parent.parent}"
    )
    rng = np.random.default_rng(0)
    for T in args.positions:
        tokens = rng.integers(0, checkpoint.cfg.vocab_size, (1, T + 1))
        floor = min(settings.recompute_bytes, settings.cache_bytes // 4)
        peaks = {k: [0] for k in XT_RUNS}
        runs = {
            XT_RUNS[0]: xt_on_own_server(tokens, settings, peaks[XT_RUNS[0]]),
            XT_RUNS[1]: xt_reading(checkpoint.cfg, checkpoint.params, tokens, floor, peaks[XT_RUNS[1]]),
            XT_RUNS[2]: xt_reading(checkpoint.cfg, checkpoint.params, tokens, WHOLE_STEP_BYTES, peaks[XT_RUNS[2]]),
            "hooks": hooks_reading(model, tokens),
            "hooks, weights frozen": hooks_reading(model, tokens, frozen=True),
        }
        walls: dict[str, list[float]] = {k: [] for k in runs}
        cpus: dict[str, list[float]] = {k: [] for k in runs}
        with threadpool_limits(limits=1, user_api="blas"):
            for fn in runs.values():
                fn()
            for repeat in range(args.repeats):
                names = list(runs)  # each repeat starts one later: no run always follows the same one
                for k in names[repeat % len(names) :] + names[: repeat % len(names)]:
                    wall, cpu = time.perf_counter(), time.thread_time()
                    runs[k]()
                    walls[k].append(time.perf_counter() - wall)
                    cpus[k].append(time.thread_time() - cpu)
        report(T, walls, cpus)
        held = ", ".join(f"{k} {peak[0] / MB:.0f} MB" for k, peak in peaks.items())
        print(f"        recomputed segments at most: {held}; load average {load_average():.1f}")
    RECOMPUTED.resize(settings.recompute_bytes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
