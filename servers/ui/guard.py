"""The page's gate: the rules of `loci serve --http` (servers/auth/bearer.py), for a browser.

`Guard` is ASGI middleware in front of the whole app. It checks, in order:

- Host: the name in the `Host` header must be one the page is served as
  (on loopback: 127.0.0.1, localhost, [::1]), else 421. A page on another
  site that rebinds its DNS name to 127.0.0.1 is refused here.
- Origin: when a browser sends one, it must be this page's own: `http://`
  and the host and port of the Host header (`same_origin`), else 403, so
  another site's script, a page on another port of localhost included,
  cannot post feedback.
- Token: every POST, and every `/api/` read when the page is served off
  loopback, with `--token-file`, or over a home with tokens, must carry
  `Authorization: Bearer TOKEN`, else 401: the page's session token (its
  owner, compared in constant time) or a token of the home (`loci tokens`),
  resolved to its principal by servers/auth/principals.py and put in the
  request's `state` for the API, which serves that principal's projects
  only. A read-only token's POST gets 403. The page itself and its static
  files hold no data and load without it. A token given for a bind off
  loopback has at least 16 characters (`check_bind`, in serve.py).
- Body: a POST body over `max_body` bytes gets 413 before the app sees it.

Every response, a refusal included, carries `SECURITY_HEADERS`: a Content
Security Policy that lets the page run only its own files and its one
inline script (by its hash, read from static/index.html when the module
loads), reach only its own origin and be framed by no one
(`frame-ancestors 'none'`, and `X-Frame-Options: DENY` for older
browsers), `X-Content-Type-Options: nosniff` and `Referrer-Policy:
no-referrer`. Nothing here logs a header; the server runs without an
access log.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from loci.servers.auth.bearer import challenge, is_loopback, same_origin
from loci.servers.auth.principals import Principals

__all__ = ["MAX_POST_BYTES", "SECURITY_HEADERS", "Guard", "allowed_names", "content_security_policy"]

MAX_POST_BYTES = 64 * 1024
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})
INDEX = Path(__file__).parent / "static" / "index.html"


def content_security_policy(index: Path = INDEX) -> str:
    """The page's CSP: its own files, and the inline scripts of `index` by their SHA-256."""
    html = index.read_text(encoding="utf-8") if index.is_file() else ""
    inline = re.findall(r"<script>(.*?)</script>", html, flags=re.DOTALL)
    hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'" for s in inline)
    return (
        f"default-src 'none'; script-src 'self' {hashes}; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ).replace("'self' ;", "'self';")


SECURITY_HEADERS = (
    (b"content-security-policy", content_security_policy().encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)


def allowed_names(host: str) -> frozenset[str]:
    """The host names the page answers to when it listens on `host`."""
    return LOOPBACK_NAMES if is_loopback(host) else frozenset({host, f"[{host}]"})


def _name(authority: str) -> str:
    """`127.0.0.1:8780` -> `127.0.0.1`, `[::1]:8780` -> `[::1]`."""
    if authority.startswith("["):
        return authority.split("]", 1)[0] + "]"
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


class Guard:
    """Host, Origin, token and body-size checks before any request reaches the page."""

    def __init__(self, app: ASGIApp, *, host: str, principals: Principals, max_body: int = MAX_POST_BYTES) -> None:
        self.app = app
        self.names = allowed_names(host)
        self.principals = principals
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_security_headers(send)
        headers = dict(scope.get("headers") or [])
        refusal = self.refusal(scope, headers) or await self.who(scope, headers)
        if refusal is not None:
            await _reply(send, *refusal)
            return
        if scope["method"] == "POST":
            body = await _read_body(receive, self.max_body)
            if body is None:
                await _reply(send, 413, f"the request body is over {self.max_body:,} bytes")
                return
            receive = _replay(body)
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope, headers: dict[bytes, bytes]) -> tuple[int, str] | None:
        """`(status, reason)` when the request is refused, else None."""
        host = headers.get(b"host", b"").decode("latin-1")
        if _name(host) not in self.names:
            return 421, "this page is not served under that host name"
        if not same_origin(headers):
            return 403, "requests from another origin are refused"
        if scope["method"] not in ("GET", "HEAD", "POST"):
            return 405, "only GET and POST are served"
        return None

    async def who(self, scope: Scope, headers: dict[bytes, bytes]) -> tuple[int, str] | None:
        """Find the principal of a request for data (`scope["state"]["principal"]`); `(status, reason)` if none."""
        post = scope["method"] == "POST"
        if not post and not scope["path"].startswith("/api/"):
            return None
        principal = await self.principals.of(headers)
        if principal is None or (post and principal is self.principals.anonymous):
            return 401, "missing or wrong session token"
        if post and principal.read_only:
            return 403, "this token is read-only"
        scope.setdefault("state", {})["principal"] = principal
        return None


def _with_security_headers(send: Send) -> Send:
    """`send`, adding `SECURITY_HEADERS` to the response's start (the app's own headers of those names dropped)."""
    names = {name for name, _ in SECURITY_HEADERS}

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            kept = [(k, v) for k, v in message.get("headers") or [] if k.lower() not in names]
            message = {**message, "headers": [*kept, *SECURITY_HEADERS]}
        await send(message)

    return sending


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None as soon as it passes `limit` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def _reply(send: Send, status: int, reason: str) -> None:
    body = json.dumps({"error": reason}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", challenge(reason)))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
