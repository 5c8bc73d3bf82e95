"""`xt export`'s sizes and times (issue 27's bounds; docs/export.md quotes the numbers):

    the default walkthrough (the home page's spec)   directory <= 8 MB, single file <= 10 MB, <= 30 s
    a SmolLM2-135M lesson of 15 stops                 directory and single file <= 25 MB

    PYTHONPATH=. python benchmarks/export_sizes.py [--skip-smollm2]

The SmolLM2 lesson is written here (a temporary lessons directory): fifteen stops through layer 0,
the loss and the output, on a short sentence. It needs `xt models fetch smollm2-135m`."""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from app.export import export
from app.settings import get_settings
from app.spec import DEFAULT_CONFIG, DEFAULT_TEXT

STOPS = [
    ("embedding", "forward"),
    ("layers.0.attention_norm.out", "forward"),
    ("layers.0.attention.q_rot", "forward"),
    ("layers.0.attention.scores", "forward"),
    ("layers.0.attention.probs", "forward"),
    ("layers.0.attention.heads", "forward"),
    ("layers.0.feed_forward.swiglu", "forward"),
    ("logits", "forward"),
    ("output_probs", "loss"),
    ("loss", "loss"),
    ("output_probs", "backward"),
    ("logits", "backward"),
    ("layers.0.attention.probs", "backward"),
    ("layers.0.attention.scores", "backward"),
    ("embedding", "backward"),
]


def size(path: Path) -> int:
    return path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def measure(label: str, root: Path, **what) -> None:
    started = time.perf_counter()
    exported = export(out=root / "dir", single=root / "one.html", **what)
    seconds = time.perf_counter() - started
    print(
        f"{label}: {exported.steps} steps, {exported.answers} answers, {seconds:.1f} s; "
        f"directory {size(root / 'dir') / 1e6:.2f} MB, single file {size(root / 'one.html') / 1e6:.2f} MB"
    )
    for part in exported.left_out:
        print(f"  not in it: {part}")


def smollm2_lesson(lessons: Path) -> None:
    steps = "\n".join(
        f'[[steps]]\nname = "{name}"\nphase = "{phase}"\ntakeaway = "Stop {i + 1}."\nnarration = "What to point at."\n'
        for i, (name, phase) in enumerate(STOPS)
    )
    text = 'title = "SmolLM2 in fifteen stops"\nsummary = "A benchmark."\n\n[spec]\nmodel = "smollm2-135m"\n'
    text += 'text = "The cat sat on the mat."\n\n' + steps
    (lessons / "smollm2-tour.toml").write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-smollm2", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        spec = {"config": DEFAULT_CONFIG, "text": DEFAULT_TEXT, "tokenizer": "char", "seed": 0}
        (root / "default").mkdir()
        measure("default walkthrough", root / "default", spec=spec)
        if args.skip_smollm2:
            return
        lessons = root / "lessons"
        lessons.mkdir()
        smollm2_lesson(lessons)
        (root / "smollm2").mkdir()
        settings = replace(get_settings(), lessons_dir=lessons)
        measure("SmolLM2 lesson, 15 stops", root / "smollm2", lesson="smollm2-tour", settings=settings)


if __name__ == "__main__":
    main()
