"""The light commands start without the heavy libraries: checked in a fresh interpreter's `sys.modules`.

Speed itself is measured by `loci bench startup`; this test holds the cause:
`loci --version` and `loci memory search` must not import the MCP SDK,
llama.cpp, httpx, rich, sqlite-vec, tiktoken or pydantic (nor numpy, which
sqlite-utils would pull in), since each costs a large part of a second.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from loci.memory.engines.sqlite.store import Store
from loci.memory.graph.graph import Graph

HEAVY = ("mcp", "llama_cpp", "httpx", "rich", "sqlite_vec", "tiktoken", "pydantic", "numpy")
PROBE = """
import json, sys
from loci.runtime.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = sorted({name.split(".")[0] for name in sys.modules} & set(json.loads(HEAVY_JSON)))
print("HEAVY=" + json.dumps(heavy))
"""


def imported_heavy(*argv: str) -> list[str]:
    code = PROBE.replace("HEAVY_JSON", repr(json.dumps(HEAVY)))
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("HEAVY="))
    return json.loads(line.removeprefix("HEAVY="))


def test_version_imports_no_heavy_library() -> None:
    assert imported_heavy("--version") == []


@pytest.mark.parametrize("command", [["search", "harbor owner"], ["stats"]])
async def test_memory_reads_import_no_heavy_library(tmp_path: Path, command: list[str]) -> None:
    db = tmp_path / "loci.db"
    async with await Store.open(db) as store:
        await Graph(store).remember("berth 4 of the harbor belongs to owner Ada")
    assert imported_heavy("memory", *command, "--db", str(db)) == []
