"""Revising a verdict: undo what the outcome an episode had before did, so the new one counts alone.

Feedback may change its mind (`good`, then `bad`): the episode takes the
later outcome, and the refinement that counts it first undoes the counting
of the earlier one. Every change refinement makes is an event whose cause
names its job (memory/evolution/refine.py), and a counting refinement opens
with a `counted` event on the episode. Its other events follow it in the
same transaction, so they are the events right after it whose cause starts
with its cause: a bounded read by primary key, with no scan of the log.

Undoing an event, each one recorded as a `revise` event:
- `outcome` (a success or a failure counted on a used memory): the count
  goes back down, and a procedure's refinement cycle with it;
- `reweight` of an edge (reinforce, weaken, a failed episode's grounds):
  the weight moves back by what that event moved it, and the co-success or
  co-failure it counted goes back down;
- `link` from a repair: the edge is dropped softly;
- `unlink` from interference: the edge comes back.
Merges and splits stay: they follow from the facts' text, not the outcome.
A procedure a success distilled stays too (its later successes and
failures judge it, memory/evolution/consolidate.py).

Only the latest counting is undone: each counting undid the one before
it, so a chain of revisions leaves exactly the last verdict counted.
"""

from __future__ import annotations

import json
import sqlite3
import time

from loci.memory.engines.dialects import dialect_of
from loci.memory.graph.ops import log_event

__all__ = ["COUNTED", "undo_counting"]

COUNTED = "counted"
MAX_EVENTS = 20_000


def undo_counting(conn: sqlite3.Connection, episode: int, cause: str) -> int:
    """Undo the latest counting of `episode`'s outcome; how many changes were undone (0 when none was counted)."""
    row = conn.execute(
        "SELECT id, cause FROM memory_events WHERE node = ? AND op = ? ORDER BY id DESC LIMIT 1", [episode, COUNTED]
    ).fetchone()
    if row is None:
        return 0
    start, counted_cause = row
    done = conn.execute(
        "SELECT 1 FROM memory_events WHERE node = ? AND op = 'revise' AND id > ? LIMIT 1", [episode, start]
    ).fetchone()
    if done is not None:
        return 0  # this counting was undone already
    undone = 0
    rows = conn.execute(
        "SELECT op, node, edge, before, after, cause FROM memory_events WHERE id > ? ORDER BY id LIMIT ?",
        [start, MAX_EVENTS],
    )
    for op, node, edge, before, after, event_cause in rows.fetchall():
        if not str(event_cause or "").startswith(counted_cause):
            break
        suffix = str(event_cause)[len(counted_cause) :]
        undone += _undo(conn, op, node, edge, _load(before), _load(after), suffix, cause)
    log_event(conn, "revise", node=episode, after={"undone": undone, "of": counted_cause}, cause=cause)
    return undone


def _load(text: str | None) -> dict:
    return json.loads(text) if text else {}


def _undo(
    conn: sqlite3.Connection,
    op: str,
    node: int | None,
    edge: int | None,
    before: dict,
    after: dict,
    suffix: str,
    cause: str,
) -> int:
    """Undo one event of the counting; `suffix` is what its cause adds to the counting's (` (repair)`...)."""
    now = time.time()
    if op == "outcome" and node is not None and not suffix:
        column = "successes" if "successes" in after else "failures"
        dialect = dialect_of(conn)
        cycles = dialect.json_int("meta", "cycles")
        conn.execute(
            f"UPDATE memory_nodes SET {column} = {dialect.greatest('0', f'{column} - 1')} WHERE id = ?", [node]
        )
        fewer = dialect.json_with("meta", "cycles", dialect.greatest("0", f"{cycles} - 1"))
        conn.execute(
            f"UPDATE memory_nodes SET meta = {fewer} WHERE id = ? AND kind = 'procedural' AND {cycles} IS NOT NULL",
            [node],
        )
        log_event(conn, "revise", node=node, after={column: -1}, cause=cause)
        return 1
    if edge is None:
        return 0
    if op == "reweight" and not suffix and "weight" in before and "weight" in after:
        _unweight(conn, edge, float(before["weight"]) - float(after["weight"]), after, cause, now)
        return 1
    if op == "link" and suffix == " (repair)":
        conn.execute("UPDATE memory_edges SET deleted = ? WHERE id = ? AND deleted IS NULL", [now, edge])
        log_event(conn, "unlink", edge=edge, before=after, cause=cause)
        return 1
    if op == "unlink" and suffix == " (interference)":
        conn.execute("UPDATE memory_edges SET deleted = NULL, updated = ? WHERE id = ?", [now, edge])
        log_event(conn, "link", edge=edge, after=before, cause=cause)
        return 1
    return 0


def _unweight(conn: sqlite3.Connection, edge: int, delta: float, after: dict, cause: str, now: float) -> None:
    row = conn.execute("SELECT weight FROM memory_edges WHERE id = ?", [edge]).fetchone()
    if row is None:
        return
    weight = round(min(1.0, max(0.0, row[0] + delta)), 6)
    counters = [name for name in ("co_success", "co_failure") if name in after]
    sets = "".join(f", {name} = {dialect_of(conn).greatest('0', f'{name} - 1')}" for name in counters)
    conn.execute(f"UPDATE memory_edges SET weight = ?, updated = ?{sets} WHERE id = ?", [weight, now, edge])
    log_event(conn, "reweight", edge=edge, before={"weight": row[0]}, after={"weight": weight}, cause=cause)
