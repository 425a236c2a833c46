"""The context store's index on PostgreSQL: the postings score single words exactly as the rows' own places do,
and follow the rows as they are added, removed and migrated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loci.memory.context.index import postgres
from loci.memory.context.loader import ChunkStream
from loci.memory.context.store import ContextStore
from loci.memory.engines.postgres.store import PgStore
from loci.memory.projects import ALL

LIBRARY = Path(__import__("json").__file__).parent.parent  # the standard library's own files
# Searches (words, object refs, project), each read from the postings beside the same search through the rows.
SEARCHES: list[tuple[list[str], list[str] | None, Any]] = [
    (["encoder"], None, "default"),
    (["json", "object", "default"], None, "default"),
    (["the"], None, ALL),
    (["ensure", "ascii", "escape"], None, "default"),
    (["parser", "argument", "json"], None, "other"),
    (["parser", "json", "self"], None, ALL),
    (["json", "value"], ["doc:1"], "default"),
    (["zanzibar", "json", "indent"], None, "default"),  # the first only in an object still loading
]
LOADING = "zanzibar json indent zanzibar\n" * 40


async def _home(url: str) -> int:
    """A home of documents and a result in two projects, a document forgotten, and an object still loading;
    the loading object's id."""
    async with await PgStore.open(url) as store:
        here, other = ContextStore(store), ContextStore(store, project="other")
        for name in ("json/encoder.py", "json/decoder.py", "json/__init__.py"):
            await here.add_file(LIBRARY / name)
        await here.add_text("obs", "a search result", "ensure_ascii escapes every json object, the parser said\n")
        await other.add_file(LIBRARY / "argparse.py")
        await other.add_file(LIBRARY / "json/encoder.py")
        gone = await here.add_file(LIBRARY / "json/tool.py")
        await here.forget(gone.id)

        def loading(conn: Any) -> int:
            oid = conn.execute(
                "INSERT INTO context_objects (project, kind, name, created, complete)"
                " VALUES ('default', 'doc', 'loading', 0, 0) RETURNING id"
            ).fetchone()[0]
            postgres.insert_chunks(conn, oid, ChunkStream.from_text(LOADING, lambda text: len(text) // 4).next_batch())
            return oid

        return await store.write(loading)


async def test_postings_rank_and_score_exactly_as_the_rows_own_places_do(postgres_url: str) -> None:
    loading = await _home(postgres_url)
    async with await PgStore.open(postgres_url) as store:

        def both(conn: Any) -> list[tuple[list[Any], list[Any]]]:
            return [
                (
                    postgres.by_postings(conn, words, refs, 50, project),
                    postgres.by_places(conn, [[word] for word in words], refs, 50, project),
                )
                for words, refs, project in SEARCHES
            ]

        found = await store.read(both)
        projects = dict(
            await store.read(lambda conn: conn.execute("SELECT id, project FROM context_objects").fetchall())
        )
        only_loading = await store.read(lambda conn: postgres.by_postings(conn, ["zanzibar"], None, 50, ALL))
    for (words, refs, project), (by_postings, by_places) in zip(SEARCHES, found, strict=True):
        assert by_postings and by_postings == by_places, words  # the same chunks, in order, to the last bit
        assert loading not in {oid for _, oid, *_ in by_postings}
        assert project is ALL or {projects[oid] for _, oid, *_ in by_postings} == {project}
        assert refs is None or {f"{kind}:{oid}" for kind, oid, *_ in by_postings} <= set(refs)
    kinds = [kind for kind, *_ in found[1][0]]
    assert "obs" in kinds and kinds == sorted(kinds, key=lambda kind: kind != "doc")  # documents first
    assert only_loading == []
    assert {projects[oid] for _, oid, *_ in found[5][0]} == {"default", "other"}


async def test_a_query_with_a_phrase_is_scored_from_the_places(postgres_url: str) -> None:
    await _home(postgres_url)
    phrases = [["ensure", "ascii"], ["escape"]]
    async with await PgStore.open(postgres_url) as store:
        hits = await store.read(lambda conn: postgres.matches(conn, "", phrases, None, 8, 16, ALL))
        by_places = await store.read(lambda conn: postgres.by_places(conn, phrases, None, 8, ALL))
    assert hits and [hit[:5] + hit[6:] for hit in hits] == [tuple(row) for row in by_places]


async def test_postings_follow_the_rows_added_removed_and_migrated(postgres_url: str) -> None:
    await _home(postgres_url)
    async with await PgStore.open(postgres_url) as store:
        kept = await store.read(_postings_match_the_rows)
        # Rows removed from the middle of segments leave the rest of each segment.
        await store.write(
            lambda conn: conn.execute(
                "DELETE FROM context_fts WHERE rowid IN"
                " (SELECT id FROM context_chunks WHERE object_id = 1 AND seq % 2 = 0)"
            )
        )
        thinned = await store.read(_postings_match_the_rows)
        # A database indexed before the postings existed gets them from its rows when it opens.
        await store.write(
            lambda conn: [
                conn.execute("DROP TABLE context_postings"),
                conn.execute("DROP INDEX context_objects_loading"),
                conn.execute("DELETE FROM loci_migrations WHERE name = 'index_rows_listed_by_word'"),
            ]
        )
    async with await PgStore.open(postgres_url) as store:
        again = await store.read(_postings_match_the_rows)
    assert kept[0] and thinned[0] and again[0]
    assert kept[1] > thinned[1] == again[1] > 1_000


def _postings_match_the_rows(conn: Any) -> tuple[bool, int]:
    """Whether `context_postings`' segments hold exactly each index row's words with their counts, the chunk's length,
    object, kind and project; and how many it holds."""
    expected = (
        "SELECT x.lexeme, f.rowid, cardinality(x.positions), f.len, o.id, o.kind, o.project FROM context_fts f"
        " JOIN context_chunks c ON c.id = f.rowid JOIN context_objects o ON o.id = c.object_id, unnest(f.tsv) AS x"
    )
    held = (
        "SELECT p.term, u.r, u.n, u.l, p.oid, p.kind, p.project FROM context_postings p,"
        " unnest(p.rowids, p.ns, p.lens) AS u(r, n, l)"
    )
    differ = conn.execute(f"SELECT count(*) FROM (({expected}) EXCEPT ({held})) a").fetchone()[0]
    differ += conn.execute(f"SELECT count(*) FROM (({held}) EXCEPT ({expected})) a").fetchone()[0]
    # every segment holds rows, its range theirs
    bad = conn.execute(
        "SELECT count(*) FROM context_postings p WHERE cardinality(rowids) = 0"
        " OR lo > (SELECT min(r) FROM unnest(p.rowids) AS r) OR hi <> (SELECT max(r) FROM unnest(p.rowids) AS r)"
    ).fetchone()[0]
    return differ == 0 and bad == 0, conn.execute(f"SELECT count(*) FROM ({held}) a").fetchone()[0]
