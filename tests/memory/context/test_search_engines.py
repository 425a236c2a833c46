"""A search of the same documents ranks alike on SQLite's FTS5 and PostgreSQL's tsvector index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from loci.memory.context.fulltext import fts_literal
from loci.memory.context.index.words import snippet, tsvector_text
from loci.memory.context.store import ContextStore
from loci.memory.engines.select import use_engine
from loci.memory.text.tokens import word_tokens

LIBRARY = Path(__import__("json").__file__).parent.parent  # the standard library's own files
FILES = ["json/encoder.py", "json/decoder.py", "argparse.py", "shutil.py"]
QUERIES = [
    "sort_keys",
    "how are floats with allow_nan encoded",
    "os.path join",
    "copy file metadata permissions",
    "ensure_ascii escape",
    "add_argument help default",
    "JSONDecodeError position",
    "x-ray",
    "the",
]


async def _search_all(db: str) -> list[list[tuple[str, int, int, str, float]]]:
    async with use_engine(db) as home:
        contexts = ContextStore(home)
        for name in FILES:
            await contexts.add_file(LIBRARY / name)
        await contexts.add_text("obs", "a search result", "ensure_ascii escapes every non-ASCII character\n")
        results = []
        for query in QUERIES:
            hits = await contexts.search(query, k=8)
            results.append([(h.id, h.line, h.start_line, h.snippet, h.score) for h in hits])
        return results


async def test_the_same_search_gives_the_same_chunks_lines_snippets_and_scores(
    tmp_path: Path, postgres_url: str
) -> None:
    on_sqlite = await _search_all(str(tmp_path / "loci.db"))
    on_postgres = await _search_all(postgres_url)
    assert all(on_sqlite[:-2]) and not on_sqlite[-2]
    for query, lite, pg in zip(QUERIES, on_sqlite, on_postgres, strict=True):
        assert [hit[:4] for hit in pg] == [hit[:4] for hit in lite], query
        assert [hit[4] for hit in pg] == pytest.approx([hit[4] for hit in lite], rel=1e-9), query


def test_an_identifier_is_indexed_as_the_words_fts5_sees() -> None:
    assert tsvector_text("os.path.join(default_Format, X)") == (
        "'os':1 'path':2 'join':3 'default':4 'format':5 'x':6",
        6,
    )
    assert tsvector_text("Café l'été") == ("'cafe':1 'l':2 'ete':3", 3)


SNIPPETS = [
    (" ".join(f"w{i}" for i in range(40)) + " the sort_keys flag. Then more words follow here.\n", "sort_keys"),
    ("Intro line.\nSecond: the vault code is here. " + "pad " * 30 + "vault again\n", "vault code"),
    ("short text with one hit\n", "hit"),
    ("a b c d e f g h i j k l m n o p q r s t u v w x y z alpha beta gamma delta\n", "zeta gamma b"),
]


@pytest.mark.parametrize(("text", "query"), SNIPPETS)
def test_a_snippet_is_the_one_fts5_cuts(text: str, query: str) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='unicode61')")
    conn.execute("INSERT INTO t (text) VALUES (?)", [text])
    match = fts_literal(query)
    [(expected,)] = conn.execute("SELECT snippet(t, 0, '[', ']', ' … ', 6) FROM t WHERE t MATCH ?", [match])
    phrases = [[w for w, _, _ in word_tokens(word)] for word in query.split()]
    assert snippet(text, phrases, 6) == expected
