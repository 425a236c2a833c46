"""Homes broken the ways real ones break: an immutable file or directory, random blocks, undecodable text.

`immutable` uses `chattr +i`, which denies even root (these tests run as
root, for whom permission bits deny nothing); it skips the test where the
filesystem has no such flag, and always lifts it so tmp_path can be removed.
"""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.graph import Graph

__all__ = ["damage", "damage_leaves", "filled_home", "immutable", "undecodable_meta"]


@contextmanager
def immutable(path: Path) -> Iterator[Path]:
    """`path` (a file or a directory) with the immutable flag set for the block."""
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"chattr +i is not available here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


async def filled_home(path: Path, facts: int = 400) -> Path:
    """A closed home holding `facts` linked facts, each with metadata (the WAL checkpointed into the file)."""
    async with await Store.open(path) as store:
        graph = Graph(store)
        previous: list[int] = []
        for i in range(facts):
            text = f"fact {i}: berth {i * 7} of the harbor belongs to owner {i % 13} " + "padding " * 25
            node, _ = await graph.remember(text, "semantic", {"source": f"note {i}"}, previous)
            previous = [node.id]
    return path


def damage(path: Path, blocks: int = 20, seed: int = 3) -> None:
    """Write `blocks` random 512-byte blocks into the second half of the file (the schema stays readable)."""
    size = path.stat().st_size
    rng = random.Random(seed)
    with path.open("r+b") as f:
        for _ in range(blocks):
            f.seek(rng.randrange(size // 2, size - 512))
            f.write(rng.randbytes(512))
    for side in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if side.exists():
            os.unlink(side)


def damage_leaves(path: Path, table: str, leaves: int = 2, seed: int = 3) -> None:
    """Overwrite `leaves` leaf pages from the middle of `table` with random bytes, wherever the file put them
    (random blocks anywhere, as `damage` writes, may land in cell text and break no page)."""
    conn = sqlite3.connect(path)
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    pages = [row[0] for row in conn.execute("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf'", [table])]
    conn.close()
    rng = random.Random(seed)
    middle = len(pages) // 2
    with path.open("r+b") as f:
        for page in pages[middle : middle + leaves]:
            f.seek((page - 1) * size)
            f.write(rng.randbytes(size))


def undecodable_meta(path: Path, node_id: int) -> None:
    """Give one node metadata bytes that are not UTF-8, as a damaged sector would."""
    conn = sqlite3.connect(path)
    conn.execute("UPDATE memory_nodes SET meta = CAST(X'7b22ff22' AS TEXT) WHERE id = ?", [node_id])
    conn.commit()
    conn.close()
