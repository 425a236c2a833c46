"""A request's principal: the server's own token, a home token (kept for the cache's expiry), or nobody."""

from __future__ import annotations

import anyio

from loci.memory.engines.sqlite.store import Store
from loci.memory.records.tokens import Principal, Tokens
from loci.servers.auth.principals import Principals

OWNER = Principal("owner", ("default",))
OWN_TOKEN = "o" * 32


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def bearer(token: str) -> dict[bytes, bytes]:
    return {b"authorization": f"Bearer {token}".encode()}


async def test_a_revoked_token_is_refused_once_its_kept_resolution_expires(store: Store) -> None:
    clock = Clock()
    principals = Principals(store, OWNER, token=None, open_without_token=False, expiry=2.0, clock=clock)
    token = await Tokens(store).add("alice", ["app"])
    first = await principals.of(bearer(token))
    await Tokens(store).revoke("alice")
    clock.now = 1.9
    kept = await principals.of(bearer(token))
    clock.now = 2.0
    expired = await principals.of(bearer(token))
    assert first == kept == Principal("alice", ("app",)) and expired is None


async def test_with_no_expiry_a_revocation_is_seen_on_the_next_request(store: Store) -> None:
    principals = Principals(store, OWNER, token=None, open_without_token=False, expiry=0.0)
    token = await Tokens(store).add("alice", ["app"])
    assert await principals.of(bearer(token)) is not None
    await Tokens(store).revoke("alice")
    assert await principals.of(bearer(token)) is None


async def test_the_servers_own_token_is_the_owner_and_a_guess_is_nobody(store: Store) -> None:
    principals = Principals(store, OWNER, token=OWN_TOKEN, open_without_token=False)
    await Tokens(store).add("alice", ["app"])
    assert await principals.of(bearer(OWN_TOKEN)) == OWNER
    assert await principals.of(bearer("g" * 43)) is None and await principals.of({}) is None


async def test_an_open_server_serves_the_owner_until_the_home_has_tokens(store: Store) -> None:
    clock = Clock()
    principals = Principals(store, OWNER, token=None, open_without_token=True, expiry=2.0, clock=clock)
    before = await principals.of({})
    await Tokens(store).add("alice", ["app"])
    clock.now = 2.0
    after = await principals.of({})
    assert before == principals.anonymous == Principal("anonymous", OWNER.projects) and after is None


async def test_a_token_s_use_is_written_later_in_one_batch_not_on_the_request(store: Store) -> None:
    principals = Principals(store, OWNER, token=None, open_without_token=False)
    token = await Tokens(store).add("alice", ["app"])
    assert await principals.of(bearer(token)) == await principals.of(bearer(token)) == Principal("alice", ("app",))
    before = [record.last_used for record in await Tokens(store).list()]
    stopping = anyio.Event()
    stopping.set()
    await principals.record_uses(stopping)  # what the transport runs beside the apps: once more as it stops
    after = [record.last_used for record in await Tokens(store).list()]
    assert before == [None] and after[0] is not None
