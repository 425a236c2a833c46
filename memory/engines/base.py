"""What the rest of Loci needs from a database, whichever engine holds it.

A home is opened once (`memory.engines.select.open_engine`) and then used
through two calls: `read(fn)` runs `fn(conn)` on a consistent snapshot and
`write(fn)` runs it in one transaction, both in a worker thread, so the
event loop never waits on the database. `conn` answers `execute(sql,
params)` and `executemany(sql, rows)` with `?` placeholders on both engines,
and its rows are tuples: SQL that is the same on both engines is written
once. SQLite's store (`memory.engines.sqlite.store.Store`) and PostgreSQL's
(`memory.engines.postgres.store.PgStore`) both fit `Engine`.

Where the engines' SQL differs, the difference is a method of `Dialect`,
one class per engine (memory/engines/sqlite/dialect.py,
memory/engines/postgres/dialect.py): the SQL that uses it asks the dialect
of its store or of its transaction's connection (memory/engines/dialects.py,
`dialect_of`) for the fragment instead of testing which engine it runs on.
What differs so far: taking the next rows of a queue without waiting on the
rows another worker holds, locking the rows a transaction read to change,
reading (as text or as an integer) and setting a field of a JSON text
column, building a JSON object, a scalar maximum, rounding a float, the
integer part of a number, whether a table exists, a home's tables and
their columns, emptying a full-text index, the next id after rows copied in
with theirs, the ids a batch of new rows takes, adding rows to and taking a row out of a
full-text index, inserting many rows in one statement (or only those not there yet, saying
which), the home's size, and waking the processes that wait for new jobs. Upserts (`ON CONFLICT`) and
`RETURNING` are the same on both (SQLite 3.35 and later) and need no
dialect. Full-text search differs most (FTS5 tables on SQLite, `tsvector`
columns under a GIN index on PostgreSQL: memory/engines/postgres/schema/),
so its queries are a module per engine in the graph (memory/graph/fts/)
and in the context store (memory/context/index/), and the dialect `pick`s
the one of each pair that is its engine's.

Nothing outside this package asks which engine a home is (tests/test_engine_names.py
checks it): a caller asks what the home can do. `read_bounded` and
`write_bounded` run a small read or write where the engine runs it fastest
(SQLite's on the calling thread when its writer is free, PostgreSQL's in its
worker threads, as any other); `local_file` is the file another connection
or process may open itself with sqlite3 (sqlite-vec's search, the regular
expression scan's child), None for a database server's home; `listen(channel)`
is a `Listener` that wakes when a transaction that notified `channel`
commits, None where the engine has no listeners and its readers poll.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

__all__ = ["MEMORY_CHANNEL", "Dialect", "Engine", "Listener"]

T = TypeVar("T")

# What a transaction that adds to `memory_events` notifies, its payload the project, where the engine has
# listeners (PostgreSQL's trigger, memory/engines/postgres/schema/graph.py); live memory listens on it.
MEMORY_CHANNEL = "loci_memory"


class Dialect(Protocol):
    """The SQL fragments that differ between engines."""

    name: str

    def pick(self, *, sqlite: T, postgresql: T) -> T:
        """The one of a pair of per-engine twins (a full-text index's module) that is this engine's."""
        ...

    def skip_locked(self) -> str:
        """What ends a SELECT that claims rows, so two workers never claim the same row."""
        ...

    def for_update(self) -> str:
        """What ends a SELECT whose rows this transaction will change, so no other writer changes them first."""
        ...

    def json_text(self, column: str, key: str) -> str:
        """The text of field `key` of the JSON object stored as text in `column`."""
        ...

    def json_int(self, column: str, key: str) -> str:
        """Field `key` of the JSON object stored as text in `column`, as an integer (NULL when it is missing)."""
        ...

    def json_with(self, column: str, key: str, value: str) -> str:
        """The JSON text of `column` with field `key` set to the SQL expression `value` (a number)."""
        ...

    def json_object(self, fields: dict[str, str]) -> str:
        """A JSON object as text, each key (a name) given by its SQL expression."""
        ...

    def greatest(self, *values: str) -> str:
        """The largest of the SQL expressions `values` (SQLite's scalar `max`)."""
        ...

    def round(self, value: str, digits: int) -> str:
        """The SQL number `value` rounded to `digits` decimals, as a float."""
        ...

    def whole(self, value: str) -> str:
        """The integer part of the non-negative SQL number `value` (the periods whole in a time)."""
        ...

    def has_table(self) -> str:
        """A query with one row when the table named by its one parameter exists, none when it does not."""
        ...

    def new_ids(self, conn: Any, table: str, count: int) -> list[int]:
        """The ids of the next `count` rows a write adds to `table` (its `id` column), ascending; the write
        inserts them itself, as a batch of rows that must know their ids before they go in."""
        ...

    def insert_many(self, conn: Any, table: str, columns: dict[str, str], rows: list[tuple[Any, ...]]) -> None:
        """Insert `rows` into `table`'s `columns` (name -> PostgreSQL type), as few statements as the engine
        allows: a table whose statement triggers keep a summary (PostgreSQL's `memory_vocab`) runs them once."""
        ...

    def insert_new(
        self, conn: Any, table: str, columns: dict[str, str], rows: list[tuple[Any, ...]], returning: str
    ) -> list[tuple[Any, ...]]:
        """Insert those of `rows` whose unique keys are not in `table` yet (the rest are skipped, as `ON CONFLICT
        DO NOTHING` skips them); the `returning` columns of each row inserted, in order."""
        ...

    def fts_insert(self, conn: Any, table: str, rows: list[tuple[int, str]]) -> None:
        """Add `(rowid, text)` rows to the graph's full-text `table` (a row is a node's id, or minus its piece's)."""
        ...

    def fts_delete(self, table: str) -> str:
        """The statement that takes the row `(rowid, text)` given as parameters out of the full-text `table`."""
        ...

    def tables(self) -> str:
        """A query for the names of the home's own tables, one a row (an index's internal tables left out)."""
        ...

    def columns(self) -> str:
        """A query for `(name, type)` of each stored column of the table its one parameter names, in order."""
        ...

    def clear_index(self, table: str) -> str:
        """The statement that empties a full-text index `table` (the graph's or the context store's)."""
        ...

    def reset_ids(self, conn: Any, table: str) -> None:
        """Make the ids `table` gives next follow the largest it holds (after rows came in with their ids)."""
        ...

    def home_bytes(self) -> str:
        """A query for the size of the home, in bytes."""
        ...

    def notify(self, channel: str) -> str:
        """The statement that wakes the processes listening on `channel` when this transaction commits, its
        payload the one parameter ("": the engine has no listeners, and they poll)."""
        ...

    def one_at_a_time(self, name: str) -> str:
        """The statement after which this write transaction is the only one past the same statement for `name`
        until it ends: what it reads next another writer cannot be reading to change at the same time ("": the
        engine's writes run one at a time already)."""
        ...


class Listener(Protocol):
    """A wait for the notifications of one channel (memory/engines/postgres/listen.py)."""

    async def wait(self, timeout: float) -> bool:
        """Whether a notification came (True) before `timeout` seconds passed (False)."""
        ...

    async def aclose(self) -> None: ...


class Engine(Protocol):
    """A home: where it is, its dialect, and transactions run in a worker thread."""

    engine: str  # the engine's name, for reports; code outside memory/engines/ never compares it
    read_only: str | None

    @property
    def location(self) -> str: ...

    @property
    def local_file(self) -> Path | None:
        """The file that holds the home, which another connection or process may open with sqlite3 itself; None
        when the home is a database server's."""
        ...

    async def read(self, fn: Callable[[Any], T]) -> T: ...

    async def write(self, fn: Callable[[Any], T]) -> T: ...

    async def read_bounded(self, fn: Callable[[Any], T]) -> T:
        """`read(fn)` for a read of a bounded number of rows through indexes, run where the engine runs it
        fastest."""
        ...

    async def write_bounded(self, fn: Callable[[Any], T]) -> T:
        """`write(fn)` for a small write (a recall's use counts), run where the engine runs it fastest."""
        ...

    async def listen(self, channel: str, payload: str | None = None) -> Listener | None:
        """A `Listener` on `channel` (woken only by notifications carrying `payload`, when given); None when the
        engine cannot wake another process, and its readers poll."""
        ...

    def close(self) -> None: ...
