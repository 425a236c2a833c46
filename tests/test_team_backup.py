"""docs/team.md's backup recipe runs as written: on a real cluster, as a `loci` role that may not create databases,
with no warning, and the restored home holds what was backed up."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from loci.bench.servers.postgres_cluster import running_cluster

DOC = Path(__file__).parent.parent / "docs" / "team.md"


def _recipe() -> str:
    section = DOC.read_text(encoding="utf-8").split("## Backups", 1)[1]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


def _sh(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_backup_recipe_runs_as_written_as_a_role_that_may_not_create_databases(tmp_path: Path) -> None:
    loci = f"{sys.executable} -m loci.runtime.cli.main"
    with running_cluster() as cluster:
        address = cluster.url.split("@", 1)[1].split("/", 1)[0]
        env = {**os.environ, "PATH": f"{cluster.bin_dir}:{os.environ['PATH']}"}
        admin = f'psql "postgresql://postgres@{address}/postgres" --quiet'
        made = _sh(
            f'{admin} -c "CREATE ROLE loci LOGIN NOCREATEDB" -c "CREATE DATABASE loci OWNER loci"'
            f' && {loci} memory add --db "postgresql://loci@{address}/loci" "the deploy key is in the team vault"',
            tmp_path,
            env,
        )
        assert made.returncode == 0, made.stderr
        script = _recipe().replace("db.internal:5432", address).replace("loci doctor", f"{loci} doctor")
        done = _sh(script, tmp_path, env)
        found = _sh(
            f'{loci} memory search --db "postgresql://loci@{address}/loci_restored" "deploy key"', tmp_path, env
        )
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr and "error" not in done.stderr.lower(), done.stderr
    assert "memory_nodes 1" in done.stdout and "team vault" in found.stdout
