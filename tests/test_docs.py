"""The documentation site builds strict: every warning (a broken link, a page left out of the
table of contents, a heading that skips a level) fails it, as a broken page would fail a reader."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_documentation_site_builds_with_every_warning_an_error(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "docs", str(tmp_path / "html")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-4000:]
    pages = {path.stem for path in (tmp_path / "html").glob("*.html")}
    assert {"index", "local-agents", "memory", "mcp", "hooks", "benchmarks", "architecture"} <= pages


def test_every_page_the_readme_links_to_exists() -> None:
    readme = ROOT.joinpath("README.md").read_text(encoding="utf-8")
    links = [part.split(")")[0] for part in readme.split("](docs/")[1:]]
    assert links, "the README links to no page"
    missing = [link for link in links if not ROOT.joinpath("docs", link.split("#")[0]).is_file()]
    assert missing == []
