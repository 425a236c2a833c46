"""A regular-expression scan over the context store, run as a child process.

`memory.context.regex_scan` starts this file with `python -I -S` (standard library
only, nothing from Loci or site-packages, so it starts in a few tens of
milliseconds) and kills it at its deadline. Python's `re` cannot be
interrupted inside one `search`, and a thread cannot be stopped: a separate
process is the only bound that also gives the CPU back.

Protocol: one JSON request line on stdin (`pattern`, `k`, and for a SQLite
home `db`, `refs` or null and `project` or null for every project). A home
this process cannot open (PostgreSQL: its driver is not in the standard
library) has no `db`: the parent then sends the chunks to scan after the
request, one JSON line each (`[kind, number, first line, last line,
text]`, in document order), and closes stdin at the end. One JSON line
per hit on stdout, flushed at once so that the parent keeps what was found
before a timeout; a last line `{"done": true, ...}`.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["main"]

CONTEXT_CHARS = 60


def main() -> int:
    request = json.loads(sys.stdin.readline())
    pattern = re.compile(request["pattern"], re.MULTILINE)
    found = chunks = 0
    for kind, oid, first, last, text in _chunks(request) if "db" in request else map(json.loads, sys.stdin):
        chunks += 1
        found += _scan(pattern, f"{kind}:{oid}", first, last, text, request["k"] - found)
        if found >= request["k"]:
            break
    print(json.dumps({"done": True, "chunks": chunks}), flush=True)
    return 0


def _chunks(request: dict[str, Any]) -> Iterator[tuple[str, int, int, int, str]]:
    """The chunks of a SQLite home to scan, read on a read-only connection of this process."""
    refs = request.get("refs") or []
    project = request.get("project")
    conn = sqlite3.connect(Path(request["db"]).as_uri() + "?mode=ro", uri=True)
    conn.execute("PRAGMA busy_timeout=30000")
    sql = (
        "SELECT o.kind, o.id, c.start_line, c.end_line, c.text FROM context_chunks c"
        " JOIN context_objects o ON o.id = c.object_id WHERE o.complete = 1"
    )
    params = list(refs)
    if refs:
        sql += f" AND o.kind || ':' || o.id IN ({','.join('?' * len(refs))})"
    if project is not None:
        sql += " AND o.project = ?"
        params.append(project)
    sql += " ORDER BY c.object_id, c.seq"
    yield from conn.execute(sql, params)


def _scan(pattern: re.Pattern[str], ref: str, first: int, last: int, text: str, wanted: int) -> int:
    """Print up to `wanted` hits in one chunk, at most one per line; return how many."""
    found, seen = 0, -1
    for match in pattern.finditer(text):
        line = first + text.count("\n", 0, match.start())
        if line == seen:
            continue
        seen = line
        begin = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.start())
        end = len(text) if end < 0 else end
        left = max(begin, match.start() - CONTEXT_CHARS)
        right = min(end, max(match.end(), match.start()) + CONTEXT_CHARS)
        matched = text[match.start() : min(match.end(), end)]
        snippet = f"{text[left : match.start()]}[{matched}]{text[min(match.end(), end) : right]}"
        hit = {"id": ref, "start_line": first, "end_line": last, "line": line, "snippet": snippet}
        print(json.dumps(hit), flush=True)
        found += 1
        if found >= wanted:
            break
    return found


if __name__ == "__main__":
    sys.exit(main())
