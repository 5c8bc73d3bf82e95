"""Who may write (issue 14, finding 3): state-changing requests only from this server's own
origin, Host headers only of allowed names (DNS rebinding), and on a server with an admin key
(bound beyond loopback) uploads and training only with it; viewing stays open."""

from __future__ import annotations

import os

import pytest

from app.security import ADMIN_COOKIE, host_name, same_origin
from tests.app.checkpoints.test_checkpoints import checkpoint_bytes, upload
from tests.helpers.aio import run_async
from tests.helpers.client import make_client
from tests.helpers.specs import SMALL_SPEC

KEY = "k3y-for-tests"
TRAINING = {**SMALL_SPEC, "train_steps": 2}


@pytest.fixture()
def uploads(tmp_path):
    return tmp_path / "uploads"


def stored(directory) -> list[str]:
    return sorted(p.name for p in directory.glob("*")) if directory.exists() else []


def test_a_cross_origin_upload_is_403_and_stores_nothing(tmp_path, uploads):
    """The issue's attack: fetch(..., {method: "POST", mode: "no-cors", body: formData}) from
    another origin. The browser sends Origin and Sec-Fetch-Site; either refuses it."""
    data = checkpoint_bytes(".safetensors", tmp_path, seed=41)
    with make_client(models_dir=uploads) as c:
        for headers in (
            {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
            {"Origin": "http://evil.example"},
            {"Sec-Fetch-Site": "cross-site"},
            {"Sec-Fetch-Site": "same-site"},  # another port or subdomain is another origin
            {"Origin": "null"},
            {"Origin": "http://testserver:8080"},
        ):
            response = c.post("/api/models", files={"file": ("m.safetensors", data)}, headers=headers)
            assert response.status_code == 403, headers
            assert "another site" in response.json()["detail"]
        assert stored(uploads) == []
        assert [m for m in c.get("/api/models").json()["models"] if not m["shipped"]] == []
        page = c.post(
            "/api/models",
            files={"file": ("m.safetensors", data)},
            headers={"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"},
        )
        assert page.status_code == 201  # the server's own page (static/js/lib/api.js)
        assert upload(c, "m.safetensors", data).status_code == 201  # a script: no Origin at all


def test_cross_origin_trace_builds_and_quiz_answers_are_refused_too():
    with make_client() as c:
        evil = {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
        assert c.post("/api/traces", json=SMALL_SPEC, headers=evil).status_code == 403
        assert c.post("/api/traces/x/quiz/answer", json={"step": 1}, headers=evil).status_code == 403
        assert c.get("/api/models", headers=evil).status_code == 200  # reading is not writing


def test_only_allowed_host_headers_are_answered():
    with make_client(allowed_hosts=("127.0.0.1", "localhost", "::1", "class.local")) as c:
        for host in ("127.0.0.1:8000", "localhost", "[::1]:8000", "CLASS.local:8000"):
            assert c.get("/healthz", headers={"Host": host}).status_code == 200, host
        for host in ("attacker.example", "attacker.example:8000", "127.0.0.1.attacker.example", ""):
            response = c.get("/", headers={"Host": host})
            assert response.status_code == 400, host
            assert "--allowed-host" in response.json()["detail"]


def test_host_and_origin_parsing():
    assert host_name("Example.org:8000") == "example.org" and host_name("[::1]:80") == "::1"
    assert host_name("localhost.") == "localhost"
    assert same_origin("http://127.0.0.1:8000", "127.0.0.1:8000", "http")
    assert same_origin("http://localhost", "localhost:80", "http")
    assert not same_origin("http://127.0.0.1:8001", "127.0.0.1:8000", "http")
    # host and port decide (a proxy that ends TLS forwards https pages' requests as http)
    assert same_origin("https://127.0.0.1:8000", "127.0.0.1:8000", "http")
    assert not same_origin("https://127.0.0.1", "127.0.0.1:80", "http")
    assert not same_origin("http://127.0.0.1:notaport", "127.0.0.1:8000", "http")


def test_with_an_admin_key_writes_need_it_and_viewing_does_not(tmp_path, uploads):
    data = checkpoint_bytes(".safetensors", tmp_path, seed=42)
    with make_client(models_dir=uploads, admin_key=KEY) as c:
        refused = upload(c, "m.safetensors", data)
        assert refused.status_code == 403 and "admin key" in refused.json()["detail"]
        assert stored(uploads) == []
        wrong = c.post("/api/models", files={"file": ("m.safetensors", data)}, headers={"X-Admin-Key": "guess"})
        assert wrong.status_code == 403
        assert c.post("/api/traces", json=TRAINING).status_code == 403  # training is a write
        assert c.post("/api/traces", json=SMALL_SPEC).status_code == 200  # viewing is not
        assert c.get("/").status_code == 200 and c.get("/api/models").status_code == 200
        ok = c.post("/api/models", files={"file": ("m.safetensors", data)}, headers={"X-Admin-Key": KEY})
        assert ok.status_code == 201
        trained = c.post("/api/traces", json=TRAINING, headers={"X-Admin-Key": KEY})
        assert trained.status_code == 200
        again = c.post("/api/traces", json=TRAINING)  # built already: a student may view it
        assert again.status_code == 200 and again.json()["id"] == trained.json()["id"]


def test_opening_the_printed_address_signs_the_browser_in(tmp_path, uploads):
    data = checkpoint_bytes(".safetensors", tmp_path, seed=43)
    with make_client(models_dir=uploads, admin_key=KEY) as c:
        c.follow_redirects = False
        assert c.get("/", params={"key": "guess"}).status_code == 403
        signed = c.get("/walk", params={"key": KEY, "text": "abc"})
        assert signed.status_code == 303 and signed.headers["location"] == "/walk?text=abc"
        cookie = signed.headers["set-cookie"]
        assert cookie.startswith(f"{ADMIN_COOKIE}=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        page = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}
        response = c.post("/api/models", files={"file": ("m.safetensors", data)}, headers=page)
        assert response.status_code == 201, response.text  # the cookie rides along with the page's fetch


def test_without_an_admin_key_a_loopback_server_lets_its_user_write(tmp_path, uploads):
    with make_client(models_dir=uploads) as c:
        assert upload(c, "m.safetensors", checkpoint_bytes(".safetensors", tmp_path, seed=44)).status_code == 201
        assert c.post("/api/traces", json=TRAINING).status_code == 200
        c.follow_redirects = False
        assert c.get("/", params={"key": "anything"}).status_code == 200  # no login without a key


def test_the_admin_key_is_a_declared_security_scheme_of_uploads_presenting_and_recording_only():
    """Uploading a checkpoint, opening a classroom session and recording a run declare the key
    (training checks it in the route only when the spec trains, so POST /api/traces does not
    declare it)."""
    with make_client() as c:
        schema = c.get("/openapi.json").json()
    schemes = schema["components"]["securitySchemes"]
    assert [s["name"] for s in schemes.values()] == ["X-Admin-Key"]
    secured = [
        (path, method) for path, ops in schema["paths"].items() for method, op in ops.items() if op.get("security")
    ]
    assert sorted(secured) == [("/api/models", "post"), ("/api/runs", "post"), ("/api/sessions", "post")]


def test_xt_serve_beyond_loopback_allows_the_named_hosts_and_makes_a_key(monkeypatch):
    import argparse

    import xt_cli

    monkeypatch.setenv("XT_ALLOWED_HOSTS", "")  # _serve_settings exports both: restored after the test
    monkeypatch.setenv("XT_ADMIN_KEY", "")
    monkeypatch.setenv("XT_PUBLIC_URL", "")
    args = argparse.Namespace(host="0.0.0.0", port=8123, allowed_host=["Class-Room.local"])
    hosts, key = xt_cli._serve_settings(args)
    assert {"127.0.0.1", "localhost", "::1", "class-room.local"} <= set(hosts) and "0.0.0.0" not in hosts
    assert len(key) >= 24
    # the class's join URL: the name students type, not the 127.0.0.1 the presenter may browse
    assert os.environ["XT_PUBLIC_URL"] == "http://class-room.local:8123"
    monkeypatch.setenv("XT_PUBLIC_URL", "http://192.168.1.20:8123")
    xt_cli._serve_settings(args)
    assert os.environ["XT_PUBLIC_URL"] == "http://192.168.1.20:8123"  # the teacher's own choice stays


@pytest.mark.parametrize(
    "host,allowed,machine,origin",
    [
        ("0.0.0.0", [], "lab-pc", "http://lab-pc:8000"),
        ("192.168.1.20", [], "lab-pc", "http://192.168.1.20:8000"),
        ("2001:db8::5", [], "lab-pc", "http://[2001:db8::5]:8000"),
        ("0.0.0.0", ["xt.school"], "lab-pc", "http://xt.school:8000"),
        ("0.0.0.0", [], "localhost", None),  # a container's name: nothing students could type
        ("0.0.0.0", [], "localhost.localdomain", None),
        ("fe80::1%eth0", [], "lab-pc", "http://lab-pc:8000"),  # a zoned address makes no URL
    ],
)
def test_the_origin_students_type(host, allowed, machine, origin):
    import argparse

    import xt_cli

    assert xt_cli._public_origin(argparse.Namespace(host=host, port=8000, allowed_host=allowed), machine) == origin
    loopback, none = xt_cli._serve_settings(argparse.Namespace(host="127.0.0.1", port=8000, allowed_host=[]))
    assert none == "" and loopback == ["127.0.0.1", "localhost", "::1"]


def test_websockets_follow_the_same_host_and_origin_rules():

    from app.security import Guard
    from app.settings import Settings

    async def connect(headers):
        sent, reached = [], []

        async def app(scope, receive, send):
            reached.append(scope)

        async def send(message):
            sent.append(message)

        scope = {"type": "websocket", "path": "/ws", "query_string": b"", "scheme": "ws", "headers": headers}
        await Guard(app, Settings())(scope, None, send)
        return sent, reached

    own = [(b"host", b"127.0.0.1:8000"), (b"origin", b"http://127.0.0.1:8000")]
    assert run_async(connect(own))[1]
    for headers in ([(b"host", b"evil.example")], [(b"host", b"127.0.0.1:8000"), (b"origin", b"http://evil.example")]):
        sent, reached = run_async(connect(headers))
        assert reached == [] and sent == [{"type": "websocket.close", "code": 1008}]
