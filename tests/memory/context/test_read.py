"""Reading ranges back by lines and by tokens, within a budget that is reported."""

from __future__ import annotations

import pytest

from loci.memory.context.loader import CHUNK_CHARS
from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import NotFoundError, UsageError


def count_words(text: str) -> int:
    """A predictable counter: words plus line ends."""
    return len(text.split()) + text.count("\n")


def numbered(n: int) -> str:
    return "".join(f"line {i} alpha beta\n" for i in range(1, n + 1))


async def test_read_lines_across_chunks(store: Store) -> None:
    contexts = ContextStore(store, count_tokens=count_words)
    obj = await contexts.add_text("doc", "n", numbered(200))
    span = await contexts.read(obj.id, 38, 43)
    assert span.text == "".join(f"line {i} alpha beta\n" for i in range(38, 44))
    assert (span.start, span.end, span.truncated, span.unit) == (38, 43, False, "lines")
    assert (span.start_line, span.end_line) == (38, 43)
    assert span.start_token == 37 * 5 + 1 and span.end_token == 43 * 5


async def test_read_lines_cut_at_budget_reports_where_to_go_on(store: Store) -> None:
    contexts = ContextStore(store, count_tokens=count_words)
    obj = await contexts.add_text("doc", "n", numbered(200))
    span = await contexts.read(obj.id, 1, 200, max_tokens=52)
    assert (span.start, span.end, span.truncated) == (1, 10, True)
    assert (span.next_start, span.next_unit) == (11, "lines")
    assert span.text.endswith("line 10 alpha beta\n")


async def test_read_by_tokens_snaps_to_lines_and_reports_range(store: Store) -> None:
    contexts = ContextStore(store, count_tokens=count_words)
    obj = await contexts.add_text("doc", "n", numbered(200))
    assert obj.tokens == 1000
    span = await contexts.read(obj.id, 503, 512, unit="tokens")
    assert span.unit == "tokens"
    assert (span.start_line, span.end_line) == (101, 103)
    assert (span.start, span.end) == (501, 515)
    assert not span.truncated


async def test_read_by_tokens_cut_at_budget(store: Store) -> None:
    contexts = ContextStore(store, count_tokens=count_words)
    obj = await contexts.add_text("doc", "n", numbered(200))
    span = await contexts.read(obj.id, 1, 1000, max_tokens=100, unit="tokens")
    assert span.truncated and (span.start, span.end) == (1, 100)
    assert (span.next_start, span.next_unit) == (101, "tokens")


async def test_a_line_longer_than_the_budget_is_cut_inside(store: Store) -> None:
    contexts = ContextStore(store)  # four characters a token
    obj = await contexts.add_text("doc", "minified", "{" + "x" * (3 * CHUNK_CHARS) + "}\nafter\n")
    span = await contexts.read(obj.id, 1, 1, max_tokens=50)
    assert span.truncated and span.text == "{" + "x" * 199
    assert span.next_unit == "tokens" and span.next_start == 51
    follow = await contexts.read(obj.id, span.next_start, span.next_start + 49, unit="tokens", max_tokens=5000)
    assert follow.text.startswith("x") and follow.start_line == 1


async def test_read_of_a_long_line_continues_by_tokens(store: Store) -> None:
    contexts = ContextStore(store)
    obj = await contexts.add_text("doc", "minified", "a" * (5 * CHUNK_CHARS) + "\nend\n")
    span = await contexts.read(obj.id, 1, 2, max_tokens=2_000)
    assert span.truncated and span.next_unit == "tokens"
    assert len(span.text) == 2 * CHUNK_CHARS
    rest = await contexts.read(obj.id, span.next_start, None, unit="tokens", max_tokens=10_000)
    assert rest.text == "a" * (3 * CHUNK_CHARS) + "\nend\n"
    assert not rest.truncated


@pytest.mark.parametrize(
    ("start", "end", "unit", "message"),
    [
        (0, 5, "lines", "outside"),
        (500, None, "lines", "outside"),
        (10, 5, "lines", "empty"),
        (2000, None, "tokens", "outside"),
        (1, 5, "pages", "unknown unit"),
    ],
)
async def test_bad_ranges_are_usage_errors(store: Store, start: int, end: int | None, unit: str, message: str) -> None:
    contexts = ContextStore(store, count_tokens=count_words)
    obj = await contexts.add_text("doc", "n", numbered(200))
    with pytest.raises(UsageError, match=message):
        await contexts.read(obj.id, start, end, unit=unit)


async def test_unknown_ids_are_not_found(store: Store) -> None:
    contexts = ContextStore(store)
    with pytest.raises(NotFoundError, match="not a context id"):
        await contexts.read("file:1")
    with pytest.raises(NotFoundError, match="no context object doc:7"):
        await contexts.read("doc:7")
    obj = await contexts.add_text("obs", "x", "a\n")
    with pytest.raises(NotFoundError):
        await contexts.read(obj.id.replace("obs", "doc"))


async def test_end_past_the_object_is_clamped(store: Store) -> None:
    contexts = ContextStore(store, count_tokens=count_words)
    obj = await contexts.add_text("doc", "n", numbered(5))
    span = await contexts.read(obj.id, 4, 99)
    assert (span.start, span.end, span.truncated) == (4, 5, False)
