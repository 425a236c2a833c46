"""SQLite's side of the SQL that differs between engines (memory/engines/base.py).

A claim needs nothing at the end of its SELECT, because
`Store.write` already holds SQLite's one write lock (`BEGIN IMMEDIATE`) for
the whole transaction, which is also why a batch's new ids are simply
the next ones past the largest (`new_ids`), with no lock of their own;
JSON fields are read with `json_extract` and set with `json_set`; a scalar
maximum is `max(a, b)`, and a number's integer part is its CAST (which
truncates); an FTS5 table with external
content forgets a row by the 'delete' command, given the text it indexed.
A home's tables are those `pragma_table_list` does not call an index's
shadow; an FTS5 table with external content is emptied by its 'delete-all'
command, and an INTEGER PRIMARY KEY always takes one past the largest, so
rows copied in with their ids need nothing more. SQLite cannot wake another
process, so a queued job notifies no one: workers poll.
"""

from __future__ import annotations

from typing import Any, TypeVar

__all__ = ["SQLITE"]

T = TypeVar("T")


class SqliteDialect:
    name = "sqlite"

    def pick(self, *, sqlite: T, postgresql: T) -> T:
        return sqlite

    def skip_locked(self) -> str:
        return ""

    def for_update(self) -> str:
        return ""

    def json_text(self, column: str, key: str) -> str:
        return f"json_extract({column}, '$.{key}')"

    def json_int(self, column: str, key: str) -> str:
        return f"json_extract({column}, '$.{key}')"

    def json_with(self, column: str, key: str, value: str) -> str:
        return f"json_set({column}, '$.{key}', {value})"

    def json_object(self, fields: dict[str, str]) -> str:
        pairs = ", ".join(f"'{key}', {value}" for key, value in fields.items())
        return f"json_object({pairs})"

    def greatest(self, *values: str) -> str:
        return f"max({', '.join(values)})"

    def round(self, value: str, digits: int) -> str:
        return f"round({value}, {digits})"

    def whole(self, value: str) -> str:
        return f"CAST({value} AS INTEGER)"

    def has_table(self) -> str:
        return "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"

    def new_ids(self, conn: Any, table: str, count: int) -> list[int]:
        first = conn.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {table}").fetchone()[0] if count else 0
        return list(range(first, first + count))

    def insert_many(self, conn: Any, table: str, columns: dict[str, str], rows: list[tuple[Any, ...]]) -> None:
        marks = ", ".join("?" * len(columns))
        conn.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)

    def insert_new(
        self, conn: Any, table: str, columns: dict[str, str], rows: list[tuple[Any, ...]], returning: str
    ) -> list[tuple[Any, ...]]:
        marks = ", ".join("?" * len(columns))
        sql = (
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}) ON CONFLICT DO NOTHING RETURNING {returning}"
        )
        return [tuple(row) for values in rows for row in conn.execute(sql, values).fetchall()]

    def fts_insert(self, conn: Any, table: str, rows: list[tuple[int, str]]) -> None:
        self.insert_many(conn, table, {"rowid": "bigint", "text": "text"}, rows)

    def fts_delete(self, table: str) -> str:
        return f"INSERT INTO {table} ({table}, rowid, text) VALUES ('delete', ?, ?)"

    def tables(self) -> str:
        return (
            "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type IN ('table', 'virtual')"
            " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        )

    def columns(self) -> str:
        return "SELECT name, type FROM pragma_table_info(?)"

    def clear_index(self, table: str) -> str:
        return f"INSERT INTO {table} ({table}) VALUES ('delete-all')"

    def reset_ids(self, conn: Any, table: str) -> None:
        return None

    def home_bytes(self) -> str:
        return "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()"

    def notify(self, channel: str) -> str:
        return ""

    def one_at_a_time(self, name: str) -> str:
        return ""


SQLITE = SqliteDialect()
