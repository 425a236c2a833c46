"""Who a request is: its bearer token resolved to a principal, for `loci serve --http` and for the page.

A principal (memory/records/tokens.py) is a name, the projects it may reach
and whether it may write. `Principals.of(headers)` finds it, in order:

1. the server's own token (`--token-file`, `$LOCI_TOKEN`, or the page's
   session token), compared in constant time (`bearer_ok`): the owner, who
   reaches the server's `--project` and writes, as before tokens existed;
2. a token of the home (`loci tokens add`): its principal;
3. no token, or one that is neither, on a server that needs none (no token
   of its own, and a home without tokens): `anonymous`, who reaches what the
   owner reaches, as before (the page lets it read, not write);
4. else nobody (None): the caller answers 401.

Resolving a home token reads the home, and only reads: the time of each
token's use is noted in memory and written for all of them in one
transaction every `USES_EVERY_S` seconds and when the server stops
(`record_uses`, which the transport runs beside the apps), so a request never
waits on a write; a write that fails (the home locked or away) is logged and
its uses kept for the next. A home the database of which is unavailable
raises `StoreUnavailable` here, which the transport answers with a JSON-RPC
error (servers/auth/scoped.py), never a 500. Each resolution is kept for `TOKEN_CACHE_S` seconds, by the token's SHA-256
digest, in this process: a request with a known token costs a hash and a
dict lookup. A revoked token is therefore refused at most `TOKEN_CACHE_S`
after `loci tokens revoke` (`--token-cache 0`: on its next request). A
token that resolves to nobody is not kept, so guesses cannot grow the cache;
each costs a read of the home, and gets 401. Whether the home has tokens at
all is kept for as long.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import anyio

from loci.memory.engines.base import Engine
from loci.memory.errors import StoreError
from loci.memory.records.tokens import Principal, Tokens, token_digest
from loci.servers.auth.bearer import bearer_ok

__all__ = ["TOKEN_CACHE_S", "USES_EVERY_S", "Principal", "Principals", "bearer_credentials"]

log = logging.getLogger("loci.server")

TOKEN_CACHE_S = 2.0
USES_EVERY_S = 30.0
MAX_CACHED = 4096


def bearer_credentials(headers: dict[bytes, bytes]) -> bytes | None:
    """The token of an `Authorization: Bearer TOKEN` header (the scheme in any case), or None."""
    scheme, _, credentials = headers.get(b"authorization", b"").strip().partition(b" ")
    token = credentials.strip()
    return token if scheme.lower() == b"bearer" and token else None


class Principals:
    """The principal of each request, from the server's own token and the home's tokens (kept `expiry` seconds).

    `owner` is who the server's own token (and, when `open_without_token`, a request without one) is. With
    `open_without_token`, a home without tokens serves every request as the owner, as servers did before tokens."""

    def __init__(
        self,
        store: Engine,
        owner: Principal,
        *,
        token: str | None,
        open_without_token: bool,
        expiry: float = TOKEN_CACHE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.tokens = Tokens(store)
        self.owner = owner
        self.anonymous = Principal("anonymous", owner.projects, owner.read_only)
        self.expected = token.encode() if token else None
        self.open_without_token = open_without_token
        self.expiry = expiry
        self.clock = clock
        self._cache: dict[str, tuple[Principal, float]] = {}
        self._home_has_tokens: tuple[bool, float] = (False, float("-inf"))
        self._used: dict[str, float] = {}  # token name -> when it was last used, not yet written

    async def of(self, headers: dict[bytes, bytes]) -> Principal | None:
        """The request's principal, or None when it must be refused (401)."""
        if self.expected is not None and bearer_ok(headers, self.expected):
            return self.owner
        credentials = bearer_credentials(headers)
        if credentials is not None:
            found = await self._resolve(credentials)
            if found is not None:
                return found
        if self.open_without_token and not await self.home_has_tokens():
            return self.anonymous
        return None

    async def home_has_tokens(self) -> bool:
        known, until = self._home_has_tokens
        now = self.clock()
        if now < until:
            return known
        known = await self.tokens.any()
        self._home_has_tokens = (known, now + self.expiry)
        return known

    async def _resolve(self, credentials: bytes) -> Principal | None:
        digest = token_digest(credentials)
        now = self.clock()
        kept = self._cache.get(digest)
        if kept is not None and now < kept[1]:
            self._used[kept[0].name] = time.time()
            return kept[0]
        found = await self.tokens.resolve(credentials)
        if found is None:
            self._cache.pop(digest, None)
            return None
        self._used[found.name] = time.time()
        if len(self._cache) >= MAX_CACHED:
            self._cache = {k: v for k, v in self._cache.items() if now < v[1]}
        self._cache[digest] = (found, now + self.expiry)
        return found

    async def record_uses(self, stopping: anyio.Event, every: float = USES_EVERY_S) -> None:
        """Write the tokens' uses every `every` seconds until `stopping` is set, then once more."""
        while True:
            with anyio.move_on_after(every):
                await stopping.wait()
            await self.flush_uses()
            if stopping.is_set():
                return

    async def flush_uses(self) -> None:
        """Write the uses noted since the last flush; on failure keep them for the next (logged)."""
        used, self._used = self._used, {}
        if not used or self.tokens.store.read_only:
            return
        try:
            await self.tokens.record_uses(used)
        except StoreError as exc:
            log.warning("the tokens' last use was not recorded (%s); trying again later", exc)
            self._used = used | self._used
