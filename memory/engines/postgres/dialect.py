"""PostgreSQL's side of the SQL that differs between engines (memory/engines/base.py).

A claim ends its SELECT with `FOR UPDATE SKIP LOCKED`: each worker locks the
rows it takes until its transaction ends, and another worker's SELECT passes
them by instead of waiting or taking them too; a row read to be changed
(`for_update`) is locked the same way, so a worker's check that a job is
still its own holds until it commits. JSON fields are read with
`->>` from the text cast to `jsonb` (and cast to a number where one is
wanted), set with `jsonb_set` and built with `json_build_object`, each
written back as text. A scalar maximum is `greatest`; `round` to some
digits takes a `numeric` (there is none for a float), and a number's
integer part is `trunc` (a CAST to an integer rounds here, where SQLite's
truncates). Writers run at once here, so a batch
whose rows must know their ids before they go in takes them from the id
column's identity sequence (`new_ids`, one `nextval` per row in one
statement), which never hands one id out twice and locks nothing: writers
of other rows, and the use counts every recall updates, never wait on it.
Ids are ascending within a batch, unique across writers, and may leave
gaps (a rolled-back write's ids are not handed out again). A full-text row is a plain row of
its table, deleted by its key; it goes in with its node's project and kind,
which a search filters by (one join for the batch). Many rows go in as one statement over arrays
(`unnest`), so the statement triggers that keep the full-text vocabulary
run once per batch, not once per row. A table's columns are read from the catalog with their types (a
generated one, as the index's `tsv`, is left out), and rows copied in with
their ids move the identity's sequence past the largest (`reset_ids`).
`notify` is `pg_notify`, which
PostgreSQL delivers to the channel's listeners only when the transaction
commits (memory/engines/postgres/listen.py): a job queued in a transaction
wakes the workers once it can be claimed, and never if it rolls back. A
write that numbers what it adds from what is there (`one_at_a_time`) takes a
transaction-level advisory lock on the name first, so a second writer
counts after the first has committed, as SQLite's one writer would.
"""

from __future__ import annotations

from typing import Any, TypeVar

__all__ = ["POSTGRESQL"]

T = TypeVar("T")


class PostgresDialect:
    name = "postgresql"

    def pick(self, *, sqlite: T, postgresql: T) -> T:
        return postgresql

    def skip_locked(self) -> str:
        return " FOR UPDATE SKIP LOCKED"

    def for_update(self) -> str:
        return " FOR UPDATE"

    def json_text(self, column: str, key: str) -> str:
        return f"({column})::jsonb ->> '{key}'"

    def json_int(self, column: str, key: str) -> str:
        return f"CAST(({column})::jsonb ->> '{key}' AS BIGINT)"

    def json_with(self, column: str, key: str, value: str) -> str:
        return f"CAST(jsonb_set(({column})::jsonb, '{{{key}}}', to_jsonb({value})) AS TEXT)"

    def json_object(self, fields: dict[str, str]) -> str:
        pairs = ", ".join(f"'{key}', {value}" for key, value in fields.items())
        return f"CAST(json_build_object({pairs}) AS TEXT)"

    def greatest(self, *values: str) -> str:
        return f"greatest({', '.join(values)})"

    def round(self, value: str, digits: int) -> str:
        return f"CAST(round(CAST({value} AS NUMERIC), {digits}) AS DOUBLE PRECISION)"

    def whole(self, value: str) -> str:
        return f"trunc({value})"

    def has_table(self) -> str:
        return "SELECT 1 WHERE to_regclass(?) IS NOT NULL"

    def new_ids(self, conn: Any, table: str, count: int) -> list[int]:
        if not count:
            return []
        sql = "SELECT nextval(pg_get_serial_sequence(?, 'id')) FROM generate_series(1, ?)"
        return sorted(row[0] for row in conn.execute(sql, [table, count]))

    def insert_many(self, conn: Any, table: str, columns: dict[str, str], rows: list[tuple[Any, ...]]) -> None:
        if rows:
            conn.execute(_from_arrays(table, columns), _arrays(rows))
            conn.grew(table, len(rows))

    def insert_new(
        self, conn: Any, table: str, columns: dict[str, str], rows: list[tuple[Any, ...]], returning: str
    ) -> list[tuple[Any, ...]]:
        if not rows:
            return []
        sql = f"{_from_arrays(table, columns)} ON CONFLICT DO NOTHING RETURNING {returning}"
        added = [tuple(row) for row in conn.execute(sql, _arrays(rows))]
        conn.grew(table, len(added))
        return added

    def fts_insert(self, conn: Any, table: str, rows: list[tuple[int, str]]) -> None:
        if rows:
            conn.execute(
                f"INSERT INTO {table} (rowid, text, project, kind) SELECT r.id, r.text, n.project, n.kind"
                " FROM unnest(CAST(? AS bigint[]), CAST(? AS text[])) AS r(id, text)"
                " LEFT JOIN memory_pieces p ON p.id = -r.id LEFT JOIN memory_nodes n ON n.id = coalesce(p.node, r.id)",
                _arrays(rows),
            )
            conn.grew(table, len(rows))

    def fts_delete(self, table: str) -> str:
        return f"DELETE FROM {table} WHERE rowid = ? AND text = ?"

    def tables(self) -> str:
        return "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"

    def columns(self) -> str:
        return (
            "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = to_regclass(?)"
            " AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum"
        )

    def clear_index(self, table: str) -> str:
        return f"DELETE FROM {table}"

    def reset_ids(self, conn: Any, table: str) -> None:
        identities = "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(?) AND attidentity <> ''"
        for (column,) in conn.execute(identities, [table]).fetchall():
            conn.execute(
                f"SELECT setval(pg_get_serial_sequence(?, ?), coalesce(max({column}), 0) + 1, false) FROM {table}",
                [table, column],
            )

    def home_bytes(self) -> str:
        return "SELECT pg_database_size(current_database())"

    def notify(self, channel: str) -> str:
        return f"SELECT pg_notify('{channel}', ?)"

    def one_at_a_time(self, name: str) -> str:
        return f"SELECT pg_advisory_xact_lock(hashtext('loci:{name}'))"


def _from_arrays(table: str, columns: dict[str, str]) -> str:
    """An INSERT of `columns` from one array parameter per column, unnested together."""
    arrays = ", ".join(f"CAST(? AS {kind}[])" for kind in columns.values())
    return f"INSERT INTO {table} ({', '.join(columns)}) SELECT * FROM unnest({arrays})"


def _arrays(rows: list[tuple[Any, ...]]) -> list[list[Any]]:
    return [list(column) for column in zip(*rows, strict=True)]


POSTGRESQL = PostgresDialect()
