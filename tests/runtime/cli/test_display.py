"""One line of text for the terminal."""

from __future__ import annotations

from loci.runtime.cli.display import one_line


def test_whitespace_collapses_and_a_long_line_is_cut_with_an_ellipsis() -> None:
    assert one_line("a\n  b\tc") == "a b c"
    assert one_line("x" * 10, width=10) == "x" * 10
    assert one_line("x" * 11, width=10) == "x" * 9 + "…"
