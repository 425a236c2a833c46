"""The first look's lines: shown whole, with neighbours read once per stretch of the document."""

from __future__ import annotations

from loci.memory.context.store import ContextStore, Span
from loci.memory.engines.sqlite.store import Store
from loci.runtime.reading.look import Line, best_lines, render_lines


class CountingContexts(ContextStore):
    """A context store that counts the spans it reads."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.reads: list[tuple[str, int, int | None]] = []

    async def read(self, ref: str, start: int = 1, end: int | None = None, max_tokens: int = 2_000, **kw) -> Span:
        self.reads.append((ref, start, end))
        return await super().read(ref, start, end, max_tokens, **kw)


async def test_neighbouring_hits_are_read_as_one_span_and_every_neighbour_is_shown(store: Store) -> None:
    contexts = CountingContexts(store)
    doc = await contexts.add_text("doc", "ports.txt", "\n".join(f"line {n} of the ports file" for n in range(1, 41)))
    hits = [Line(doc.id, 10, "line 10 of the ports file", 2.0), Line(doc.id, 12, "line 12 of the ports file", 1.0)]
    far = Line(doc.id, 30, "line 30 of the ports file", 0.5)
    text, shown = await render_lines(contexts, [*hits, far], budget=2_000, count=len, around=2)
    assert shown == [*hits, far]
    assert contexts.reads == [(doc.id, 8, 14), (doc.id, 28, 32)]  # 10 and 12 touch: one read; 30 alone
    for number in (*range(8, 15), *range(28, 33)):
        assert f"{number}| line {number} of the ports file" in text
    assert "15| " not in text and "27| " not in text


async def test_the_best_line_is_shown_with_the_lines_it_heads(store: Store) -> None:
    contexts = CountingContexts(store)
    entry = ["sed (4.7-1) unstable; urgency=medium", "", "  * New upstream version. closes: #917065.", ""]
    entry += [" -- Clint Adams <clint@debian.org>  Sat, 22 Dec 2018 11:35:07 -0500", "", "sed (4.5-2) unstable"]
    doc = await contexts.add_text("doc", "changelog", "\n".join(entry))
    text, _ = await render_lines(contexts, [Line(doc.id, 1, entry[0], 1.0)], budget=2_000, count=len, around=1)
    assert "3|   * New upstream version. closes: #917065." in text and "5|  -- Clint Adams" in text
    assert "7| sed (4.5-2)" not in text  # the next entry is not the first one's


GIT_COPYRIGHT = """Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Source: https://www.kernel.org/pub/software/scm/git/

Files: *
Copyright: © 2005-2022, Linus Torvalds and others.
License: GPL-2

Files: reftable/*
Copyright: © 2020 Google LLC
License: BSD-3-clause

License: GPL-2
 On Debian systems the GPL-2 is in /usr/share/common-licenses, by its copyright holders.
"""


async def test_a_copyright_files_own_paragraph_outranks_those_about_other_files(store: Store) -> None:
    contexts = ContextStore(store)
    doc = await contexts.add_text("doc", "copyright", GIT_COPYRIGHT)
    # the shorter `Copyright:` line of `Files: reftable/*` would rank first by its length alone
    assert [line.number for line in await best_lines(contexts, "Who holds the copyright?", [doc.id], k=1)] == [5]
    # named, the files' own paragraph answers
    named = await best_lines(contexts, "Who holds the copyright of reftable?", [doc.id], k=2)
    assert {line.number for line in named} == {8, 9}
