"""How fast a crafted GGUF is refused (issue 35, finding 9): the review's 125-byte file, an
array declared with 2^50 items, which GGUFReader alone parses forever (growing ~80 MB/s).
Prints the refusal's time (best of --repeat) and the bytes Python allocated for it, and the
bounded header look's time on a real file (--real, SmolLM2 by default) that it then lets through.

    python benchmarks/crafted_gguf.py
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.core.checkpoint.test_gguf_bounds import crafted_array_file  # noqa: E402
from xt_core.checkpoint.common import CheckpointError  # noqa: E402
from xt_core.checkpoint.gguf_bounds import check_gguf_header  # noqa: E402
from xt_core.checkpoint.gguf_file import import_gguf  # noqa: E402


def _refusal(path: Path) -> tuple[float, int, str]:
    tracemalloc.start()
    started = time.perf_counter()
    try:
        import_gguf(path)
    except CheckpointError as exc:
        said = str(exc)
    else:
        raise SystemExit(f"{path} was not refused")
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak, said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--real", type=Path, default=ROOT / "data" / "models" / "smollm2-135m.gguf")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "crafted.gguf"
        path.write_bytes(crafted_array_file())
        runs = [_refusal(path) for _ in range(args.repeat)]
    best = min(seconds for seconds, _, _ in runs)
    print(f"crafted GGUF ({len(crafted_array_file())} bytes): refused in {best * 1e3:.2f} ms (best of {args.repeat}), "
          f"{max(peak for _, peak, _ in runs):,} bytes allocated at most; {runs[0][2]}")  # fmt: skip
    if args.real.exists():
        started = time.perf_counter()
        check_gguf_header(args.real)
        print(f"bounded header look on {args.real.name}: {time.perf_counter() - started:.3f} s, passed")


if __name__ == "__main__":
    main()
