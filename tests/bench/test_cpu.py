"""A bench reads the CPU time its server processes spent, theirs and their children's, not its own."""

from __future__ import annotations

import subprocess
import sys
import time

from loci.bench.servers.cpu import ServerCpu

# A child that works (with a child of its own that works too), says so, and waits for its stdin to close.
WORKER = (
    "import subprocess, sys; "
    "c = subprocess.Popen([sys.executable, '-c', 'import sys; sum(range(4_000_000)); sys.stdin.read()'],"
    " stdin=subprocess.PIPE); "
    "sum(range(4_000_000)); print('done', flush=True); sys.stdin.read(); c.stdin.close(); c.wait()"
)


def test_the_cpu_of_a_server_and_its_children_is_counted_and_not_this_process() -> None:
    mine = ServerCpu()
    before = mine()
    spent = time.process_time()
    sum(range(4_000_000))  # this process's own work is not a server's
    assert time.process_time() > spent
    child = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    try:
        said = child.stdout.readline()
        tree, alone = mine(), ServerCpu(child.pid)()
    finally:
        child.stdin.close()
        child.wait(timeout=30)
        child.stdout.close()
    assert said == b"done\n"
    assert tree - before > 0
    assert alone > 0
    assert ServerCpu.per_call(0.0, 0.25, 100) == 2.5
