"""Issue 35's network findings, measured before and after (findings 2, 3, 5 and 6):

* slow bodies: a real `xt serve` under `ulimit -n 256`; 2 addresses hold every connection they
  may with POST bodies trickling a byte every 2 s; a new student's /healthz, join and the
  presenter's move from 127.0.0.1, every 0.5 s for --seconds: how many answered 503 (or failed);
* addresses at their caps: the same under `ulimit -n 1024` with 15 addresses × 64 idle sockets,
  reopened as the header timeout closes them;
* guessing floods (in process): 8 addresses guessing join codes while 16 students join with the
  real one, 30 addresses sending wrong admin keys while the teacher signs in 14 times: the real
  users' 429s;
* one vote per student (in process): a class of 30 behind one address where one classmate first
  sends 60 cookie-less answers, then 5 classmates join, follow and answer: answers counted; and
  one client at its own address answering 40 times (cookie-less, then from 40 streams) in a class
  of 30 at 30 addresses: its votes counted.

    python benchmarks/class_network.py                          # this checkout
    python benchmarks/class_network.py --root /tmp/xt-before     # another checkout (git archive)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
SPEC = {"model": "text", "text": "the cat sat on the mat."}
QUIZ = {**SPEC, "quiz": 7}
KEY = "bench-admin-key-0123456789abcdef"


# ---------------------------------------------------------------------- real sockets (findings 2, 3)


async def _probe(port: int, code: str, key: str, seconds: float) -> dict:
    from tests.helpers.connections import request

    outcomes: dict[str, dict] = {"healthz": {}, "join": {}, "move": {}}
    tries = [
        ("healthz", "GET", "/healthz", None, {}),
        ("join", "GET", f"/join/{code}", None, {}),
        ("move", "POST", f"/api/sessions/{code}/state", {"step": 1}, {"X-Admin-Key": KEY, "X-Presenter-Key": key}),
    ]
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        for what, method, path, body, headers in tries:
            try:
                status = (await asyncio.to_thread(request, port, method, path, body, headers))[0]
            except Exception as exc:  # noqa: BLE001 - a refused or reset connection is what is counted
                status = type(exc).__name__
            outcomes[what][status] = outcomes[what].get(status, 0) + 1
        await asyncio.sleep(0.5)
    return outcomes


async def _hold(port: int, sources: list[str], per_source: int, head: bytes | None, stop: asyncio.Event) -> None:
    """Keeps per_source connections open from each source (reopened when closed), sending `head`
    and then a body byte every 2 s."""
    from tests.helpers.connections import open_from

    async def one(source: str) -> None:
        while not stop.is_set():
            pair, _ = await open_from(port, None, source=source)
            if pair is None:
                await asyncio.sleep(0.2)
                continue
            reader, writer = pair
            try:
                if head:
                    writer.write(head)
                while not stop.is_set() and not reader.at_eof():
                    if head:
                        writer.write(b" ")
                    try:
                        await asyncio.wait_for(reader.read(1024), 2.0)
                    except TimeoutError:
                        continue
            except OSError:
                pass
            finally:
                writer.transport.abort()

    await asyncio.gather(*(one(source) for source in sources for _ in range(per_source)))


def held(root: Path, open_files: int, sources: int, head: bool, seconds: float) -> dict:
    from tests.helpers.connections import request, xt_serve

    env = {"XT_ADMIN_KEY": KEY}
    with xt_serve(env, open_files=open_files, root=root) as server:
        status, payload, _ = request(server.port, "POST", "/api/sessions", {"spec": SPEC}, {"X-Admin-Key": KEY})
        assert status == 201, payload
        code, key = json.loads(payload)["code"], json.loads(payload)["presenter_key"]
        post = "POST /api/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 9000\r\n\r\n"

        async def run() -> dict:
            stop = asyncio.Event()
            addresses = [f"127.0.0.{i + 2}" for i in range(sources)]
            holding = asyncio.create_task(_hold(server.port, addresses, 64, post.encode() if head else None, stop))
            await asyncio.sleep(3)
            try:
                return await _probe(server.port, code, key, seconds)
            finally:
                stop.set()
                holding.cancel()
                await asyncio.gather(holding, return_exceptions=True)

        return asyncio.run(run())


# ---------------------------------------------------------------------- in process (findings 5, 6)


def _app(**settings):
    from app.main import create_app
    from app.settings import Settings

    hosts = ("testserver", "127.0.0.1", "localhost", "::1")
    return create_app(Settings(allowed_hosts=hosts, models_dir=Path(tempfile.mkdtemp()), **settings), warm_up=False)


def floods() -> dict:
    from fastapi.testclient import TestClient

    app = _app(admin_key=KEY)

    def client(address: str) -> TestClient:
        return TestClient(app, client=(address, 50000), follow_redirects=False)

    code = client("10.9.9.9").post("/api/sessions", json={"spec": SPEC}, headers={"X-Admin-Key": KEY}).json()["code"]
    joins, logins = {}, {}
    for student in range(16):
        for n in range(8):
            for guess in range(4):
                client(f"10.8.0.{n + 1}").get(f"/api/sessions/ZZZZZZ{n}{student}{guess}")
        status = client(f"10.7.0.{student + 1}").get(f"/join/{code}").status_code
        joins[status] = joins.get(status, 0) + 1
    for teacher in range(14):
        for n in range(30):
            client(f"10.6.0.{n + 1}").get("/", params={"key": f"guess-{teacher}"})
        status = client(f"10.5.0.{teacher + 1}").get("/", params={"key": KEY}).status_code
        logins[status] = logins.get(status, 0) + 1
    return {"16 real joins during a code flood": joins, "14 right keys during a key flood": logins}


class Browser:
    """One student's browser on an in-process app: its cookies, its open streams."""

    def __init__(self, app, address: str) -> None:
        self.app, self.address, self.cookies, self.leave = app, address, {}, asyncio.Event()

    async def call(self, method: str, path: str, body=None, stream: bool = False) -> int:
        sent = json.dumps(body).encode() if body is not None else b""
        headers = [(b"host", b"127.0.0.1")]
        if body is not None:
            headers += [(b"content-type", b"application/json"), (b"content-length", str(len(sent)).encode())]
        if self.cookies:
            headers.append((b"cookie", "; ".join(f"{k}={v}" for k, v in self.cookies.items()).encode()))
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
                 "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
                 "headers": headers, "client": (self.address, 40000), "server": ("127.0.0.1", 8000)}  # fmt: skip
        started, first = asyncio.get_running_loop().create_future(), [True]

        async def receive():
            if first[0]:
                first[0] = False
                return {"type": "http.request", "body": sent, "more_body": False}
            await self.leave.wait()
            return {"type": "http.disconnect"}

        async def send(message):
            if message["type"] == "http.response.start" and not started.done():
                for name, value in message["headers"]:
                    if name == b"set-cookie":
                        pair = value.decode().split(";", 1)[0]
                        self.cookies[pair.split("=", 1)[0]] = pair.split("=", 1)[1]
                started.set_result(message["status"])

        task = asyncio.create_task(self.app(scope, receive, send))
        status = await started
        if stream:
            await asyncio.sleep(0.05)
        else:
            await task
        return status


