"""A conversation with very long messages imports whole: nothing cut, one oversized message skipped alone."""

from __future__ import annotations

import json
from pathlib import Path

from loci.memory.graph.records import MAX_TEXT_CHARS
from tests.runtime.cli_helpers import loci


def _long(middle: str, chars: int) -> str:
    line = "def step(n):\n    return compute(n) + offset  # the usual helper\n"
    half = line * (chars // (2 * len(line)))
    return half + middle + "\n" + half + "print(step(1))"


def test_a_100k_message_is_stored_whole_and_found_and_a_20mb_one_is_skipped_with_its_reason(tmp_path: Path) -> None:
    script = _long("# the staging port is 7070 on the quokka cluster", 100_000)
    huge = "x" * 20_000_000
    messages = [
        {"role": "user", "content": "Which port does staging use?", "id": "m1"},
        {"role": "assistant", "content": script, "id": "m2"},
        {"role": "user", "content": huge, "id": "m3"},
        {"role": "user", "content": "Thanks, the deploy of the wombat service went fine.", "id": "m4"},
    ]
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    db = str(tmp_path / "loci.db")

    done = loci("memory", "import", str(path), "--db", db, "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    [conversation] = json.loads(done.stdout)["conversations"]
    assert conversation["added"] == 3
    [[ref, reason]] = conversation["skipped"]
    assert ref == "m3" and f"over the limit of {MAX_TEXT_CHARS:,}" in reason
    again = loci("memory", "import", str(path), "--db", db, home=tmp_path)
    assert again.returncode == 0 and "skipped turn 'm3'" in again.stderr and "0 new turns" in again.stdout

    found = loci(
        "memory", "search", "quokka cluster", "--kind", "semantic", "--db", db, "--json", "-k", "1", home=tmp_path
    )
    assert found.returncode == 0, found.stderr
    [hit] = json.loads(found.stdout)
    shown = json.loads(loci("memory", "show", hit["id"], "--db", db, "--json", home=tmp_path).stdout)
    assert shown["text"] == f"assistant: {script}"  # the turn as recall remembers it: its speaker, its words whole
    exported = json.loads(loci("memory", "export", "--db", db, home=tmp_path).stdout)
    assert [n["text"] for n in exported["nodes"] if n["id"] == hit["id"]] == [f"assistant: {script}"]
    wombat = loci("memory", "search", "wombat deploy", "--db", db, "--json", home=tmp_path)
    assert "wombat" in json.loads(wombat.stdout)[0]["text"]
