"""Holding a process to a share of a core: a cgroup of its own with a CPU quota, for `loci bench team`.

On a small machine the database, the servers and the clients of a team
benchmark compete for the same cores, so a second server cannot show what it
adds: the machine runs out first. Each server is instead held to a fixed
quota (a quarter of a core by default), as it would be on a small machine of
its own, and the rest of the machine stays for the database and the clients.

`CpuQuotas.find()` looks for a CPU controller this process may write: cgroup
v1's (`/sys/fs/cgroup/cpu`, `cpu.cfs_quota_us` over `cpu.cfs_period_us`),
else cgroup v2's (a folder of the unified hierarchy whose
`cgroup.subtree_control` offers `cpu`, `cpu.max`). Neither writable (no
root, a container without its cgroup delegated) is a `QuotaUnavailable`
whose one line says what was looked for. `hold(pid, cores)` makes a cgroup
named after the run and the process, writes its quota and moves the process
into it (every thread goes with it); `close()` moves what is left back to
the parent and removes the cgroups it made.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PERIOD_US", "CpuQuotas", "QuotaUnavailable"]

PERIOD_US = 100_000
V1 = Path("/sys/fs/cgroup/cpu")
V2 = (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))


class QuotaUnavailable(Exception):
    """No CPU controller this process may write: the benchmark cannot hold its servers to a quota."""


@dataclass
class CpuQuotas:
    """The cgroups of one run, under `root` (cgroup `version` 1 or 2)."""

    root: Path
    version: int
    tag: str = field(default_factory=lambda: f"loci-bench-{uuid.uuid4().hex[:8]}")
    made: list[Path] = field(default_factory=list)

    @classmethod
    def find(cls) -> CpuQuotas:
        if (V1 / "cpu.cfs_quota_us").exists() and os.access(V1, os.W_OK):
            return cls(V1, 1)
        for root in V2:
            controls = root / "cgroup.subtree_control"
            if controls.exists() and "cpu" in controls.read_text().split() and os.access(root, os.W_OK):
                return cls(root, 2)
        raise QuotaUnavailable(
            f"no writable CPU controller: neither cgroup v1's {V1}/cpu.cfs_quota_us nor a cgroup v2 folder"
            f" with cpu in its cgroup.subtree_control ({', '.join(map(str, V2))}); run as root, or with the"
            " cgroup delegated, to hold each server to a quota"
        )

    def hold(self, pid: int, cores: float) -> Path:
        """Move process `pid` into a cgroup of its own that may use `cores` of a core at most."""
        group = self.root / f"{self.tag}-{pid}"
        group.mkdir()
        self.made.append(group)
        quota = max(1_000, round(cores * PERIOD_US))
        if self.version == 1:
            (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (group / "cpu.cfs_quota_us").write_text(str(quota))
        else:
            (group / "cpu.max").write_text(f"{quota} {PERIOD_US}")
        (group / "cgroup.procs").write_text(str(pid))
        return group

    def close(self) -> None:
        """Move the processes left back to the root's cgroup and remove the cgroups made."""
        for group in reversed(self.made):
            try:
                for pid in (group / "cgroup.procs").read_text().split():
                    (self.root / "cgroup.procs").write_text(pid)
                group.rmdir()
            except OSError:
                pass  # a process that ended on its way out; the folder goes once it is empty
        self.made.clear()

    def __enter__(self) -> CpuQuotas:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
