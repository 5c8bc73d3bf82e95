"""Who may ask what, checked before anything is parsed (`Guard`), and security headers on
every response (`SecurityHeaders`): a Content-Security-Policy that allows only this server's
own files, no framing, no MIME sniffing, no referrer, and `Cache-Control: no-store` on the API.

Guard, in order (docs/api.md, "Security"):
* the Host header must name an allowed host (settings.allowed_hosts, any port): a page on
  another site whose DNS name is rebound to this machine's address is refused (400);
* a query string longer than settings.max_query_bytes: 414;
* `GET /<any page>?key=<admin key>` sets the admin cookie and redirects to the page without it
  (Jupyter's token login); a wrong key is a 403;
* a state-changing request (POST, PUT, PATCH, DELETE) from a browser must come from this
  server's own origin: `Sec-Fetch-Site` same-origin (or none) and `Origin` equal to the Host
  (403 otherwise; a script's request, with neither header, passes);
* a body longer than its limit (settings.max_body_bytes; uploads max_upload_bytes) is a 413,
  from Content-Length before a byte is read, else as soon as it passes while it arrives; a body
  that arrives too slowly (app/bodies.py) is a 408 that closes the connection.
Who may write (uploads, training, presenting) on a server with an admin key: check_writer. The
admin cookie holds a random token of this process (never the key); wrong admin keys, presenter
keys (PresenterKeyGuesses) and join codes are throttled per address, never overall (GuessLimiter).

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

import hmac
import json
from urllib.parse import parse_qsl, urlencode, urlsplit

from fastapi import HTTPException
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.bodies import BodyDeadline, BodyTooSlow
from app.guesses import UNSAFE_METHODS, GuessLimiter, TooManyGuesses
from app.settings import Settings
from app.timing import with_default_headers
from app.words.choice import chosen_language
from app.words.said import Grouped, Said, in_language

ADMIN_KEY_HEADER = "X-Admin-Key"
ADMIN_COOKIE = "xt_admin"
SAME_ORIGIN_FETCH = frozenset({"same-origin", "none"})  # Sec-Fetch-Site values of this origin's own requests
MULTIPART_OVERHEAD = 64 * 1024  # boundaries and part headers around an uploaded file

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
    A header the route already set is kept. API answers are never stored by a cache (a
    trace id is only known while the server remembers its spec)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        csp = (DOCS_CSP if scope.get("path") in DOCS_PATHS else CSP).encode()
        extra = ((b"cache-control", b"no-store"),) if scope.get("path", "").startswith("/api/") else ()

        defaults = ((b"content-security-policy", csp), *HEADERS, *extra)

        async def send_with_headers(message: Message) -> None:
            await send(with_default_headers(message, defaults))

        await self.app(scope, receive, send_with_headers)


# ---------------------------------------------------------------------- who may ask what

_MESSAGE = {"type": "object", "properties": {"detail": {"type": "string"}}, "required": ["detail"]}


def _documented(description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": _MESSAGE}}}


# OpenAPI: what a route with a JSON body, a write, or a trace build may also answer.
BODY_REFUSED = {
    400: _documented("the body is not JSON at all"),
    408: _documented("the body arrived too slowly (body_timeout_seconds, min_body_bytes_per_second)"),
    413: _documented("the body is larger than max_body_bytes"),
    415: _documented("the body was sent as another media type than application/json"),
}
WRITE_REFUSED = {
    403: _documented("from another site, or (a server bound beyond loopback) without the admin key"),
    429: _documented(
        "too many wrong admin keys from this address (guessing is rate-limited), or, for a trace build, "
        "max_queued_per_client builds of this client already waiting: retry after Retry-After"
    ),
}
BUSY = {503: _documented("the queued work would pass its budgets (max_queued_seconds, cache_bytes): retry later")}


def host_name(host_header: str) -> str:
    """'Example.org:8000' -> 'example.org'; '[::1]:8000' -> '::1' (the port never matters)."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0].rstrip(".") if host.count(":") == 1 else host.rstrip(".")


def same_origin(origin: str, host_header: str, scheme: str) -> bool:
    """Whether a browser's Origin is this server's own: the same host and port as the Host header."""
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    default = 443 if parts.scheme == "https" else 80
    own = urlsplit(f"{scheme}://{host_header}")
    try:
        own_port = own.port or (443 if scheme in ("https", "wss") else 80)
    except ValueError:
        return False
    return parts.hostname == own.hostname and (port or default) == own_port


def key_matches(given: str | None, settings: Settings) -> bool:
    return bool(given) and hmac.compare_digest(given.encode(), settings.admin_key.encode())


def _token_matches(given: str | None, token: str) -> bool:
    return bool(given) and bool(token) and hmac.compare_digest(given.encode(), token.encode())


def check_writer(request: Request, settings: Settings) -> None:
    """403 unless the request carries the admin key (header) or the admin cookie's token when
    the server has a key; a wrong key counts as a guess (429 past the limits: GuessLimiter)."""
    if not settings.admin_key:
        return  # loopback: whoever can reach the server runs it
    key = request.headers.get(ADMIN_KEY_HEADER)
    if key is None and _token_matches(request.cookies.get(ADMIN_COOKIE), request.app.state.admin_token):
        return
    if key is not None:
        guesses: GuessLimiter = request.app.state.key_guesses
        address = request.client.host if request.client else ""
        guesses.check(address)
        if key_matches(key, settings):
            return
        guesses.failed(address)
    raise HTTPException(403, detail=Said("error-admin-key-needed"))


