"""The one place where httpx's exceptions become Loci's.

Every HTTP call the runtime makes (chat completions, embeddings, asking a
server for its context window) runs inside `translate_httpx(url)`, so what
leaves the call is always in the tree of `memory.errors`:

    httpx.TimeoutException  ->  BackendTimeout      (another attempt may work)
    a URL httpx cannot use  ->  UsageError          (no scheme, or not http/https: the user's to fix)
    httpx.TransportError    ->  BackendUnreachable  (could not connect, or the connection broke)
    any other httpx error   ->  BackendError

`BackendTimeout` and `BackendUnreachable` are `TRANSIENT`: a caller that
retries (the `openai` backend) retries those and nothing else that comes
from here. The message names the URL, so a person knows which server failed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from loci.memory.errors import BackendError, BackendTimeout, BackendUnreachable, UsageError

__all__ = ["TRANSIENT", "translate_httpx"]

TRANSIENT = (BackendTimeout, BackendUnreachable)


@contextmanager
def translate_httpx(url: str) -> Iterator[None]:
    """Run an HTTP exchange with `url`; httpx's exceptions leave it as `BackendError`s."""
    try:
        yield
    except httpx.TimeoutException as exc:
        raise BackendTimeout(f"{url} did not answer in time ({type(exc).__name__}: {exc})") from exc
    except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        raise UsageError(f"{url} is not a URL Loci can call ({exc}); use http://HOST:PORT/v1 or https://...") from exc
    except httpx.ConnectError as exc:
        raise BackendUnreachable(f"cannot reach {url}: {exc or type(exc).__name__}") from exc
    except httpx.TransportError as exc:
        raise BackendUnreachable(f"lost the connection to {url}: {exc or type(exc).__name__}") from exc
    except httpx.HTTPError as exc:
        raise BackendError(f"{url}: {exc}") from exc
