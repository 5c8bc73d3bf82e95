"""Security headers on every response: a Content-Security-Policy that allows only this
server's own files, no framing, no MIME sniffing, no referrer.

What the pages need (checked in chromium, no CSP violation in the console):
* scripts: ES modules from /static/js/, Plotly from /assets/plotly-*.min.js, and data-only
  `<script type="application/json">` blocks (never executed, so never subject to script-src);
  no inline script, no eval: `script-src 'self'`;
* styles: /static/css, plus `style=` attributes in the templates and the inline styles and
  `<style>` rules Plotly writes while drawing: `style-src 'self' 'unsafe-inline'`;
* images: the empty `data:,` favicon, and Plotly's "download plot as PNG" (data: and blob:);
* fetch(): the JSON API on the same origin.

Swagger UI (/docs) is served from the fastapi-offline package's Swagger UI files (app/routes/docs.py)
and started with an inline script: that page alone allows inline script; nothing anywhere
loads from another origin.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

DOCS_CSP = "; ".join(  # Swagger UI's page starts it with an inline script; its files are local
    [
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "worker-src 'self' blob:",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    ]
)
DOCS_PATHS = frozenset({"/docs", "/docs/oauth2-redirect"})

HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
)


def header_dict(path: str) -> dict[str, str]:
    """The headers as a dict, for answers written outside the middleware (the bare 500)."""
    csp = DOCS_CSP if path in DOCS_PATHS else CSP
    return {"content-security-policy": csp, **{name.decode(): value.decode() for name, value in HEADERS}}


class SecurityHeaders:
    """Pure ASGI middleware (no BaseHTTPMiddleware: responses stream through untouched).
    A header the route already set is kept."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        csp = (DOCS_CSP if scope.get("path") in DOCS_PATHS else CSP).encode()

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                for name, value in ((b"content-security-policy", csp), *HEADERS):
                    if name not in present:
                        headers.append((name, value))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
