"""The README's first command, on the bundled model, then `loci ui` over the home it made."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.cli_helpers import loci
from tests.servers.ui.conftest import STARTUP_S, start_ui, stop
from tests.servers.ui.home import EXAMPLE

pytestmark = [pytest.mark.model, pytest.mark.slow]


def test_the_page_shows_the_readme_run_its_turns_and_its_episode(tmp_path: Path, page: Any, shots: Path) -> None:
    done = loci("run", "How much does a plot cost?", "--file", str(EXAMPLE), "--trace", home=tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr
    db = tmp_path / "loci.db"
    with sqlite3.connect(db) as conn:
        [(run, turns)] = conn.execute("SELECT id, turns FROM runs").fetchall()
        [(episode,)] = conn.execute("SELECT node FROM memory_episodes WHERE run_id = ?", [run]).fetchall()
    process, lines = start_ui("--db", str(db), "--port", "0")
    try:
        page.goto(lines.get(timeout=STARTUP_S).split("the page is at ", 1)[1].strip())
        page.click("header nav button[data-view=runs]")
        page.click(f"#runs tbody tr[data-id='run:{run}']")
        page.wait_for_selector("#turns tbody tr")
        assert page.inner_text("#run-title") == f"run:{run}: How much does a plot cost?"
        assert page.locator("#turns tbody tr").count() == len(json.loads(turns))
        assert page.inner_text("#episode").startswith(f"mem:{episode} · status unknown")
        page.screenshot(path=str(shots / "newcomer-run.png"), full_page=True)
    finally:
        stop(process)
