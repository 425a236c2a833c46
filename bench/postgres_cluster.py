"""A real PostgreSQL for the tests and the benchmarks: a cluster made with `initdb` in a temporary folder.

`cluster()` finds Debian's binaries (on `PATH`, else the newest
`/usr/lib/postgresql/N/bin`), makes a cluster with trust authentication on
127.0.0.1 and a free port, its socket in its own folder, fsync off, and
starts it with `pg_ctl`; closing the context stops it at once and removes
the folder. initdb refuses to run as root, so as root the cluster belongs to
the `postgres` user (Debian's package makes it) and its commands run as that
user. A machine without the binaries fails the tests that need them, saying
what to install: the test command installs `postgresql`. `loci bench team`
starts one the same way when it is given no `--db`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["cluster"]


def _bin_dir() -> Path:
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    if not versions:
        raise RuntimeError("PostgreSQL's initdb is not installed: apt-get install postgresql")
    return versions[-1].parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def cluster() -> Iterator[str]:
    """A running cluster for the block: its connection string, `postgresql://postgres@127.0.0.1:PORT/postgres`."""
    bin_dir = _bin_dir()
    folder = Path(tempfile.mkdtemp(prefix="loci-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    data, port = folder / "data", _free_port()

    def run(*argv: str) -> None:
        subprocess.run([*as_user, *argv], check=True, capture_output=True, timeout=120)

    try:
        run(str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync")
        options = f"-h 127.0.0.1 -p {port} -k {folder} -F -c max_connections=200"
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(folder / "log"), "-o", options, "-w", "start")
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            run(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
