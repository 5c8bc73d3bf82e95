"""GPT-2 against torch, like for like (issue 36): one recorded training step of a GPT-2-small-shaped
model (12 layers, width 768, 12 heads, vocabulary 50,257, 64 positions; float32) in xt
(xt_core.forward_backward with every weight gradient kept) against transformers' GPT2LMHeadModel
(eager attention, dropout off) forward + cross-entropy + backward with the same weights, interleaved
in one process with the same BLAS/torch thread count; beside it Llama of the same shape (12 layers,
width 768, 12 heads, SwiGLU hidden 2048: the same parameter count within 1%) against the hand-written
torch reference the other benchmarks use (tests/helpers/torch_reference.py), so the two ratios are
measured on one CPU in one run. Also the trace's bytes (what a served step holds) and the peak
resident memory. Not part of the test run:

    .venv/bin/python benchmarks/gpt2_step_vs_torch.py [--repeats N] [--threads T] [--seq 64]

Needs torch and transformers (the optional extra `reference`).
"""

from __future__ import annotations

import argparse
import functools
import platform
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import xt_core  # noqa: E402
import xt_core.memory  # noqa: E402
from benchmarks.step_vs_torch import torch_runner  # noqa: E402
from xt_core.checkpoint.gpt2_files import tensor_names, to_params  # noqa: E402

SHAPE = dict(vocab_size=50257, n_layer=12, n_head=12, n_kv_head=12, n_embd=768, seq_len=64)
GPT2 = xt_core.Config(family="gpt2", ffn_hidden=4 * 768, **SHAPE)
LLAMA = xt_core.Config(ffn_hidden=2048, **SHAPE)


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def gpt2_pair(seq: int):
    """(xt's step, transformers' step, the xt step's trace) on one batch, the same weights."""
    import torch
    import transformers

    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=GPT2.vocab_size, n_positions=GPT2.seq_len, n_embd=GPT2.n_embd, n_layer=GPT2.n_layer,
        n_head=GPT2.n_head, activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
        attn_implementation="eager",
    )  # fmt: skip
    model = transformers.GPT2LMHeadModel(config).eval()
    state = {name: p.detach().numpy() for name, p in model.named_parameters()}
    params = to_params(GPT2, tensor_names(GPT2), lambda name: state[name])
    ids = np.random.default_rng(0).integers(0, GPT2.vocab_size, size=(1, seq + 1))
    inputs, targets = ids[:, :-1], ids[:, 1:]
    ours = functools.partial(xt_core.forward_backward, GPT2, params, inputs, targets, keep_param_grads=True)
    tokens, target = torch.tensor(inputs), torch.tensor(targets).reshape(-1)

    def theirs():
        model.zero_grad(set_to_none=True)
        logits = model(tokens).logits
        torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), target).backward()

    return ours, theirs


def llama_pair(seq: int):
    params = xt_core.init_params(LLAMA, seed=0, dtype=np.float32)
    ids = np.random.default_rng(0).integers(0, LLAMA.vocab_size, size=(1, seq + 1))
    inputs, targets = ids[:, :-1], ids[:, 1:]
    ours = functools.partial(xt_core.forward_backward, LLAMA, params, inputs, targets, keep_param_grads=True)
    return ours, torch_runner(LLAMA, params, inputs, targets)


def measure(pair, repeats: int) -> tuple[float, float, float]:
    """(xt ms, torch ms, the trace's MB), medians of interleaved runs after one warm-up each."""
    ours, theirs = pair
    trace = ours()
    theirs()
    xt_times, torch_times = [], []
    for _ in range(repeats):
        xt_times.append(_timed(ours))
        torch_times.append(_timed(theirs))
    return 1000 * statistics.median(xt_times), 1000 * statistics.median(torch_times), trace.nbytes() / 1e6


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="BLAS and torch threads")
    parser.add_argument("--seq", type=int, default=64, help="positions (T) of the one sequence")
    parser.add_argument("--models", default="gpt2,llama", help="which, in this order")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    xt_core.memory.keep_freed_memory()
    print(f"cpu: {cpu_name()}; {args.threads} thread(s); numpy {np.__version__}; torch {torch.__version__}")
    print(f"params: gpt2 {GPT2.n_params():,}, llama {LLAMA.n_params():,}; one sequence of T = {args.seq}")
    print(f"{'model':6} {'xt ms':>9} {'torch ms':>9} {'xt/torch':>9} {'trace MB':>9}")
    with threadpool_limits(limits=args.threads, user_api="blas"):
        for name in args.models.split(","):
            make = {"gpt2": gpt2_pair, "llama": llama_pair}[name]
            xt_ms, torch_ms, trace_mb = measure(make(args.seq), args.repeats)
            print(f"{name:6} {xt_ms:9.1f} {torch_ms:9.1f} {xt_ms / torch_ms:9.2f} {trace_mb:9.1f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory of the process: {peak:,.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
