"""memory/text's index tokenizer, line ranker, newer-value rule and repeat check, as their readers use them."""

from __future__ import annotations

import json
import random
import subprocess
import sys

from loci.memory.text import Ranker, changes, first_repeat, flat, query_words, word_tokens
from loci.memory.text.tokens import tokens
from loci.memory.text.values import measures, numbers


def test_the_index_words_are_unicode61s() -> None:
    assert tokens("DEFAULT_FORMAT = os.path x-ray") == ["default", "format", "os", "path", "x", "ray"]
    assert tokens("Café Éclair") == ["cafe", "eclair"]
    assert word_tokens("a Élan") == [("a", 0, 1), ("elan", 2, 6)]


def test_a_query_is_runs_of_letters_digits_underscores_and_hyphens() -> None:
    assert query_words("What is DEFAULT_FORMAT's x-ray -- _id_ and os.path? os") == [
        "What",
        "is",
        "DEFAULT_FORMAT",
        "s",
        "x-ray",
        "id",
        "and",
        "os",
        "path",
    ]
    # The split it replaced, on random text of the characters that decide it.
    chars = "ab_-.Z9 é,!\n²½\u0301"
    rng = random.Random(46)
    for _ in range(20_000):
        text = "".join(rng.choice(chars) for _ in range(rng.randint(0, 14)))
        cleaned = "".join(c if c.isalnum() or c in "_-" else " " for c in text)
        assert query_words(text) == list(dict.fromkeys(w.strip("-_") for w in cleaned.split() if w.strip("-_")))


def test_the_ranker_weighs_rare_words_and_can_leave_length_aside() -> None:
    lines = ["alpha beta", "alpha", "alpha gamma " + "filler " * 40, "delta"]
    wanted = {"alpha", "beta", "gamma"}
    holds = {"holds": lambda line: set(tokens(line)) & wanted}
    assert Ranker(wanted, **holds, b=0.0).best(lines) == 0  # beta is as rare as gamma; first of equals
    assert Ranker({"gamma"}, holds=lambda line: set(tokens(line)) & {"gamma"}).best(lines) == 2
    assert Ranker({"omega"}, holds=lambda line: set()).best(lines) is None
    long_first = ["alpha gamma " + "filler " * 40, "alpha beta"]
    assert Ranker(wanted, **holds, b=0.0).best(long_first) == 0
    assert Ranker(wanted, **holds).best(long_first) == 1  # with the length norm the short line wins


def test_the_default_ranker_matches_a_questions_stems() -> None:
    ranker = Ranker({"write"})
    assert ranker.held("She wrote it") == {"write"}
    assert ranker.held("__author__ = 'Greg Ward'") == {"~write"}  # a related word's: a term of its own


def test_a_newer_value_is_one_the_earlier_did_not_state() -> None:
    assert changes(numbers("it answers in 400ms"), numbers("it now answers in 250ms"))
    assert not changes(numbers("it answers in 400ms"), numbers("still 400ms"))
    assert not changes(numbers("it answers fast"), numbers("in 250ms"))  # nothing stated before
    assert measures("coverage is 85% on 23 August, 1,200 calls") == {("85", "%"), ("1200", "calls")}
    assert changes({"85"}, {v for v, u in measures("now 78%") if u == "%"})


def test_a_repeat_is_cut_where_it_starts() -> None:
    said = ["The fee is 12 euros.", "It is paid in May.", "the fee is 12 euros!", "More."]
    assert first_repeat(said) == 2
    assert first_repeat(["Yes.", "Yes."], min_chars=12) is None
    assert first_repeat(["a b", "A B"], key=str.casefold) == 1
    assert first_repeat(["a", "b"]) is None
    assert flat("The fee, is 12-euros") == "the fee is 12 euros"


def test_a_light_process_never_loads_the_stemmer() -> None:
    code = (
        "import sys, json\n"
        "import loci.memory.hooks.recall, loci.memory.context.fulltext, loci.memory.graph.newer, loci.memory.text\n"
        "print(json.dumps(sorted({'lemminflect', 'Stemmer'} & set(sys.modules))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
