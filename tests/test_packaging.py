"""Loci installs one import name, `loci`, and every package of the repository is inside it.

The repository keeps its top-level folders (`runtime/`, `memory/`, ...); pyproject.toml maps each
under `loci` (setuptools' `package-dir`) and lists every package. A folder with an `__init__.py`
that the list forgets would be missing from a wheel while the editable install of a developer still
finds it, so the first test reads the list against the tree; the second builds a real wheel's tree.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("runtime", "memory", "tools", "servers", "bench")


def test_every_package_of_the_tree_is_listed_under_loci() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert setuptools["package-dir"] == {f"loci.{folder}": folder for folder in FOLDERS}
    on_disk = {
        "loci." + ".".join(init.parent.relative_to(ROOT).parts)
        for folder in FOLDERS
        for init in (ROOT / folder).rglob("__init__.py")
    }
    assert set(setuptools["packages"]) == on_disk


@pytest.mark.slow
def test_an_install_puts_one_name_in_site_packages(tmp_path: Path) -> None:
    source = tmp_path / "source"  # a copy, so the build's own build/ folder stays out of the repository
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    target = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
    subprocess.run(
        [*pip, "--target", target, source],
        check=True,
        timeout=300,
        capture_output=True,
    )
    # `--target` also writes the `loci` script into bin/, which is not an import name.
    names = sorted(path.name for path in target.iterdir() if path.name != "bin")
    assert len(names) == 2 and names[0] == "loci" and names[1].startswith("loci_agent-"), names
    assert (target / "loci" / "servers" / "transports" / "ready.json").is_file()
    assert (target / "loci" / "servers" / "ui" / "static" / "index.html").is_file()
    assert list((target / "loci" / "bench" / "data").glob("*.json"))
    probe = (
        "import importlib.util as u; "
        "print(u.find_spec('memory'), u.find_spec('loci.memory.engines.sqlite.store').origin)"
    )
    found = subprocess.run(
        [sys.executable, "-I", "-S", "-c", f"import sys; sys.path.insert(0, {str(target)!r}); {probe}"],
        cwd=tmp_path,
        check=True,
        timeout=60,
        capture_output=True,
        text=True,
    ).stdout.split()
    assert found[0] == "None"
    assert found[1].startswith(str(target))
