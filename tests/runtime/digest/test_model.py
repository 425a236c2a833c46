"""`loci digest` on the bundled GGUF, on a real document past its window with a fact on one line.

The document is a stdlib module of the running Python (`argparse.py`, about
25,000 tokens on the bundled tokenizer, six times the 4,096-token window),
with one invented fact planted on a line of its own, as a user would ask of
a file no one here wrote. `stream` finds the line without the model, asks
the model only to answer from it, and quotes it as evidence.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from loci.bench.digest.real import plant
from loci.runtime.digest.run import digest

pytestmark = pytest.mark.model

SOURCE = Path(sysconfig.get_paths()["stdlib"]) / "argparse.py"


@pytest.mark.skipif(not SOURCE.is_file(), reason="this Python ships no argparse.py source")
async def test_stream_finds_a_fact_on_one_line_of_a_real_module_and_quotes_it(tmp_path: Path) -> None:
    doc = tmp_path / "argparse.txt"
    line = plant(SOURCE, doc)[0]
    record = await digest([doc], "What is the vault access code?", db=tmp_path / "loci.db", strategy="auto")
    assert record["strategy"] == "stream" and record["tokens_total"] > 4 * 4_096
    assert "7341" in record["answer"] and record["status"] == "done"
    assert record["evidence"][0]["start"] == line and record["evidence"][0]["quote"] == "The vault access code is 7341."
    assert record["model_calls"] == 1  # the answer; no chunk was worth the model's minutes


async def test_stream_answers_who_holds_a_copyright_from_the_field_that_completes_its_record(tmp_path: Path) -> None:
    records = [
        f"Files: src/part{n}/*\nCopyright: 2001-2012 Person Number{n} <p{n}@example.org>\nLicense: GPL-2+\n"
        for n in range(400)
    ]
    for n in (20, 120, 220, 320):  # "held" said on more lines than "bzip2", as in a real megabyte of them
        records[n] += "permission under the Copyright and Similar Rights held by the Licensor.\n"
    records[250] = (
        "Upstream-Name: bzip2\nSource: http://www.bzip.org/\n\n"
        "Files: *\nCopyright: 1996-2010 Julian R Seward <jseward@bzip.org>\nLicense: BSD-variant\n"
    )
    doc = tmp_path / "copyrights.txt"
    doc.write_text("\n".join(records), encoding="utf-8")
    record = await digest([doc], "Who holds the copyright of bzip2?", db=tmp_path / "loci.db", strategy="auto")
    assert record["strategy"] == "stream"
    assert "Julian R Seward" in record["answer"] and record["status"] == "done"
    assert [item["quote"] for item in record["evidence"]][:2] == [
        "Upstream-Name: bzip2",
        "Copyright: 1996-2010 Julian R Seward <jseward@bzip.org>",
    ]
