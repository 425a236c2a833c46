"""Per-user tokens: a name, the projects it may reach, whether it may write; stored hashed.

`loci tokens add NAME --project P` makes a token of `secrets.token_urlsafe(32)`
(32 random bytes, 256 bits), shows it once, and keeps only its SHA-256. A
slow, salted hash (bcrypt, argon2) is for passwords, which people choose
from a small space an attacker can walk; a 256-bit random token has no such
space, so one round of SHA-256 already leaves nothing to guess, and keeps
the check per request to a microsecond. A stolen copy of the home gives its
reader the digests, not the tokens.

A request's token is found by its digest (`resolve`): the row is looked up
by the digest, then the two digests are compared with `hmac.compare_digest`.
The time a lookup takes can tell a guesser only how a digest of their own
guess sorts among the stored ones, which brings no token nearer: finding a
token from its digest is finding a SHA-256 preimage.

The table is its own migration set, in plain SQL (a `TEXT` digest, the
projects as a JSON list in `TEXT`, times as seconds), on SQLite here and on
PostgreSQL in memory/engines/postgres/schema/tokens.py; every query is in
this module, written once for both engines (`?` placeholders, `ON CONFLICT
DO NOTHING` and `RETURNING`, which both understand), so `Tokens` takes a home
on either (memory/engines/base.py `Engine`). A revoked token's row is deleted: it is refused on the
next lookup. Looking a token up only reads, so a request never waits on a
write (another process's lock, a database away): a server notes each
token's use in memory and writes the `last_used` of all of them in one
transaction (`record_uses`) every `USES_EVERY_S` seconds and when it stops
(servers/auth/principals.py), so `loci tokens list` shows a use that recent or
older.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlite_utils
from sqlite_utils import Migrations

from loci.memory.engines.base import Engine
from loci.memory.errors import NotFoundError, UsageError
from loci.memory.projects import check_project

__all__ = ["MAX_NAME_CHARS", "Principal", "TokenRecord", "Tokens", "check_token_name", "token_digest"]

MIGRATIONS = Migrations("tokens")
MAX_NAME_CHARS = 64
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]*")


@MIGRATIONS()
def create_tokens_table(db: sqlite_utils.Database) -> None:
    db.execute(
        "CREATE TABLE tokens ("
        " id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, digest TEXT NOT NULL UNIQUE,"
        " projects TEXT NOT NULL, read_only INTEGER NOT NULL DEFAULT 0,"
        " created REAL NOT NULL, last_used REAL)"
    )


@dataclass(frozen=True)
class Principal:
    """Who a request is: a token's name, the projects it may reach (None in them: every project), and whether it
    may write."""

    name: str
    projects: tuple[str | None, ...]
    read_only: bool = False


@dataclass(frozen=True)
class TokenRecord:
    """A token as `loci tokens list` shows it: never the token, nor its digest."""

    name: str
    projects: tuple[str, ...]
    read_only: bool
    created: float
    last_used: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "projects": list(self.projects),
            "read_only": self.read_only,
            "created": self.created,
            "last_used": self.last_used,
        }


def token_digest(token: str | bytes) -> str:
    """The SHA-256 of a token, in hex: what the home keeps."""
    raw = token.encode("utf-8", "replace") if isinstance(token, str) else token
    return hashlib.sha256(raw).hexdigest()


def check_token_name(name: object) -> str:
    """The name itself, or one clear `UsageError`."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise UsageError(
            f"{name!r} is not a token name; name a token by letters, digits, '.', '_', '@' and '-'"
            " (starting with a letter or a digit), such as 'alice' or 'ci-bot'"
        )
    if len(name) > MAX_NAME_CHARS:
        raise UsageError(f"the token name has {len(name)} characters, over the limit of {MAX_NAME_CHARS}")
    return name


class Tokens:
    """The tokens of a home."""

    def __init__(self, store: Engine) -> None:
        self.store = store

    async def add(self, name: str, projects: Sequence[str], *, read_only: bool = False) -> str:
        """Make a token for `projects`, store its digest, and return the token (the only time it is seen)."""
        check_token_name(name)
        chosen = list(dict.fromkeys(check_project(p) for p in projects))
        if not chosen:
            raise UsageError("a token needs at least one project: --project NAME")
        token = secrets.token_urlsafe(32)
        row = (name, token_digest(token), json.dumps(chosen), int(read_only), time.time())
        sql = (
            "INSERT INTO tokens (name, digest, projects, read_only, created) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT DO NOTHING RETURNING id"
        )
        if not await self.store.write(lambda db: db.execute(sql, row).fetchall()):
            raise UsageError(f"a token named {name!r} exists; revoke it first or choose another name")
        return token

    async def list(self) -> list[TokenRecord]:
        sql = "SELECT name, projects, read_only, created, last_used FROM tokens ORDER BY name"
        rows = await self.store.read(lambda db: db.execute(sql).fetchall())
        return [
            TokenRecord(name, tuple(json.loads(projects)), bool(read_only), created, last_used)
            for name, projects, read_only, created, last_used in rows
        ]

    async def revoke(self, name: str) -> None:
        check_token_name(name)
        sql = "DELETE FROM tokens WHERE name = ? RETURNING id"
        gone = await self.store.write(lambda db: db.execute(sql, [name]).fetchall())
        if not gone:
            raise NotFoundError(f"no token named {name!r}; loci tokens list shows them")

    async def any(self) -> bool:
        """Whether the home has a token at all (then every request to a server must carry one)."""
        return bool(await self.store.read(lambda db: db.execute("SELECT 1 FROM tokens LIMIT 1").fetchone()))

    async def resolve(self, token: str | bytes) -> Principal | None:
        """The principal of a token, or None. It only reads: a request never waits on a write (`record_uses` sets
        `last_used`, later, in a batch)."""
        digest = token_digest(token)
        sql = "SELECT id, name, digest, projects, read_only FROM tokens WHERE digest = ?"
        rows = await self.store.read(lambda db: db.execute(sql, [digest]).fetchall())
        if not rows or not hmac.compare_digest(rows[0][2], digest):
            return None
        _, name, _, projects, read_only = rows[0]
        return Principal(name, tuple(json.loads(projects)), bool(read_only))

    async def record_uses(self, used: dict[str, float]) -> None:
        """Set the `last_used` of each token named in `used` to its time (never back), in one transaction."""
        if not used:
            return
        rows = [(when, name, when) for name, when in sorted(used.items())]
        sql = "UPDATE tokens SET last_used = ? WHERE name = ? AND (last_used IS NULL OR last_used < ?)"
        await self.store.write(lambda db: db.conn.executemany(sql, rows))
