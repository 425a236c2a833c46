"""Where a question with no files looks: the memory graph first, then the home's documents.

`loci run Q` with no `--file` used to read every document in the home, and
only those: after `loci memory import conv41.jsonl`, "What martial arts has
John done?" was answered from a copyright file digested the day before
("Copyright: 2009-2022, John Malmberg"), since the imported turns were not
documents. So `choose_source` looks where the answer can be:

1. the memory graph, recalled as the hooks recall it (memory/graph/recall.py:
   the turns and facts, never a run's own records), the best `MEMORY_TURNS`;
2. the home's documents, searched by the context store.

Each side is worth the most question words (`memory.context.lexical`, the
runtime's one splitter: stop words out, stemmed) that one of its lines
holds; the memory is read unless a document holds more of the question than
any memory does. A surname shared with a copyright line is one word on both
sides, and the memory wins the tie: it is what the person imported to ask
about, and a document loaded for another job does not outrank it.

Memory is read as a document of its own (`memory:` in its name): the
recalled nodes in the order they were said, one a line, so the run reads
and cites them with the same tools and checks as a file, and each line's
node is known (`MemorySource.nodes`): the answer's evidence names the turns
it rests on (`mem:N`), and the run's episode records them as used, so
experience lifts them next time. The document is the run's alone: it is
forgotten when the run ends (`memory_document`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from loci.memory.context.lexical import content_terms, line_terms
from loci.memory.context.store import ContextObject, ContextStore
from loci.memory.errors import LociError, UsageError
from loci.memory.graph.graph import Graph
from loci.memory.graph.ranking import Recalled
from loci.memory.graph.recall import Recall
from loci.runtime.loop.records import RunResult
from loci.runtime.reading.evidence import Cited

if TYPE_CHECKING:
    from loci.runtime.session.session import Session

__all__ = ["MEMORY_NAME", "MEMORY_TURNS", "Answered", "MemorySource", "ask", "choose_source", "memory_document"]

MEMORY_TURNS = 30
DOCUMENT_HITS = 5
MEMORY_NAME = "memory: what the graph recalls for this run"


@dataclass(frozen=True)
class MemorySource:
    """Where a run without files reads: `memory` (the recalled nodes, `found`) or `documents`, and why."""

    name: str
    why: str
    found: Sequence[Recalled] = ()
    nodes: dict[int, int] = field(default_factory=dict)  # line of the memory document -> node id

    def cited_nodes(self, evidence: Sequence[Cited], document: str | None) -> list[int]:
        """The memory nodes (ids) the lines of `document` cited in `evidence` hold, in order, once each."""
        ids = [
            self.nodes[line]
            for cited in evidence
            if cited.id == document
            for line in range(cited.start, cited.end + 1)
            if line in self.nodes
        ]
        return list(dict.fromkeys(ids))


async def choose_source(graph: Graph, contexts: ContextStore, question: str) -> MemorySource:
    """The memory when it holds as much of `question` as the best document line does; else the documents."""
    wanted = set(content_terms(question))
    try:
        found = await Recall(graph).recall(question, k=MEMORY_TURNS, kinds=["semantic"], record=False)
    except UsageError:  # no words to recall by
        found = []
    memory = max((len(wanted & line_terms(r.node.text)) for r in found), default=0)
    if memory == 0:
        return MemorySource("documents", "the memory holds none of the question's words")
    try:
        hits = await contexts.search(question, k=DOCUMENT_HITS)
    except LociError:
        hits = []
    document = max((len(wanted & line_terms(hit.line_text or hit.snippet)) for hit in hits), default=0)
    if document > memory:
        return MemorySource("documents", f"a document holds {document} of the question's words, the memory {memory}")
    lines = sorted(found, key=lambda r: r.node.id)  # the order they were said in
    why = f"{len(found)} memories recalled; the best holds {memory} of the question's words, a document {document}"
    return MemorySource("memory", why, lines, {number: r.node.id for number, r in enumerate(lines, 1)})


@asynccontextmanager
async def memory_document(contexts: ContextStore, source: MemorySource) -> AsyncIterator[ContextObject | None]:
    """The recalled nodes as a document for one run, forgotten when it ends; None when the source is documents."""
    if source.name != "memory":
        yield None
        return
    text = "\n".join(" ".join(r.node.text.split()) for r in source.found) + "\n"
    obj = await contexts.add_text("doc", MEMORY_NAME, text, {"memory": True, "nodes": len(source.found)})
    try:
        yield obj
    finally:
        with anyio.CancelScope(shield=True):  # a cancelled run leaves no memory document behind either
            await contexts.forget(obj.id)


@dataclass(frozen=True)
class Answered:
    """A run's id and result, where it read (`source`: None when files were given) and, for each span of its
    evidence, the memories (node ids) that span quotes."""

    run_id: int
    result: RunResult
    source: MemorySource | None
    memories: list[list[int]]


async def ask(session: Session, task: str, loaded: Sequence[ContextObject], **agent_kwargs: Any) -> Answered:
    """Run `task` on what was `loaded` for it; with nothing loaded, on the memory when it holds the question
    (`choose_source`), else on every document in the home. The memories the answer cites count as used."""
    if loaded:
        run_id, result = await session.run(task, objects=list(loaded), **agent_kwargs)
        return Answered(run_id, result, None, [[] for _ in result.evidence])
    source = await choose_source(session.graph, session.contexts, task)
    async with memory_document(session.contexts, source) as memory:
        if memory is None:
            run_id, result = await session.run(task, objects=None, **agent_kwargs)
            return Answered(run_id, result, source, [[] for _ in result.evidence])
        run_id, result = await session.run(
            task, objects=[memory], used=lambda done: source.cited_nodes(done.evidence, memory.id), **agent_kwargs
        )
        return Answered(run_id, result, source, [source.cited_nodes([cited], memory.id) for cited in result.evidence])