async def _student(app, code: str, address: str, step: int) -> int:
    browser = Browser(app, address)
    await browser.call("GET", f"/join/{code}")
    await browser.call("GET", f"/api/sessions/{code}/events", stream=True)
    return await browser.call("POST", f"/api/sessions/{code}/answers", {"step": step})


async def _open_poll(app) -> tuple[str, dict]:
    from fastapi.testclient import TestClient

    presenter = TestClient(app, client=("10.9.9.9", 50000))
    created = presenter.post("/api/sessions", json={"spec": QUIZ}).json()
    headers = {"X-Presenter-Key": created["presenter_key"]}
    presenter.post(f"/api/sessions/{created['code']}/poll", json={"action": "open"}, headers=headers)
    return created["code"], lambda: presenter.get(f"/api/sessions/{created['code']}", headers=headers).json()["poll"]


async def _settled(result: dict) -> dict:
    """The result, once every stream still open (and its publishing) has been cancelled."""
    others = asyncio.all_tasks() - {asyncio.current_task()}
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)
    return result


def votes() -> dict:
    async def nat_class() -> dict:
        app = _app(max_client_streams=64)
        code, poll = await _open_poll(app)
        spender = Browser(app, "10.20.0.1")
        for _ in range(60):
            spender.cookies.clear()
            await spender.call("POST", f"/api/sessions/{code}/answers", {"step": 49})
        before = poll()["answers"]
        statuses = [await _student(app, code, "10.20.0.1", 50) for _ in range(5)]
        return await _settled({"classmates' answers": statuses, "counted": poll()["answers"] - before})

    async def one_client() -> dict:
        app = _app()
        code, poll = await _open_poll(app)
        for i in range(30):
            await _student(app, code, f"10.22.0.{i + 1}", 50)
        cheat = Browser(app, "10.21.0.1")
        for _ in range(40):
            cheat.cookies.clear()
            await cheat.call("POST", f"/api/sessions/{code}/answers", {"step": 49})
        cookieless = poll()["counts"].get("49", 0)
        for _ in range(40):
            await _student(app, code, "10.21.0.1", 49)
        return {
            "cookie-less votes counted": cookieless,
            "votes counted after 40 streams": poll()["counts"].get("49", 0),
        }

    return {
        "NAT class of 30 (one spent the address)": asyncio.run(nat_class()),
        "one client, 40 votes, class of 30": asyncio.run(one_client()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout measured")
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    sys.path.insert(0, str(args.root.resolve()))
    sys.path.insert(1, str(HERE))  # tests.helpers from this checkout (the server runs from --root)
    from app.connections import raise_open_file_limit

    raise_open_file_limit(8192)
    print(f"root {args.root}")
    print("finding 5:", floods())
    print("finding 6:", votes())
    slow = held(args.root, 256, 2, head=True, seconds=args.seconds)
    print(f"finding 2 (ulimit -n 256, 2 addresses x 64 slow bodies): {slow}")
    idle = held(args.root, 1024, 15, head=False, seconds=args.seconds)
    print(f"finding 3 (ulimit -n 1024, 15 addresses x 64 idle sockets, reopened): {idle}")


if __name__ == "__main__":
    main()
