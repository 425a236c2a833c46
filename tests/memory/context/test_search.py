"""Searching context objects: FTS5 taken literally, and regular expressions bounded in time."""

from __future__ import annotations

import anyio
import pytest

from loci.memory.context.regex_scan import MAX_SCANS
from loci.memory.context.store import ContextStore, fts_literal
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import UsageError

TEXT = (
    "".join(f"line {i} filler words here\n" for i in range(1, 120))
    + 'the vault code is 4821-QX (see NEAR(x) "quoted)\n'
)


@pytest.mark.parametrize(
    "query", ["NEAR(vault", "vault*", '"vault', "vault AND OR NOT", "code:", "^vault", "vault -code"]
)
async def test_fts_syntax_in_queries_is_searched_literally(store: Store, query: str) -> None:
    contexts = ContextStore(store)
    obj = await contexts.add_text("doc", "t", TEXT)
    hits = await contexts.search(query, k=3)
    assert hits and hits[0].id == obj.id and hits[0].line == 120


def test_fts_literal_quotes_every_word() -> None:
    assert fts_literal('NEAR("a b" *c)') == '"NEAR" OR "a" OR "b" OR "c"'
    assert fts_literal('*** ( ) "') == ""


async def test_query_without_words_is_a_usage_error(store: Store) -> None:
    with pytest.raises(UsageError, match="no words"):
        await ContextStore(store).search('*( "')


async def test_search_ranks_the_rare_word_and_points_at_its_line(store: Store) -> None:
    contexts = ContextStore(store)
    await contexts.add_text("doc", "t", TEXT)
    [hit] = await contexts.search("filler vault", k=1)
    assert hit.line == 120 and "[vault]" in hit.snippet
    assert hit.start_line <= 120 <= hit.end_line


async def test_search_restricted_to_ids(store: Store) -> None:
    contexts = ContextStore(store)
    first = await contexts.add_text("doc", "a", "apple banana\n")
    second = await contexts.add_text("obs", "b", "apple cherry\n")
    assert {h.id for h in await contexts.search("apple")} == {first.id, second.id}
    assert [h.id for h in await contexts.search("apple", ids=[second.id])] == [second.id]
    assert await contexts.search("apple", ids=[f"doc:{second.id.split(':')[1]}"]) == []


async def test_regex_search_finds_lines_in_order(store: Store) -> None:
    contexts = ContextStore(store)
    obj = await contexts.add_text("doc", "t", TEXT)
    hits = await contexts.search(r"\d{4}-[A-Z]{2}", regex=True)
    assert [(h.id, h.line) for h in hits] == [(obj.id, 120)]
    assert "[4821-QX]" in hits[0].snippet
    hits = await contexts.search(r"^line 1\d ", regex=True, k=3)
    assert [h.line for h in hits] == [10, 11, 12]


async def test_regex_that_does_not_compile_is_a_clear_error(store: Store) -> None:
    contexts = ContextStore(store)
    await contexts.add_text("doc", "t", TEXT)
    with pytest.raises(UsageError, match=r"does not compile: missing \), unterminated subpattern at position 0"):
        await contexts.search("(vault", regex=True)
    with pytest.raises(UsageError, match="does not compile"):
        await contexts.search("a{2,1}", regex=True)


async def test_catastrophic_regex_is_stopped_within_its_bound(store: Store) -> None:
    contexts = ContextStore(store, regex_timeout=1.0)
    await contexts.add_text("doc", "t", "a" * 3000 + "!\n")
    with anyio.fail_after(20):
        with pytest.raises(UsageError, match="did not finish within 1 s.*backtracks catastrophically"):
            await contexts.search(r"(a+)+$", regex=True)
    hits = await contexts.search("a!", regex=True)  # the store is still usable afterwards
    assert hits[0].line == 1


async def test_ten_regex_searches_at_once_start_at_most_the_cap_of_scans(store: Store) -> None:
    contexts = ContextStore(store, regex_timeout=1.0)
    await contexts.add_text("doc", "t", "a" * 3000 + "!\n")
    errors: list[str] = []

    async def search() -> None:
        with pytest.raises(UsageError) as failed:
            await contexts.search(r"(a+)+$", regex=True)
        errors.append(str(failed.value))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            for _ in range(10):
                group.start_soon(search)
    ran = [error for error in errors if "did not finish" in error]
    refused = [error for error in errors if "searches are already running" in error]
    assert len(ran) == MAX_SCANS and len(refused) == 10 - MAX_SCANS
    assert (await contexts.search("a!", regex=True))[0].line == 1  # each slot was given back


async def test_outline_of_markdown_object(store: Store) -> None:
    contexts = ContextStore(store)
    obj = await contexts.add_text("doc", "n", "# A\ntext\n## B\nmore\n", meta={"format": "markdown"})
    outline = await contexts.outline(obj.id)
    assert [(e.title, e.level, e.start, e.end) for e in outline.entries] == [("A", 1, 1, 4), ("B", 2, 3, 4)]


async def test_documents_outrank_a_runs_records_and_a_record_that_copies_a_line_is_dropped(store: Store) -> None:
    contexts = ContextStore(store)
    doc = await contexts.add_text("doc", "bzip2", "Files: *\nCopyright: 1996-2010 Julian R Seward\nLicense: BSD\n")
    for turn in (14, 16):
        await contexts.add_text("obs", f"turn {turn} context_search", "2| Copyright: 1996-2010 Julian R Seward\n")
    note = await contexts.add_text("note", "what was found", "Julian Seward wrote bzip2, the notes say Julian Seward")
    hits = await contexts.search("Julian Seward", k=5)
    assert [hit.id for hit in hits] == [doc.id, note.id]
