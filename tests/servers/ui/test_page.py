"""The page of `loci ui` in headless Chromium, over a home made by real runs: what a person sees and clicks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loci.memory.engines.select import use_engine
from loci.memory.graph.graph import Graph
from loci.memory.graph.recall import Recall
from tests.servers.ui.conftest import Served, rows, run_async

pytestmark = pytest.mark.slow


def open_graph(page: Any, served: Served) -> None:
    page.goto(served.with_token)
    page.wait_for_function("document.body.dataset.graph === 'top'")


def recalled_ids(db: str, query: str) -> list[str]:
    async def recall() -> list[str]:
        async with use_engine(db) as store:
            return [r.node.ref for r in await Recall(Graph(store)).recall(query, k=20, record=False)]

    return run_async(recall)


def test_the_graph_draws_what_recall_returns_and_the_edges_it_spread_along(
    page: Any, served: Served, shots: Path
) -> None:
    open_graph(page, served)
    page.wait_for_function("document.body.dataset.counted === 'top'")
    total = rows(served.db, "SELECT count(*) FROM memory_nodes WHERE deleted IS NULL")[0][0]
    assert f"of {total:,} memories" in page.inner_text("#graph-note")
    page.fill("#q", "plot fee")
    page.press("#q", "Enter")
    page.wait_for_function("document.body.dataset.counted === 'recall'")
    expected = recalled_ids(served.db, "plot fee")
    assert expected and page.eval_on_selector_all("#hits li", "lis => lis.map(li => li.dataset.id)") == expected
    drawn = set(page.evaluate("graph.piece.nodes.map(n => n.id)"))
    assert set(expected) <= drawn
    spread = page.evaluate("[...graph.spread]")
    drawn_edges = page.evaluate("graph.piece.edges.map(e => e.id)")
    assert spread and set(spread) <= set(drawn_edges)
    # The ground edges from the episodes to the fee fact are what activation spread along.
    fee = f"mem:{served.ids['facts'][0]}"
    assert any(e["dst"] == fee and e["kind"] == "ground" for e in page.evaluate("graph.piece.edges"))
    hidden = total - len(drawn)
    assert f"{hidden:,} {'memory' if hidden == 1 else 'memories'} not drawn" in page.inner_text("#graph-note")
    page.screenshot(path=str(shots / "graph.png"))


def test_clicking_a_node_shows_its_text_neighbours_and_history_with_causes(
    page: Any, served: Served, shots: Path
) -> None:
    open_graph(page, served)
    fee = f"mem:{served.ids['facts'][0]}"
    where = page.evaluate(f"graph.where('{fee}')")
    page.mouse.click(where["x"], where["y"])
    page.wait_for_selector("#history tbody tr")
    assert page.inner_text("#node-id").startswith(fee)
    assert "35 euros a season" in page.inner_text("#detail .text")
    events = rows(served.db, "SELECT op, cause FROM memory_events WHERE node = ? ORDER BY id", served.ids["facts"][0])
    shown = page.eval_on_selector_all("#history tbody tr", "trs => trs.map(tr => [...tr.cells].map(c => c.innerText))")
    assert [(row[1], row[2]) for row in shown] == [(op, cause or "") for op, cause in events]
    assert ("add", "test home") in [(row[1], row[2]) for row in shown]
    neighbours = page.eval_on_selector_all("#neighbours li", "lis => lis.map(li => li.dataset.id)")
    fee_runs = served.ids["runs"][:4]  # the runs whose steps used the fee
    episodes = [f"mem:{n}" for n, r in rows(served.db, "SELECT node, run_id FROM memory_episodes") if r in fee_runs]
    assert len(episodes) == 4 and set(episodes) <= set(neighbours)
    page.click("#around")
    page.wait_for_function("document.body.dataset.graph === 'around'")
    assert f"the neighbourhood of {fee}" in page.inner_text("#graph-note")
    page.screenshot(path=str(shots / "node.png"))


def test_a_run_shows_its_turns_answer_evidence_episode_and_token_plot(page: Any, served: Served, shots: Path) -> None:
    open_graph(page, served)
    page.click("header nav button[data-view=runs]")
    run = served.ids["runs"][0]
    page.click(f"#runs tbody tr[data-id='run:{run}']")
    page.wait_for_selector("#turns tbody tr")
    [(turns_json, answer)] = rows(served.db, "SELECT turns, answer FROM runs WHERE id = ?", run)
    turns = json.loads(turns_json)
    cells = page.eval_on_selector_all("#turns tbody tr", "trs => trs.map(tr => [...tr.cells].map(c => c.innerText))")
    assert [c[2] for c in cells] == [t.get("tool", "") for t in turns] == ["memory_recall", "context_read", ""]
    assert [c[4] for c in cells][:2] == [t["observation_id"] for t in turns[:2]]
    assert cells[0][7] == f"{turns[0]['evaluated_tokens']} / {turns[0]['reused_tokens']}"
    assert f"system {turns[0]['prompt_tokens']['system']}" in cells[0][6]
    assert page.inner_text("#answer") == answer
    assert "costs 35 euros a season" in page.inner_text("#evidence")
    # The feedback test of this module may have judged this run already: the page shows what the home holds.
    [(episode, outcome)] = rows(served.db, "SELECT node, outcome FROM memory_episodes WHERE run_id = ?", run)
    status = "unknown" if outcome is None else "success"
    assert page.inner_text("#episode").startswith(f"mem:{episode} · status {status}")
    assert page.evaluate("document.body.dataset.plotRegions").split(",") == list(turns[0]["prompt_tokens"])
    painted = page.evaluate(
        "(() => { const c = document.getElementById('plot'); const d = c.getContext('2d')"
        ".getImageData(0, 0, c.width, c.height).data; let n = 0; for (let i = 3; i < d.length; i += 4) n += d[i] > 0;"
        " return n; })()"
    )
    assert painted > 1_000
    page.screenshot(path=str(shots / "run.png"), full_page=True)


def test_feedback_from_the_page_changes_the_runs_episode(page: Any, served: Served, shots: Path) -> None:
    run = served.ids["runs"][0]
    [(before,)] = rows(served.db, "SELECT outcome FROM memory_episodes WHERE run_id = ?", run)
    assert before is None
    open_graph(page, served)
    page.click("header nav button[data-view=runs]")
    page.click(f"#runs tbody tr[data-id='run:{run}']")
    page.fill("#note", "the fee is right")
    page.click("#good")
    page.wait_for_function("document.getElementById('feedback-result').innerText.startsWith('counted')")
    [(node, outcome, note)] = rows(
        served.db, "SELECT node, outcome, feedback FROM memory_episodes WHERE run_id = ?", run
    )
    assert (outcome, note) == (1.0, "the fee is right")
    assert page.inner_text("#episode").startswith(f"mem:{node} · status success · outcome 1")
    assert rows(served.db, "SELECT op, cause FROM memory_events WHERE node = ? AND op = 'feedback'", node)
    page.screenshot(path=str(shots / "feedback.png"))


def test_procedures_jobs_and_documents_views(page: Any, served: Served, shots: Path) -> None:
    open_graph(page, served)
    page.click("header nav button[data-view=work]")
    page.wait_for_selector("#procedures tbody tr td.status-probationary")
    [(procedure,)] = rows(served.db, "SELECT id FROM memory_nodes WHERE kind = 'procedural'")
    first = page.inner_text("#procedures tbody tr")
    assert first.startswith(f"mem:{procedure}") and "0.5 ±" in first
    judged = served.ids["runs"][1:4]
    episodes = [
        f"mem:{n} (run {r}, 1)" for n, r in rows(served.db, "SELECT node, run_id FROM memory_episodes") if r in judged
    ]
    assert len(episodes) == 3
    assert all(e in first for e in episodes)
    assert "done" in page.inner_text("#job-counts")
    page.screenshot(path=str(shots / "work.png"), full_page=True)
    page.click("header nav button[data-view=documents]")
    page.click("#documents li[data-id='doc:1']")
    page.wait_for_selector("#outline li")
    assert "Harbor Street Community Garden" in page.inner_text("#outline")
    page.click("#outline li:has-text('Plots')")
    page.wait_for_function("document.getElementById('start').value === '8'")
    assert page.inner_text("#text").startswith("## Plots") and "35 euros a season" in page.inner_text("#text")
    page.screenshot(path=str(shots / "documents.png"))


def test_without_the_token_the_page_reads_but_its_feedback_is_refused(page: Any, served: Served) -> None:
    page.goto(served.url)
    page.wait_for_function("document.body.dataset.graph === 'top'")
    assert "no session token" in page.inner_text("#token-state")
    page.click("header nav button[data-view=runs]")
    page.click(f"#runs tbody tr[data-id='run:{served.ids['runs'][1]}']")
    page.click("#bad")
    page.wait_for_function("document.getElementById('feedback-result').innerText !== ''")
    assert page.inner_text("#feedback-result") == "missing or wrong session token"
    [(outcome,)] = rows(served.db, "SELECT outcome FROM memory_episodes WHERE run_id = ?", served.ids["runs"][1])
    assert outcome == 1.0
