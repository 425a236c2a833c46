"""The words that name a document say which file, not which line: the question is ranked without them."""

from __future__ import annotations

from loci.runtime.prompt.topic import document_words, without_documents
from loci.runtime.reading.answers import negated, scored_rows, ungrounded

# lines a run on zipfile.py was shown for the question (where it names the method, `14: 'lzma'`)
ZIPFILE = (
    "doc:1 lines 36-1219:\n36|     lzma = None\n60| # constants for Zip file compression methods\n"
    "61| ZIP_STORED = 0\n70| LZMA_VERSION = 63\n622| class LZMACompressor:\n"
    "686|     14: 'lzma',\n705|         if not lzma:\n1219| class ZipFile:\n"
)


def test_a_documents_words_are_its_file_names_or_its_folders_for_a_name_every_package_has() -> None:
    assert document_words(["/usr/lib/python3.11/zipfile.py", "/tmp/man-grep.txt"]) == {"zipfile", "grep"}
    assert document_words(["/usr/share/doc/git/copyright", "/tmp/x/sed-changelog.Debian"]) == {"git", "sed"}
    assert document_words(["README.md", "/x/docs/README.md", "copyright"]) == set()


def test_a_question_is_ranked_without_the_words_that_name_its_documents() -> None:
    names = ["/usr/lib/python3.11/zipfile.py"]
    assert without_documents("what's the lzma constant in zipfile?", names) == "what's the lzma constant in ?"
    assert "zipfile.is_zipfile" in without_documents("Is zipfile.is_zipfile a lzma constant?", names)
    # of several documents, a word naming one says which to read
    both = ["/tmp/bash-copyright", "/tmp/bzip2-copyright"]
    assert without_documents("Who holds the copyright of bzip2?", both) == "Who holds the copyright of bzip2?"
    # too little of its own would be left: the question stays whole
    assert without_documents("what's gzip's homepage?", ["/usr/share/doc/gzip/README"]) == "what's gzip's homepage?"


def test_without_the_files_name_the_line_that_answers_is_about_the_question() -> None:
    whole = "what's the lzma constant in zipfile?"
    asked = without_documents(whole, ["/usr/lib/python3.11/zipfile.py"])
    assert ungrounded("14", ZIPFILE, whole) == ["14"]  # `class ZipFile:` outranks the line that answers
    assert ungrounded("14", ZIPFILE, whole, ranked=asked) == []
    assert ungrounded("It is zipfile's LZMA, 14.", ZIPFILE, "What is the LZMA constant in zipfile?", ranked=asked) == []


def test_a_line_that_holds_what_the_question_asks_to_be_without_is_about_nothing_asked() -> None:
    poplib = "doc:1 lines 34-37:\n34| POP3_PORT = 110\n37| POP3_SSL_PORT = 995\n"
    asked = "Which port does poplib use without SSL?"
    assert negated(asked) == {"ssl"} and negated("Who wrote it?") == set()
    scores = {number: score for _, number, _, score in scored_rows(poplib, asked)}
    assert scores[37] == 0.0 and scores[34] > 0
    assert ungrounded("995", poplib, asked) == ["995"] and ungrounded("110", poplib, asked) == []
