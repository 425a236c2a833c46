"""A real home for the page's tests: facts, and runs of the agent on a scripted model that used them.

Run 1 asks what a plot costs and gets no feedback (the feedback test gives
it from the page). Runs 2 to 4 repeat its steps and are marked good, so the
refinement worker distils a procedure from them. Every run reads the
README's example file and cites a line of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory.evolution.evolution import Evolution
from memory.graph.graph import Graph
from memory.jobs.worker import Worker
from memory.store import Store
from runtime.models.scripted import ScriptedModel
from runtime.session import open_session

__all__ = ["EXAMPLE", "FACTS", "build_home"]

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "harbor.md"
FACTS = (
    "the harbor garden plot fee is 35 euros a season",
    "Marta Okafor keeps the waiting list for garden plots",
    "the garden water tap closes at 8 pm",
)


def _script(fee: int, coordinator: int) -> list[dict[str, Any]]:
    return [
        {"state": "looking for the fee", "tool": "memory_recall", "arguments": {"query": "plot fee"}},
        {
            "state": f"mem:{fee} says 35 euros; checking the file",
            "tool": "context_read",
            "arguments": {"id": "doc:1", "start": 8, "end": 12},
        },
        {
            "state": f"used mem:{fee} and mem:{coordinator}; line 10 gives the fee",
            "answer": "35 euros a season",
            "evidence": [{"id": "doc:1", "start": 10, "end": 10}],
        },
    ]


async def build_home(db: Path) -> dict[str, Any]:
    """Make the home at `db`; returns the ids the tests look for."""
    async with await Store.open(db) as store:
        graph = Graph(store)
        facts = [(await graph.remember(text, cause="test home"))[0].id for text in FACTS]
    runs = []
    for n in range(4):
        model = ScriptedModel(_script(facts[0], facts[1]))
        async with open_session(model, db, files=[EXAMPLE]) as session:
            task = "How much does a plot cost?" if n == 0 else f"What is the plot fee in the harbor garden? ({n})"
            run_id, _ = await session.run(task)
        runs.append(run_id)
    async with await Store.open(db) as store:
        evolution = Evolution(Graph(store))
        for run_id in runs[1:]:
            await evolution.episodes.feedback(run_id, "good", "right fee")
        await Worker(evolution.jobs, evolution.handlers()).drain()
    return {"facts": facts, "runs": runs}
