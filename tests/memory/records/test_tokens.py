"""Tokens of a home: kept as digests only, listed without them, resolved to their principal, revoked by name.

Each runs on a SQLite home and a PostgreSQL one (`engine_store`), but the look at the SQLite file's bytes.
"""

from __future__ import annotations

import sqlite3

import anyio
import pytest

from loci.memory.engines.base import Engine
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import NotFoundError, UsageError
from loci.memory.records.tokens import Principal, Tokens, token_digest


async def test_a_token_is_kept_as_its_digest_and_never_in_clear(store: Store) -> None:
    token = await Tokens(store).add("alice", ["app"])
    files = [store.path, store.path.with_name(store.path.name + "-wal")]
    kept = b"".join(path.read_bytes() for path in files if path.exists())
    assert len(token) == 43 and token.encode() not in kept
    assert token_digest(token).encode() in kept


async def test_a_token_resolves_to_its_principal_and_a_guess_to_nobody(engine_store: Engine) -> None:
    tokens = Tokens(engine_store)
    token = await tokens.add("ci", ["app", "docs", "app"], read_only=True)
    assert await tokens.resolve(token) == Principal("ci", ("app", "docs"), read_only=True)
    assert await tokens.resolve(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert await tokens.resolve("") is None


async def test_the_list_shows_names_projects_and_use_but_no_token(engine_store: Engine) -> None:
    tokens = Tokens(engine_store)
    token = await tokens.add("alice", ["app"])
    await tokens.add("bob", ["docs"], read_only=True)
    assert await tokens.resolve(token) is not None
    before = {r.name: r for r in await tokens.list()}
    await tokens.record_uses({"alice": 1_000.0})
    await tokens.record_uses({"alice": 10.0})  # an older use never moves it back
    after = {r.name: r for r in await tokens.list()}
    assert list(after) == ["alice", "bob"]
    assert before["alice"].last_used is None and after["alice"].last_used == 1_000.0
    assert after["bob"].read_only and after["bob"].projects == ("docs",) and after["bob"].last_used is None
    assert token not in repr(after) and token_digest(token) not in repr(after)


async def test_resolving_a_token_never_waits_on_another_process_s_write_lock(store: Store) -> None:
    token = await Tokens(store).add("reader", ["app"], read_only=True)
    holder = sqlite3.connect(store.path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another process writing, for longer than this test waits
        with anyio.fail_after(2):
            assert await Tokens(store).resolve(token) == Principal("reader", ("app",), read_only=True)
    finally:
        holder.close()


async def test_a_revoked_token_resolves_to_nobody(engine_store: Engine) -> None:
    tokens = Tokens(engine_store)
    token = await tokens.add("alice", ["app"])
    await tokens.revoke("alice")
    assert await tokens.resolve(token) is None and not await tokens.any()
    with pytest.raises(NotFoundError, match="no token named 'alice'"):
        await tokens.revoke("alice")


@pytest.mark.parametrize(
    ("name", "projects", "message"),
    [
        ("two words", ["app"], "not a token name"),
        ("alice", ["no/such"], "not a project name"),
        ("alice", [], "at least one project"),
        ("x" * 65, ["app"], "over the limit"),
    ],
)
async def test_bad_names_and_projects_are_refused_with_one_line(
    engine_store: Engine, name: str, projects: list[str], message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        await Tokens(engine_store).add(name, projects)
    assert not await Tokens(engine_store).any()


async def test_a_name_is_one_token(engine_store: Engine) -> None:
    await Tokens(engine_store).add("alice", ["app"])
    with pytest.raises(UsageError, match="a token named 'alice' exists"):
        await Tokens(engine_store).add("alice", ["docs"])


async def test_a_token_in_a_postgresql_home_is_kept_as_its_digest(postgres_url: str) -> None:
    import psycopg

    from loci.memory.engines.select import use_engine

    async with use_engine(postgres_url) as store:
        token = await Tokens(store).add("alice", ["app"])
    with psycopg.connect(postgres_url) as conn:
        kept = conn.execute("SELECT name, digest, projects, read_only FROM tokens").fetchall()
    assert kept == [("alice", token_digest(token), '["app"]', 0)]
