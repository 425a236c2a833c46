"""The home's health: what a failing SQLite call means, and the checks that say whether a file is whole.

sqlite3 reports a broken home with codes, not words a person can act on:
"attempt to write a readonly database", "database disk image is
malformed", "Could not decode to UTF-8 column 'meta'". `translate` turns the
codes that mean the file itself is the problem (read-only, damaged, not a
database, unopenable, disk full, I/O error, locked by another process past
the busy timeout) into one `StoreError` line that
names the file, the cause and what to do; any other sqlite3 error (a bug in
a query) propagates unchanged. The store (memory/engines/sqlite/store.py) calls it where every read and
write enters SQLite.

`integrity` runs `PRAGMA integrity_check` and each FTS5 table's own
`integrity-check` command (against its content table too), and returns the
problems found, `[]` for a whole file. The FTS command is an INSERT, so on a
home opened read-only it is reported as not run rather than failing.

The damage mark: when a check finds problems, `mark_damage` writes
`PATH.damaged` beside the file, naming its inode, and the store refuses to
write a marked file (`marked_damage`); a mark beside a different file (the
damaged one moved aside, a new one in its place) is ignored, and
`clear_damage` lifts it once a check finds the file whole.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from loci.memory.errors import StoreError, StoreUnavailable

__all__ = [
    "DAMAGED",
    "READ_ONLY",
    "check_home",
    "clear_damage",
    "damage_mark",
    "fts_tables",
    "integrity",
    "is_busy",
    "is_damage",
    "mark_damage",
    "marked_damage",
    "recovery",
    "translate",
]

# Primary result codes (the low byte of sqlite3's extended code).
BUSY, LOCKED, READ_ONLY, IO_ERROR, CORRUPT, CANT_OPEN, FULL, NOT_A_DB = 5, 6, 8, 10, 11, 14, 13, 26
DAMAGED = frozenset({CORRUPT, NOT_A_DB})
CHECK_ROWS = 20


def _code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def is_busy(exc: BaseException) -> bool:
    """Whether `exc` says another connection held the lock past the busy timeout ("database is locked")."""
    return isinstance(exc, sqlite3.OperationalError) and _code(exc) in (BUSY, LOCKED)


def is_damage(exc: BaseException) -> bool:
    """Whether `exc` says the file's contents are damaged (malformed, not a database, undecodable text)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    return _code(exc) in DAMAGED or "Could not decode to UTF-8" in str(exc)


def recovery(path: Path) -> str:
    """What to do with a damaged home, in one sentence."""
    return (
        f"save what it holds with `loci memory export --db {path} --out rescue.json`, then move {path} aside "
        f"(or rebuild it with `sqlite3 {path} .recover | sqlite3 fixed.db`); "
        f"`loci doctor --db {path}` says what is wrong"
    )


def translate(exc: sqlite3.Error, path: Path, doing: str) -> StoreError | None:
    """The `StoreError` for a failure of the file itself while `doing` ("write", "read", "open"), else None."""
    code = _code(exc)
    if is_damage(exc):
        return StoreError(f"the Loci home {path} is damaged ({exc}); {recovery(path)}")
    if is_busy(exc):
        return StoreUnavailable(
            f"cannot {doing} the Loci home {path}: it is locked by another process ({exc}); "
            "try again once that process is done"
        )
    if code == READ_ONLY:
        return StoreError(
            f"cannot {doing} the Loci home {path}: it is read-only to this process ({exc}); "
            "check its permissions, its immutable flag (lsattr) and its mount"
        )
    if code == FULL:
        return StoreError(f"cannot {doing} the Loci home {path}: the disk is full ({exc})")
    if code in (IO_ERROR, CANT_OPEN):
        return StoreError(f"cannot {doing} the Loci home {path}: {exc}")
    return None


def fts_tables(conn: sqlite3.Connection) -> list[str]:
    """The FTS5 tables of the home (not their shadow tables, not fts5vocab views)."""
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL%'")
    return [name for name, sql in rows if "using fts5(" in " ".join(sql.lower().split()).replace("fts5 (", "fts5(")]


