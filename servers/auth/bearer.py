"""The one bearer check and the one same-origin check, for `loci serve --http` and for `loci ui`'s page.

Both servers run the same rules, from here:

- `check_bind(host, token)`: a bind off loopback needs a token of at least
  `MIN_TOKEN_CHARS` characters, or a home with tokens of its own
  (`loci tokens`, 43 characters each); on loopback any token given is taken.
- `bearer_ok(headers, token)`: `Authorization: Bearer TOKEN`, the scheme in
  any case (RFC 7235), the token compared in constant time (even when the
  scheme is wrong, so the time taken says nothing about the token).
- `same_origin(headers)`: a browser's `Origin`, when it sends one, must be
  the server itself: `http`, and the host and port of the `Host` header the
  request came in on (a port left out is 80). Another port of the same name
  (`http://localhost:3000`, a dev server's page) is another origin. The
  caller checks the Host header's name first (the DNS-rebinding guard), so
  an Origin that equals it names this server.
- `challenge(reason, metadata)`: what a 401 says, so a client can show it:
  `WWW-Authenticate: Bearer realm="loci", error="invalid_token",
  error_description="…", resource_metadata="…/.well-known/oauth-protected-resource"`.
  RFC 6750 would leave the error out when no token was sent; it is there
  so that clients which show only the header (the MCP Inspector) show
  Loci's words, which say where a token comes from.
- `protected_resource(url)`: the RFC 9728 metadata served, without a token,
  at `/.well-known/oauth-protected-resource` (and under it, the resource's
  path appended): the resource and that it takes a bearer token in the
  header, with no `authorization_servers`, because Loci offers no OAuth
  sign-in: its tokens are made by `loci tokens add` (or `--token-file`) and
  handed to the client by its config, so a client that would start an OAuth
  flow learns that there is none to start.
"""

from __future__ import annotations

import hmac
import ipaddress
from urllib.parse import urlsplit

from loci.memory.errors import UsageError

__all__ = [
    "LOOPBACK_NAMES",
    "METADATA_PATH",
    "MIN_TOKEN_CHARS",
    "bearer_ok",
    "challenge",
    "check_bind",
    "is_loopback",
    "protected_resource",
    "same_origin",
    "split_authority",
]

MIN_TOKEN_CHARS = 16
LOOPBACK_NAMES = ("localhost",)
METADATA_PATH = "/.well-known/oauth-protected-resource"
WHERE_TOKENS_COME_FROM = (
    "send Authorization: Bearer TOKEN, with the token of the server's --token-file or one made by "
    "`loci tokens add NAME --project P`; Loci offers no OAuth sign-in"
)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None, *, home_tokens: bool = False) -> None:
    """Refuse to serve a non-loopback `host` without a token (its own, or the home's: `home_tokens`), or with one
    short enough to guess."""
    if is_loopback(host) or (token is None and home_tokens):
        return
    if token is None:
        raise UsageError(
            f"refusing to serve {host} without a token: pass --token-file FILE, set LOCI_TOKEN, "
            "or give the home tokens (loci tokens add NAME --project P)"
        )
    if len(token) < MIN_TOKEN_CHARS:
        raise UsageError(
            f"refusing to serve {host} with a {len(token)}-character token: use at least {MIN_TOKEN_CHARS} "
            "(python -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )


def bearer_ok(headers: dict[bytes, bytes], token: bytes) -> bool:
    """Whether the request's `Authorization` header is `Bearer <token>`."""
    scheme, _, credentials = headers.get(b"authorization", b"").strip().partition(b" ")
    same = hmac.compare_digest(credentials.strip(), token)
    return scheme.lower() == b"bearer" and same


def split_authority(authority: str, default_port: int = 80) -> tuple[str, int | None]:
    """`127.0.0.1:8780` -> `("127.0.0.1", 8780)`, `[::1]` -> `("[::1]", 80)`; the port None when unreadable."""
    if authority.startswith("["):
        name, _, rest = authority.partition("]")
        name, port = name + "]", rest.removeprefix(":")
    elif authority.count(":") == 1:
        name, port = authority.split(":")
    else:
        name, port = authority, ""
    if not port:
        return name.lower(), default_port
    return name.lower(), int(port) if port.isdigit() else None


def same_origin(headers: dict[bytes, bytes]) -> bool:
    """Whether the request has no `Origin`, or one with the scheme `http` and the host and port of its `Host`."""
    origin = headers.get(b"origin")
    if origin is None:
        return True
    parts = urlsplit(origin.decode("latin-1"))
    if parts.scheme != "http" or parts.path not in ("", "/") or parts.username or parts.password:
        return False
    here = split_authority(headers.get(b"host", b"").decode("latin-1"))
    return here[1] is not None and split_authority(parts.netloc) == here


def challenge(reason: str, metadata: str | None = None) -> bytes:
    """The `WWW-Authenticate` value of a 401 whose `error_description` is `reason` (and how to get a token)."""
    described = f"{reason}: {WHERE_TOKENS_COME_FROM}"
    # RFC 6750 allows printable ASCII but for `"` and `\\` in the description.
    described = "".join(c if " " <= c <= "~" and c not in '"\\' else "?" for c in described)
    parts = ['Bearer realm="loci"', 'error="invalid_token"', f'error_description="{described}"']
    if metadata is not None:
        parts.append(f'resource_metadata="{metadata}"')
    return ", ".join(parts).encode("ascii")


def protected_resource(resource: str) -> dict[str, object]:
    """RFC 9728 metadata for `resource` (its URL): a bearer token in the header, no authorization server."""
    return {
        "resource": resource,
        "resource_name": "Loci",
        "bearer_methods_supported": ["header"],
        "loci_tokens": WHERE_TOKENS_COME_FROM,
    }
