"""How fast a guesser is answered (issue 24, finding 5): wrong admin keys (`/?key=`), wrong
presenter keys (a move) and unknown join codes, sent for --seconds each from --addresses client
addresses in turn, in process (FastAPI's TestClient, the app of --root). Prints the guesses per
second compared (answered 403/404) and refused (429).

    python benchmarks/guessing.py                          # this checkout
    python benchmarks/guessing.py --root /tmp/xt-before     # another checkout (git archive)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = {"model": "text", "text": "the cat sat on the mat."}


def _rate(name: str, clients: list, send, seconds: float) -> None:
    counts: dict[int, int] = {}
    started = time.perf_counter()
    n = 0
    while time.perf_counter() - started < seconds:
        status = send(clients[n % len(clients)], n)
        counts[status] = counts.get(status, 0) + 1
        n += 1
    elapsed = time.perf_counter() - started
    refused = counts.get(429, 0)
    print(
        f"{name}: {n} guesses in {elapsed:.1f} s from {len(clients)} addresses: "
        f"{(n - refused) / elapsed:.1f}/s compared, {refused / elapsed:.1f}/s refused (429); {counts}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--addresses", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    sys.path.insert(0, str(args.root.resolve()))
    from fastapi.testclient import TestClient

    from app.main import create_app
    from app.settings import Settings

    hosts = ("testserver", "127.0.0.1", "localhost", "::1")
    settings = Settings(admin_key="k" * 24, allowed_hosts=hosts, models_dir=Path(tempfile.mkdtemp()))
    app = create_app(settings)
    clients = [
        TestClient(app, client=(f"10.0.{i // 250}.{i % 250 + 1}", 50000), follow_redirects=False)
        for i in range(args.addresses)
    ]
    teacher = TestClient(app, client=("10.9.9.9", 50000), headers={"X-Admin-Key": "k" * 24})
    created = teacher.post("/api/sessions", json={"spec": SPEC}).json()
    code = created["code"]
    print(f"root {args.root}")
    _rate("wrong admin keys", clients, lambda c, n: c.get("/", params={"key": f"guess{n}"}).status_code, args.seconds)
    _rate(
        "wrong presenter keys",
        clients,
        lambda c, n: (
            c.post(
                f"/api/sessions/{code}/state", json={"step": 1}, headers={"X-Presenter-Key": f"guess{n}"}
            ).status_code
        ),
        args.seconds,
    )
    alphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
    _rate(
        "unknown join codes",
        clients,
        lambda c, n: (
            c.get(f"/api/sessions/ZZ{alphabet[n % 31]}{alphabet[n // 31 % 31]}{alphabet[n // 961 % 31]}Z").status_code
        ),
        args.seconds,
    )


if __name__ == "__main__":
    main()
