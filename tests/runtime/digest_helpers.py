"""Documents and scripted steps shared by the digest tests.

The scripted model counts whitespace words as tokens, so a line of ten
words is ten tokens: with `--chunk-tokens 64`, a chunk is six lines.
"""

from __future__ import annotations

import re
from pathlib import Path

from loci.runtime.models.base import Request

__all__ = ["NEEDLE", "WHOLE", "answer_from_memory", "chunk_number", "memory_step", "write_doc"]

NEEDLE = "the harbour gate code is 7316 and nothing else here"
# A question about the whole document: `stream` reads every chunk with the model (a lookup, such as
# "What is the gate code?", has the model read only the chunks that hold the lines with its words).
WHOLE = "List every gate code in the log."


def write_doc(path: Path, lines: int = 30, needle_at: int | None = 17) -> Path:
    """`lines` lines of ten words; line `needle_at` holds the needle (ten words too)."""
    text = []
    for number in range(1, lines + 1):
        text.append(NEEDLE if number == needle_at else f"line {number} says nothing of note at all today friend")
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


def chunk_number(request: Request) -> int:
    match = re.search(r"^Chunk (\d+) ", request.messages[-1]["content"], re.MULTILINE)
    assert match, "not a memory update"
    return int(match.group(1))


def memory_step(request: Request) -> str:
    """Keep the memory, and add a tagged note when the chunk holds the needle."""
    assert request.purpose == "memory"
    content = request.messages[-1]["content"]
    memory = content.split("Memory:\n", 1)[1].split("\n\nChunk ", 1)[0]
    kept = "" if memory == "(empty)" else memory
    if "gate code is 7316" in content.split("\n\nChunk ", 1)[1]:
        kept = (kept + "\n" if kept else "") + f"[{chunk_number(request)}] gate code 7316"
    return kept


def answer_from_memory(request: Request) -> str:
    assert request.purpose == "answer"
    return "7316" if "gate code 7316" in request.messages[-1]["content"] else "unknown"
