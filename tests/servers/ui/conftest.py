"""Fixtures for the page's tests: a home made by real runs, `loci ui` serving it, headless Chromium.

The home is made once per module on each engine (a SQLite file, a new
database on the session's PostgreSQL cluster), and `rows` reads it back with
the engine's own driver; `loci ui` runs as a user runs it, in a
subprocess on a free port, and the fixture waits (bounded) for the URL it
prints. The browser is Debian's chromium driven by Playwright, which never
downloads one of its own. Each test gets a fresh page, and a folder for its
screenshots (`shots`).
"""

from __future__ import annotations

import os
import queue
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from loci.memory.engines.postgres.connection import pg_sql
from loci.memory.location import is_postgres
from tests.conftest import new_database
from tests.servers.ui.home import build_home

CHROMIUM = Path("/usr/bin/chromium")
STARTUP_S = 120


@dataclass(frozen=True)
class Served:
    url: str  # the page's address, without the token
    token: str
    db: str  # a SQLite file or a PostgreSQL connection string
    ids: dict[str, Any]

    @property
    def with_token(self) -> str:
        return f"{self.url}#token={self.token}"


def run_async(fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    """`anyio.run(fn, *args)` in a thread of its own: Playwright's sync API keeps an event loop in this one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, fn, *args).result(timeout=STARTUP_S)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def home(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("ui-home")
    on_sqlite = request.param == "sqlite"
    db = str(folder / "loci.db") if on_sqlite else new_database(request.getfixturevalue("postgres_server"))
    ids = run_async(build_home, db, folder)
    return db, ids


def rows(db: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """The rows of `sql` (`?` placeholders) in the home at `db`, read with its engine's own driver."""
    if is_postgres(db):
        import psycopg

        with psycopg.connect(db) as conn:
            return [tuple(row) for row in conn.execute(pg_sql(sql), params).fetchall()]
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, params).fetchall()


def start_ui(*args: str) -> tuple[subprocess.Popen[str], queue.Queue[str]]:
    command = [sys.executable, "-m", "loci.runtime.cli.main", "ui", *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return process, lines


def stop(process: subprocess.Popen[str]) -> str:
    process.terminate()
    try:
        _, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
    return err


@pytest.fixture(scope="module")
def served(home: tuple[str, dict[str, Any]]) -> Iterator[Served]:
    db, ids = home
    process, lines = start_ui("--db", db, "--port", "0")
    try:
        line = lines.get(timeout=STARTUP_S)
    except queue.Empty:
        pytest.fail(f"loci ui printed no URL: {stop(process)}")
    url, _, token = line.split("the page is at ", 1)[1].strip().partition("#token=")
    yield Served(url, token, db, ids)
    stop(process)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is missing: apt-get install -y chromium (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    # The tests' own wait_for_function strings are evaluated in the page, which its CSP forbids (no eval);
    # test_hostile_page.py loads the page under its CSP and checks that nothing it does is refused.
    context = browser.new_context(viewport={"width": 1400, "height": 900}, bypass_csp=True)
    opened = context.new_page()
    opened.set_default_timeout(30_000)
    yield opened
    context.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ui-screenshots")
