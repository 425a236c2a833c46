"""The kinds of a noun compound, read from Debian's WordNet files in place."""

from __future__ import annotations

import shutil
from pathlib import Path

from loci.memory.text.wordnet import WORDNET, _Files, narrower


def test_a_compound_names_its_kinds_and_a_plural_is_folded() -> None:
    kinds = narrower(["what", "martial", "arts", "has", "john", "done"])
    assert {"taekwondo", "judo", "karate"} <= set(kinds)
    assert "martial" not in kinds and "arts" not in kinds


def test_a_kind_counts_only_where_it_is_the_words_first_sense() -> None:
    kinds = narrower(["musical", "instrument"])
    assert "piano" in kinds
    assert "organ" not in kinds  # an organ is first the body's
    assert narrower(["mental", "health"]) and "reason" not in narrower(["mental", "health"])


def test_single_words_and_words_no_compound_joins_have_no_kinds() -> None:
    assert narrower(["art"]) == []
    assert narrower(["road", "trip", "pottery", "class"]) == []


def test_the_index_is_searched_from_its_first_line_to_its_last(tmp_path: Path) -> None:
    for name in ("data.noun", "noun.exc"):
        shutil.copy(WORDNET / name, tmp_path / name)
    lines = [b"  1 the licence's lines start with a space\n"]
    lines += [b"aardvark n 1 1 @ 1 0 0263 \n", b"martial_art n 1 2 @ ~ 1 0 00825443  \n"]
    lines += [b"zymurgy n 1 1 @ 1 0 0999 \n"]
    (tmp_path / "index.noun").write_bytes(b"".join(lines))
    files = _Files(tmp_path)
    assert files.synsets("aardvark") == [263]
    assert files.synsets("martial_art") == [825443]
    assert files.synsets("zymurgy") == [999]
    assert files.synsets("martial") == [] and files.synsets("zzz") == [] and files.synsets("a") == []
    words, hyponyms = files.synset(825443)
    assert words == ["martial_art"] and 826681 in hyponyms  # tae_kwon_do
