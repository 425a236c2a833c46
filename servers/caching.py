"""How long a client may keep what the `loci` server reads to it: the 2026-07-28 caching hints.

Every result of a cacheable method (`server/discover`, `tools/list`,
`resources/list`, `resources/templates/list`, `resources/read`,
`prompts/list`) carries `ttlMs` and `cacheScope`. The SDK fills them per
method from `Server(cache_hints=...)` (`METHOD_HINTS`), and a handler that
sets them on its result wins, field by field: `resources/read` does, per
resource (`read_hint`).

Everything Loci reads is someone's memory, so every hint is `private`: a
cache shared between users (a proxy in front of several tokens) must not
serve one user's memory to another, nor one token's tool list (read-only or
not) to another. `ttlMs` follows how the thing changes:

- a memory (`loci://memory/…`), the recent changes, a run and the resource
  list change with every write: 0, read again each time (a client that wants
  to hear of a change listens, `servers/live.py`);
- a loaded document (`loci://context/doc:3`, a range of it) is what was loaded
  and changes only when it is forgotten: `DOCUMENT_TTL_MS`;
- the templates, the tool list, the (empty) prompt list and the MCP Apps views
  (`ui://loci/…`, servers/apps.py) change only with the server's version:
  `LISTING_TTL_MS`.

`tools/call` has no caching hints in the revision, so a reading tool
(`memory_recall`, `context_read`) is never cached by a client.
"""

from __future__ import annotations

from typing import Final

from mcp.server.caching import CacheableMethod, CacheHint

__all__ = ["DOCUMENT_TTL_MS", "LISTING_TTL_MS", "METHOD_HINTS", "read_hint"]

DOCUMENT_TTL_MS: Final = 300_000
LISTING_TTL_MS: Final = 3_600_000

_CHANGING = CacheHint(ttl_ms=0, scope="private")
_DOCUMENT = CacheHint(ttl_ms=DOCUMENT_TTL_MS, scope="private")
_LISTING = CacheHint(ttl_ms=LISTING_TTL_MS, scope="private")

METHOD_HINTS: Final[dict[CacheableMethod, CacheHint]] = {
    "server/discover": _LISTING,
    "tools/list": _LISTING,
    "prompts/list": _LISTING,
    "resources/templates/list": _LISTING,
    "resources/list": _CHANGING,
    "resources/read": _CHANGING,
}


def read_hint(uri: str) -> CacheHint:
    """The hint for reading `uri`: a loaded document (`doc:`) keeps, an app's view (`ui://`) keeps as the tool list
    does, every other resource changes."""
    if uri.startswith("ui://"):
        return _LISTING
    return _DOCUMENT if uri.startswith("loci://context/doc:") else _CHANGING
