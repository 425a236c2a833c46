"""The quoted text of a tool result is its JSON as `json.dumps(..., indent=2)` writes it, inside the notes block."""

from __future__ import annotations

import json

from loci.memory.graph.quoted import quote_notes
from loci.servers.quoting import quoted

DATA = [
    {"id": "mem:1", "text": 'a "quoted" line\twith é, 😀 and \x01', "score": 0.731, "parts": {"lexical": 1.0}},
    {"id": "mem:2", "text": "", "score": 3.0, "tags": [], "meta": {"nested": [1, 2.5, None, True]}},
]


async def test_the_text_is_the_indented_json_of_the_result_and_the_structure_is_unchanged() -> None:
    async def recall() -> list[dict]:
        return DATA

    result = await quoted(recall)()
    assert result.content[0].text == quote_notes(json.dumps(DATA, ensure_ascii=False, indent=2))
    assert result.structured_content == {"result": DATA}


async def test_text_the_fast_writer_refuses_is_written_as_before() -> None:
    async def lone() -> dict:
        return {"text": "half a pair \ud800"}

    result = await quoted(lone)()
    assert result.content[0].text == quote_notes(
        json.dumps({"text": "half a pair \ud800"}, ensure_ascii=False, indent=2)
    )
