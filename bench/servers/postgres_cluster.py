"""A real PostgreSQL for the tests and the benchmarks: a cluster made with `initdb` in a temporary folder.

`cluster()` finds Debian's binaries (on `PATH`, else the newest
`/usr/lib/postgresql/N/bin`), makes a cluster with trust authentication on
127.0.0.1 and a free port, its socket in its own folder, fsync off, and
starts it with `pg_ctl`; closing the context stops it at once and removes
the folder. initdb refuses to run as root, so as root the cluster belongs to
the `postgres` user (Debian's package makes it) and its commands run as that
user. A machine without the binaries fails the tests that need them, saying
what to install: the test command installs `postgresql`. `loci bench team`
starts one the same way when it is given no `--db`. `running_cluster()`
yields the `Cluster` itself, whose `restart()` is `pg_ctl restart -m fast`
(the tests of a server that outlives its database) and whose `bin_dir`
holds the client programs (`pg_dump`, `psql`).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Cluster", "cluster", "running_cluster"]


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


@dataclass(frozen=True)
class Cluster:
    """A running cluster: its `postgres` database's URL, its data folder, and how to run its programs."""

    url: str
    bin_dir: Path
    data: Path
    options: str  # the server's command-line options (address, port, socket folder)
    as_user: tuple[str, ...]

    def run(self, *argv: str) -> None:
        subprocess.run([*self.as_user, *argv], check=True, capture_output=True, timeout=120)

    def pg_ctl(self, command: str, *flags: str) -> None:
        """`pg_ctl COMMAND` on the cluster, waiting until it is done; the server's output goes to its log (in this
        process's pipe it would hold `run` open for as long as the server runs)."""
        log = str(self.data.parent / "log")
        self.run(
            str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-l", log, "-o", self.options, *flags, "-w", command
        )

    def restart(self) -> None:
        """`pg_ctl restart -m fast`: every connection is ended, and the server is back when this returns."""
        self.pg_ctl("restart", "-m", "fast")


@contextmanager
def cluster() -> Iterator[str]:
    """A running cluster for the block: its connection string, `postgresql://postgres@127.0.0.1:PORT/postgres`."""
    with running_cluster() as made:
        yield made.url


@contextmanager
def running_cluster() -> Iterator[Cluster]:
    """A running cluster for the block (`cluster()`'s), as a `Cluster`."""
    bin_dir = _bin_dir()
    folder = Path(tempfile.mkdtemp(prefix="loci-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    data, port = folder / "data", _free_port()
    options = f"-h 127.0.0.1 -p {port} -k {folder} -F -c max_connections=200"
    made = Cluster(f"postgresql://postgres@127.0.0.1:{port}/postgres", bin_dir, data, options, tuple(as_user))
    try:
        made.run(str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync")
        made.pg_ctl("start")
        try:
            yield made
        finally:
            made.pg_ctl("stop", "-m", "immediate")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
