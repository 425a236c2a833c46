"""Feedback on another project's run reads exactly like feedback on a run that does not exist, on every path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from mcp import Client

from loci.memory.engines.sqlite.store import Store
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.session.session import open_session
from loci.servers.app import build_app
from loci.servers.ui.app import build_ui_app
from tests.runtime.cli_helpers import loci

MISSING = 99


async def _shop_run(db: Path) -> int:
    model = ScriptedModel([{"state": "done", "answer": "12 euros", "evidence": []}])
    async with open_session(model, db, project="shop") as session:
        run_id, _ = await session.run("what does the plot cost")
    model.check_used()
    return run_id


def _same(theirs: str, missing: str, run_id: int) -> None:
    assert theirs.replace(str(run_id), "N") == missing.replace(str(MISSING), "N"), (theirs, missing)
    assert "mem:" not in theirs


async def test_loci_feedback_on_another_projects_run_says_no_such_run(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"
    run_id = await _shop_run(db)
    theirs, missing = (
        loci("feedback", str(run), "bad", "--project", "blog", "--db", str(db), home=tmp_path)
        for run in (run_id, MISSING)
    )
    assert theirs.returncode == missing.returncode == 2
    _same(theirs.stderr, missing.stderr, run_id)
    assert "no such run" in theirs.stderr
    own = loci("feedback", str(run_id), "good", "--project", "shop", "--db", str(db), home=tmp_path)
    assert own.returncode == 0, own.stderr


async def test_memory_feedback_on_another_projects_run_says_no_such_run(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"
    run_id = await _shop_run(db)
    async with await Store.open(db) as store, Client(build_app(store, ["memory"], project="blog")) as client:
        theirs, missing = [
            await client.call_tool("memory_feedback", {"target": f"run:{run}", "outcome": "bad"})
            for run in (run_id, MISSING)
        ]
    assert theirs.is_error and missing.is_error
    _same(theirs.content[0].text, missing.content[0].text, run_id)


async def test_the_pages_feedback_on_another_projects_run_says_no_such_run(tmp_path: Path) -> None:
    db = tmp_path / "loci.db"
    run_id = await _shop_run(db)
    token = "t" * 32
    async with await Store.open(db, query_only=True) as store:
        app = build_ui_app(store, host="127.0.0.1", token=token, token_for_reads=False, project="blog")
        transport = httpx.ASGITransport(app=app)
        headers = {"authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8780", headers=headers) as http:
            answers: list[Any] = [
                await http.post(f"/api/runs/{run}/feedback", json={"outcome": "bad"}) for run in (run_id, MISSING)
            ]
    theirs, missing = answers
    assert theirs.status_code == missing.status_code == 404
    _same(theirs.json()["error"], missing.json()["error"], run_id)