def integrity(conn: sqlite3.Connection) -> list[str]:
    """The problems `PRAGMA integrity_check` and the FTS5 checks find; `[]` when the file is whole."""
    try:
        rows = [row[0] for row in conn.execute(f"PRAGMA integrity_check({CHECK_ROWS})")]
    except sqlite3.DatabaseError as exc:
        return [f"integrity_check could not run: {exc}"]
    lines = [line.strip() for row in rows for line in str(row).splitlines()]
    problems = [] if rows == ["ok"] else [f"integrity_check: {line}" for line in lines if line and "***" not in line]
    try:
        tables = fts_tables(conn)
    except sqlite3.DatabaseError as exc:
        return [*problems, f"the schema cannot be read: {exc}"]
    for table in tables:
        problems += _fts_problems(conn, table)
    return problems


def _fts_problems(conn: sqlite3.Connection, table: str) -> list[str]:
    """FTS5's own check of `table` (index against content with rank 1), in a transaction rolled back."""
    quoted = '"' + table.replace('"', '""') + '"'
    try:
        conn.execute("SAVEPOINT fts_check")
    except sqlite3.DatabaseError as exc:
        return [f"{table}: full-text check not run ({exc})"]
    try:
        conn.execute(f"INSERT INTO {quoted}({quoted}, rank) VALUES ('integrity-check', 1)")
        return []
    except sqlite3.DatabaseError as exc:
        if _code(exc) == READ_ONLY:
            return [f"{table}: full-text check not run (the home is read-only)"]
        return [f"{table}: {' '.join(str(exc).split())}"]
    finally:
        with contextlib.suppress(sqlite3.Error):  # a damaged file can fail even the rollback
            conn.execute("ROLLBACK TO fts_check")
            conn.execute("RELEASE fts_check")


def damage_mark(path: Path) -> Path:
    """The file beside a home that says it was found damaged: `loci.db.damaged`."""
    return path.with_name(path.name + ".damaged")


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except OSError:
        return None


def mark_damage(path: Path, problems: list[str]) -> str:
    """Mark the home damaged (best effort: the mark is a file beside it); the refusal message."""
    message = f"the Loci home {path} is damaged ({problems[0]}); Loci will not write to it: {recovery(path)}"
    with contextlib.suppress(OSError):
        damage_mark(path).write_text(f"{_inode(path)}\n" + "\n".join(problems) + "\n", encoding="utf-8")
    return message


def marked_damage(path: Path) -> str | None:
    """The refusal message when a mark names this very file (a mark left beside a new file is ignored)."""
    try:
        inode, _, problems = damage_mark(path).read_text(encoding="utf-8").partition("\n")
    except OSError:
        return None
    if inode.strip() != str(_inode(path)):
        return None
    first = problems.splitlines()[0] if problems.strip() else "found by an earlier check"
    return f"the Loci home {path} is damaged ({first}); Loci will not write to it: {recovery(path)}"


def clear_damage(path: Path) -> bool:
    """Lift the damage mark (after a check found the file whole); whether there was one."""
    try:
        damage_mark(path).unlink()
        return True
    except FileNotFoundError:
        return False


def check_home(path: Path) -> dict[str, object]:
    """`loci doctor --db`: the integrity and FTS checks of the file at `path`, and the damage mark lifted if whole.

    Opened directly with sqlite3 (read-write when it can, else read-only),
    so a file too damaged for `Store.open` is still checked.
    """
    if not path.is_file():
        return {"path": str(path), "problems": [f"{path} is not a file"], "fts_tables": [], "mark_cleared": False}
    try:
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        return {"path": str(path), "problems": [f"the schema cannot be read: {exc}"], "fts_tables": []}
    try:
        problems = integrity(conn)
        try:
            tables = fts_tables(conn)
        except sqlite3.DatabaseError:
            tables = []
    finally:
        conn.close()
    cleared = clear_damage(path) if not problems else False
    return {"path": str(path), "problems": problems, "fts_tables": tables, "mark_cleared": cleared}
