"""The prompt's worked examples stay the prompt's: no example word reaches a search the task does not ask."""

from __future__ import annotations

from loci.runtime.prompt.regions import unexampled


def test_no_example_word_reaches_a_search_unless_the_task_says_it() -> None:
    assert unexampled("Zorvex authors", "Who is the author of argparse?") == "authors"
    assert unexampled("Zorvex moons", "Who is the author of argparse?") == "Who is the author of argparse"
    assert unexampled("moons of Jupiter", "How many moons has Jupiter?") == "moons of Jupiter"
