"""A home like a user's for the page's tests: an imported conversation, documents, facts and real runs.

It is made the way a user makes one. `loci memory import` reads a transcript
of over a thousand turns (tests/servers/ui/chat.py writes it: the real data
sets may not be copied here). Two real Debian `copyright` files, copied into
two folders, are loaded as documents of the same name. Then runs of the agent
on a scripted model:

- run 1 asks what a plot costs and gets no feedback (the feedback test gives
  it from the page); runs 2 to 4 repeat its steps and are marked good, so the
  refinement worker distils a procedure from them. They read the README's
  example file and cite a line of it;
- run 5 searches the two licences (so its search results are `obs` objects)
  and answers, done, with its evidence;
- run 6 answers a wrong name, done, and is marked bad with a note;
- run 7 spends its token budget on a search and ends `partial`.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from loci.memory.context.store import ContextStore
from loci.memory.engines.select import use_engine
from loci.memory.evolution.evolution import Evolution
from loci.memory.graph.graph import Graph
from loci.memory.jobs.worker import Worker
from loci.runtime.loop.records import Limits, RunConfig
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.session.session import open_session
from tests.runtime.cli_helpers import loci
from tests.servers.ui.chat import write_chat

__all__ = ["COPYRIGHTS", "EXAMPLE", "FACTS", "WRONG_NOTE", "build_home"]

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "harbor.md"
COPYRIGHTS = (Path("/usr/share/doc/bash/copyright"), Path("/usr/share/doc/dpkg/copyright"))
FACTS = (
    "the harbor garden plot fee is 35 euros a season",
    "Marta Okafor keeps the waiting list for garden plots",
    "the garden water tap closes at 8 pm",
)
WRONG_NOTE = "hallucinated Simon Marshall"


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


def _searched(licence: str) -> list[dict[str, Any]]:
    return [
        {"state": "searching both licences", "tool": "context_search", "arguments": {"query": "GNU General Public"}},
        {
            "state": "found the licence line",
            "answer": "the GNU General Public License",
            "evidence": [{"id": licence, "start": 44, "end": 44}],
        },
    ]


WRONG = [
    {"state": "reading the plots", "tool": "context_read", "arguments": {"id": "doc:1", "start": 8, "end": 12}},
    # Wrong, yet on a line it cites, so the run is `done` and only the person's feedback can say it is wrong.
    {
        "state": "guessing",
        "answer": "The deputy of Marta Okafor, the plot coordinator",
        "evidence": [{"id": "doc:1", "start": 11, "end": 11}],
    },
]
SPENT = [{"state": "the budget will run out after this search", "tool": "memory_recall", "arguments": {"query": "tap"}}]


async def _run(db: str, steps: list[dict[str, Any]], task: str, files: list[Path], **config: Any) -> int:
    async with open_session(ScriptedModel(steps), db, RunConfig(**config), files=files) as session:
        run_id, _ = await session.run(task)
    return run_id


async def build_home(db: str, folder: Path) -> dict[str, Any]:
    """Make the home at `db` (a file or a connection string) with its inputs in `folder`; returns the ids and paths
    the tests look for."""
    chat = folder / "chat.txt"
    turns = write_chat(chat)
    imported = loci("memory", "import", str(chat), "--db", db, home=folder, timeout=600)
    assert imported.returncode == 0, imported.stderr
    licences = []
    for source, place in zip(COPYRIGHTS, ("licences/bash", "vendor/dpkg"), strict=True):
        (folder / place).mkdir(parents=True)
        licences.append(Path(shutil.copy(source, folder / place / "copyright")))
    async with use_engine(db) as store:
        graph = Graph(store)
        facts = [(await graph.remember(text, cause="test home"))[0].id for text in FACTS]
        # loaded here so their ids are known (doc:1 the example, then the licences); the runs find them loaded
        docs = [(await ContextStore(store).add_file(path)).id for path in (EXAMPLE, *licences)][1:]
    runs = []
    for n in range(4):
        task = "How much does a plot cost?" if n == 0 else f"What is the plot fee in the harbor garden? ({n})"
        runs.append(await _run(db, _script(facts[0], facts[1]), task, [EXAMPLE]))
    runs.append(await _run(db, _searched(docs[0]), "Which license covers bash?", [EXAMPLE, *licences]))
    wrong = await _run(db, WRONG, "Who keeps the waiting list?", [EXAMPLE])
    partial = await _run(db, SPENT, "When does the tap close?", [EXAMPLE], limits=Limits(max_tokens=50))
    async with use_engine(db) as store:
        evolution = Evolution(Graph(store))
        for run_id in runs[1:4]:
            await evolution.episodes.feedback(run_id, "good", "right fee")
        await evolution.episodes.feedback(wrong, "bad", WRONG_NOTE)
        await Worker(evolution.jobs, evolution.handlers()).drain()
    made = {"facts": facts, "runs": runs, "wrong": wrong, "partial": partial, "turns": turns}
    return {**made, "licences": licences, "docs": docs}
