"""Security headers (app/security.py) on every kind of answer: pages, the API, static files,
Plotly's bundle, errors; and the Allow header of a 405 lists every method of the path."""

from __future__ import annotations

import pytest

from app.routes.assets import plotly_url
from app.security import CSP

EXPECTED = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}


def assert_secured(response, csp: str = CSP) -> None:
    for name, value in EXPECTED.items():
        assert response.headers.get(name) == value, (response.request.url, name)
    assert response.headers.get("content-security-policy") == csp


def test_policy_allows_no_remote_source():
    assert "http" not in CSP and "*" not in CSP
    assert "frame-ancestors 'none'" in CSP
    assert "script-src 'self'" in CSP.split("; ")  # no inline script, no eval
    assert "'unsafe-eval'" not in CSP


@pytest.mark.parametrize(
    "path",
    ["/", "/static/css/xt.css", "/static/js/walk.js", "/api/models", "/healthz", "/openapi.json", "/no-such-page"],
)
def test_headers_on_pages_api_static_and_errors(client, path):
    assert_secured(client.get(path))


def test_headers_on_walk_and_trace_routes(client, trace):
    walk = client.get("/walk", params=trace["query"] | {"step": "0"})
    assert walk.status_code == 200 and "text/html" in walk.headers["content-type"]
    assert_secured(walk)
    assert_secured(client.get("/walk", params={"n_layer": "99"}))  # the form again, 422
    assert_secured(client.get(f"/api/traces/{trace['id']}/steps/0"))
    assert_secured(client.get(f"/api/traces/{trace['id']}/steps/0", headers={"Accept-Encoding": "gzip"}))
    assert_secured(client.get(f"/api/traces/{trace['id']}/tensors/logits"))  # .npy download
    assert_secured(client.get("/api/traces/nope/steps/0"))  # 404
    assert_secured(client.post("/api/traces", json={"config": {"n_layer": 99}}))  # 422


def test_headers_on_plotly_bundle(client):
    response = client.get(plotly_url())
    assert response.status_code == 200
    assert_secured(response)


def test_pages_have_no_inline_script(client, trace):
    """script-src 'self' blocks inline scripts: only src= scripts and JSON data blocks."""
    for html in (client.get("/").text, client.get("/walk", params=trace["query"] | {"step": "0"}).text):
        for tag in html.split("<script")[1:]:
            head = tag.split(">", 1)[0]
            assert "src=" in head or 'type="application/json"' in head, head
        assert " onclick=" not in html and " onload=" not in html


def test_swagger_ui_gets_its_own_policy(client):
    from app.security import DOCS_CSP

    response = client.get("/docs")
    assert response.status_code == 200
    assert_secured(response, DOCS_CSP)


def test_method_not_allowed_lists_every_method(client):
    response = client.put("/api/models")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, POST"
    assert_secured(response)


def test_docs_are_served_offline(client):
    html = client.get("/docs").text
    assert "/assets/swagger/swagger-ui-bundle.js" in html and "/openapi.json" in html
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        response = client.get(f"/assets/swagger/{asset}")
        assert response.status_code == 200 and len(response.content) > 10_000
    assert client.get("/redoc").status_code == 404  # ReDoc would need a CDN: not offered


def test_an_unhandled_error_is_a_json_500_with_the_headers():
    """The bare 500 is written by Starlette's outermost middleware, outside SecurityHeaders."""
    from fastapi.testclient import TestClient

    from app.main import create_app
    from app.settings import Settings
    from tests.helpers.client import TEST_HOSTS

    app = create_app(Settings(allowed_hosts=TEST_HOSTS))

    @app.get("/boom")
    async def boom():
        raise RuntimeError("a bug")

    with TestClient(app, raise_server_exceptions=False) as c:
        response = c.get("/boom")
    assert response.status_code == 500
    assert "internal error" in response.json()["detail"] and "a bug" not in response.text
    assert_secured(response)
