"""A long node is stored whole and searched in pieces; a hit on a piece is a hit on its node."""

from __future__ import annotations

import pytest

from loci.memory.engines.base import Engine
from loci.memory.errors import UsageError
from loci.memory.graph.graph import Graph
from loci.memory.graph.pieces import LONG_CHARS, PIECE_CHARS, pieces_of, spans
from loci.memory.graph.recall import Recall
from loci.memory.graph.records import MAX_TEXT_CHARS


def long_text(middle: str, chars: int = 100_000) -> str:
    """Filler lines of ordinary words with one `middle` sentence halfway."""
    line = "the build ran its usual steps and wrote the usual report to the log folder\n"
    half = line * (chars // (2 * len(line)))
    return half + middle + "\n" + half


def test_pieces_cover_the_text_exactly_and_end_at_a_line_break() -> None:
    text = long_text("the staging port is 7070")
    cut = spans(text)
    assert "".join(text[a:b] for a, b in cut) == text
    assert all(b - a <= PIECE_CHARS for a, b in cut)
    assert all(text[b - 1] == "\n" for _, b in cut[:-1])


async def test_a_long_node_is_kept_whole_and_found_by_a_word_from_its_middle(engine_store: Engine) -> None:
    graph = Graph(engine_store)
    text = long_text("the staging port is quokka7070")
    node_id = (await graph.remember(text))[0].id
    await graph.remember("a short note about the build")
    assert (await graph.get(node_id)).text == text
    [hit] = await Recall(graph).recall("which port is quokka7070?", k=1)
    assert hit.node.id == node_id and hit.node.text == text
    assert await Recall(graph).bm25("quokka7070") == [node_id]
    assert len(await engine_store.read(lambda db: pieces_of(db.conn, node_id))) == len(spans(text))


async def test_updating_forgetting_and_restoring_a_long_node_keeps_the_index_in_step(engine_store: Engine) -> None:
    graph = Graph(engine_store)
    recall = Recall(graph)
    node_id = (await graph.remember(long_text("the old value is wombat")))[0].id
    await graph.update(node_id, long_text("the new value is numbat"))
    assert await recall.bm25("wombat") == []
    assert await recall.bm25("numbat") == [node_id]
    await graph.forget(node_id)
    assert await recall.bm25("numbat") == []
    assert await engine_store.read(lambda db: pieces_of(db.conn, node_id)) == []
    await graph.restore(node_id)
    assert await recall.bm25("numbat") == [node_id]
    await graph.update(node_id, "now a short text about a numbat")
    assert await engine_store.read(lambda db: pieces_of(db.conn, node_id)) == []
    assert await recall.bm25("numbat") == [node_id]


async def test_a_text_at_the_long_mark_is_one_row_and_past_the_limit_is_refused(engine_store: Engine) -> None:
    graph = Graph(engine_store)
    node_id = (await graph.remember("x" * (LONG_CHARS - 6) + " koala"))[0].id
    assert await engine_store.read(lambda db: pieces_of(db.conn, node_id)) == []
    assert await Recall(graph).bm25("koala") == [node_id]
    with pytest.raises(UsageError, match="over the limit of 10,000,000"):
        await graph.remember("y" * (MAX_TEXT_CHARS + 1))