def _answer(status: int, detail: str, headers: tuple = (), scope: Scope | None = None) -> tuple[Message, Message]:
    """A refusal written by the guard itself, before any route: its detail in the request's language."""
    if scope is not None:
        detail = in_language(detail, chosen_language(Request(scope)))
    body = json.dumps({"detail": detail}).encode()
    start_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers]
    return (
        {"type": "http.response.start", "status": status, "headers": start_headers},
        {"type": "http.response.body", "body": body},
    )


class Guard:
    """Pure ASGI middleware: Host, query length, admin login, same-origin writes, body size."""

    def __init__(self, app: ASGIApp, settings: Settings, admin_token: str = "", guesses: GuessLimiter | None = None):
        self.app = app
        self.settings = settings
        self.admin_token = admin_token  # the admin cookie's value (never the key)
        self.guesses = guesses or GuessLimiter("error-guess-admin-keys", settings.key_failures_per_minute)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # the same Host and origin rules; refused before the handshake
            headers = Headers(scope=scope)
            if host_name(headers.get("host", "")) not in self.settings.allowed_hosts or not self._same_origin(
                scope, headers
            ):
                await send({"type": "websocket.close", "code": 1008})
                return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self._refusal(scope, headers) or self._login(scope)
        if refusal is not None:
            for message in refusal:
                await send(message)
            return
        if scope["method"] in UNSAFE_METHODS:
            receive = await self._bounded_body(scope, headers, receive, send)
            if receive is None:
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope, headers: Headers):
        host = host_name(headers.get("host", ""))
        if host not in self.settings.allowed_hosts:
            hosts, asked = ", ".join(self.settings.allowed_hosts), repr(headers.get("host", "")[:80])
            return _answer(400, Said("error-host", hosts=hosts, host=asked), scope=scope)
        if len(scope.get("query_string", b"")) > self.settings.max_query_bytes:
            size, most = Grouped(len(scope["query_string"])), Grouped(self.settings.max_query_bytes)
            return _answer(414, Said("error-query-too-long", size=size, most=most), scope=scope)
        if scope["method"] in UNSAFE_METHODS and not self._same_origin(scope, headers):
            return _answer(403, Said("error-cross-site"), scope=scope)
        return None

    def _same_origin(self, scope: Scope, headers: Headers) -> bool:
        site = headers.get("sec-fetch-site")
        if site is not None and site not in SAME_ORIGIN_FETCH:
            return False
        origin = headers.get("origin")
        return origin is None or same_origin(origin, headers.get("host", ""), scope.get("scheme", "http"))

    def _login(self, scope: Scope):
        """GET <page>?key=<admin key>: the cookie, and the page again without the key in its URL."""
        if not self.settings.admin_key or scope["method"] not in ("GET", "HEAD"):
            return None
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        keys = [value for name, value in query if name == "key"]
        if not keys:
            return None
        address = (scope.get("client") or ("",))[0]
        try:
            self.guesses.check(address)
        except TooManyGuesses as exc:
            return _answer(429, exc.detail, ((b"retry-after", exc.headers["Retry-After"].encode()),), scope)
        if not key_matches(keys[0], self.settings):
            self.guesses.failed(address)
            return _answer(403, Said("error-admin-key-wrong"), scope=scope)
        rest = urlencode([(name, value) for name, value in query if name != "key"])
        location = scope.get("root_path", "") + scope["path"] + (f"?{rest}" if rest else "")
        cookie = f"{ADMIN_COOKIE}={self.admin_token}; Path=/; HttpOnly; SameSite=Strict"
        start, body = _answer(303, "signed in: the admin cookie is set", ((b"location", location.encode()),))
        start["headers"].append((b"set-cookie", cookie.encode()))
        return start, body

    async def _bounded_body(self, scope: Scope, headers: Headers, receive: Receive, send: Send):
        """A receive that replays the whole body (read here, within its limit), or None after a 413."""
        multipart = headers.get("content-type", "").lower().startswith("multipart/form-data")
        limit, name = (
            (self.settings.max_upload_bytes + MULTIPART_OVERHEAD, "max_upload_bytes")
            if multipart
            else (self.settings.max_body_bytes, "max_body_bytes")
        )
        declared = headers.get("content-length", "")
        size = int(declared) if declared.isdigit() else 0
        paced = BodyDeadline.of(receive, self.settings)  # a body that stops coming: 408 (app/bodies.py)
        if size > limit or multipart:  # an upload streams on to its route, which counts it too
            if size > limit:
                await self._too_large(send, size, limit, name, scope)
                return None
            return paced
        chunks, total = [], 0
        while True:
            try:
                message = await paced()
            except BodyTooSlow as slow:
                for answer in _answer(408, slow.detail, ((b"connection", b"close"),), scope):
                    await send(answer)
                return None
            if message["type"] != "http.request":
                return _replay(b"", receive)  # the client left: the app sees the disconnect
            chunks.append(message.get("body", b""))
            total += len(chunks[-1])
            if total > limit:
                await self._too_large(send, total, limit, name, scope)
                return None
            if not message.get("more_body", False):
                return _replay(b"".join(chunks), receive)

    @staticmethod
    async def _too_large(send: Send, size: int, limit: int, name: str, scope: Scope) -> None:
        detail = Said("error-body-too-large", size=Grouped(size), most=Grouped(limit), setting=name)
        for message in _answer(413, detail, ((b"connection", b"close"),), scope):
            await send(message)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
