"""Holding a benchmark to its share of the machine: a cgroup of its own, each server in a child with a CPU quota.

On a small machine the database, the servers and the clients of a team
benchmark compete for the same cores, and on a shared machine they compete
with other work too, so a second server cannot show what it adds: the
machine runs out first. `loci bench team` therefore runs inside a cgroup of
its own (the run's) whose weight is the largest the kernel takes (cgroup
v1's `cpu.shares` 262144, v2's `cpu.weight` 10000, against 1024 and 100 for
everything else), so other work on the machine yields to it. In it, `rest`
holds this process and what it starts afterwards (its clients, and the
PostgreSQL cluster it makes), and each server is held, in a child of its
own, to a fixed quota (a quarter of a core by default), as it would be on a
small machine of its own; the rest of the run's share stays for the
database and the clients.

`CpuQuotas.find()` looks for a CPU controller this process may write: cgroup
v1's (`/sys/fs/cgroup/cpu`, `cpu.cfs_quota_us` over `cpu.cfs_period_us`),
else cgroup v2's (a folder of the unified hierarchy whose
`cgroup.subtree_control` offers `cpu`, `cpu.max`). Neither writable (no
root, a container without its cgroup delegated) is a `QuotaUnavailable`
whose one line says what was looked for. Entering it (`with`) makes the
run's cgroup and moves this process into its `rest`; `hold(pid, cores)`
makes a server's cgroup, writes its quota and moves the process into it
(every thread goes with it), and `release(group)` removes it once the
server has ended; `throttled(group)` is the share of its periods
in which a cgroup was held back by its quota; `close()` moves every process
left back to the cgroup this process came from and removes the cgroups it
made.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PERIOD_US", "WEIGHT", "CpuQuotas", "QuotaUnavailable"]

PERIOD_US = 100_000
V1 = Path("/sys/fs/cgroup/cpu")
V2 = (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))
WEIGHT = {1: ("cpu.shares", "262144"), 2: ("cpu.weight", "10000")}  # the largest each version takes


class QuotaUnavailable(Exception):
    """No CPU controller this process may write: the benchmark cannot hold its servers to a quota."""


@dataclass
class CpuQuotas:
    """The cgroups of one run, under `root` (cgroup `version` 1 or 2); `home` is where this process was."""

    root: Path
    version: int
    home: Path
    tag: str = field(default_factory=lambda: f"loci-bench-{uuid.uuid4().hex[:8]}")
    made: list[Path] = field(default_factory=list)

    @classmethod
    def find(cls) -> CpuQuotas:
        if (V1 / "cpu.cfs_quota_us").exists() and os.access(V1, os.W_OK):
            return cls(V1, 1, _own_group(V1, 1))
        for root in V2:
            controls = root / "cgroup.subtree_control"
            if controls.exists() and "cpu" in controls.read_text().split() and os.access(root, os.W_OK):
                return cls(root, 2, _own_group(root, 2))
        raise QuotaUnavailable(
            f"no writable CPU controller: neither cgroup v1's {V1}/cpu.cfs_quota_us nor a cgroup v2 folder"
            f" with cpu in its cgroup.subtree_control ({', '.join(map(str, V2))}); run as root, or with the"
            " cgroup delegated, to hold each server to a quota"
        )

    @property
    def run(self) -> Path:
        """The run's cgroup, the parent of `rest` and of each server's."""
        return self.root / self.tag

    def hold(self, pid: int, cores: float) -> Path:
        """Move process `pid` into a cgroup of its own that may use `cores` of a core at most."""
        group = self._make(f"server-{pid}")
        quota = max(1_000, round(cores * PERIOD_US))
        if self.version == 1:
            (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (group / "cpu.cfs_quota_us").write_text(str(quota))
        else:
            (group / "cpu.max").write_text(f"{quota} {PERIOD_US}")
        (group / "cgroup.procs").write_text(str(pid))
        return group

    def throttled(self, group: Path) -> tuple[int, int]:
        """The periods of `group`'s quota so far, and those in which its quota held it back."""
        stat = dict(line.split() for line in (group / "cpu.stat").read_text().splitlines() if line.count(" ") == 1)
        return int(stat.get("nr_periods", 0)), int(stat.get("nr_throttled", 0))

    def release(self, group: Path) -> None:
        """Remove a server's cgroup once its process has ended (one still in it is moved back first)."""
        if group in self.made:
            self.made.remove(group)
            self._remove(group)

    def close(self) -> None:
        """Move the processes left back to where this process came from and remove the cgroups made."""
        for group in reversed(self.made):
            self._remove(group)
        self.made.clear()

    def _remove(self, group: Path) -> None:
        try:
            for pid in (group / "cgroup.procs").read_text().split():
                _move(self.home, pid)
            group.rmdir()
        except OSError:
            pass  # a process that ended on its way out; the folder goes once it is empty

    def _make(self, name: str) -> Path:
        group = self.run / name
        group.mkdir()
        self.made.append(group)
        return group

    def __enter__(self) -> CpuQuotas:
        self.run.mkdir()
        self.made.append(self.run)
        try:
            name, weight = WEIGHT[self.version]
            (self.run / name).write_text(weight)
            if self.version == 2:
                (self.run / "cgroup.subtree_control").write_text("+cpu")
            _move(self._make("rest"), str(os.getpid()))
        except OSError:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _own_group(root: Path, version: int) -> Path:
    """The cgroup this process is in, in the hierarchy at `root` (its CPU controller's, in v1)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return root
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if (version == 1 and "cpu" in controllers.split(",")) or (version == 2 and controllers == ""):
            return root / path.lstrip("/")
    return root


def _move(group: Path, pid: str) -> None:
    with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
        (group / "cgroup.procs").write_text(pid)
