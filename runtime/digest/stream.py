"""The `stream` strategy: read every chunk once, keep a bounded memory, answer from it.

After MemAgent: the documents are read in chunks of at most N tokens. For
each chunk the model rewrites a memory of at most M tokens, given the
question, the memory so far and the chunk; the memory is all that is carried
forward. A last call answers from the question and the memory alone. Each
call's prompt is at most N + M tokens plus the instructions, so the cost is
linear in the length of the documents and the memory held does not depend
on it.

For a lookup (a question not about the whole document), a lexical
pre-pass runs first (`runtime.digest.lexical`): the few lines that bear the
question's content words, found without the model. Only the chunks that
hold one of the best few are read by the model (none on a model under 1B
parameters, which answers better from the lines alone); the others are passed over (read,
counted, checkpointed, no call), which is what makes a long document cost
seconds, not minutes, and keeps a small model from filling its memory with
notes about something else. The found lines are kept in the state (a few,
whatever the length), shown whole, with their line numbers, when the model
answers, and quoted in the evidence. A question about the whole, or one
whose content words are on no line, reads every chunk with the model.

Evidence is kept alongside: the model starts each note with the number of
the chunk it came from (`[12] ...`), and the runtime keeps the line range of
every chunk the current memory still cites. When the memory drops a note,
its range goes too, so the evidence stays as bounded as the memory. A model
that writes no numbers still leaves a trace: the last few chunks that
changed the memory.

The state (position, memory, cited ranges, counts) is a plain dict, saved
by the caller after every chunk; `StreamReader.run` takes one to resume.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from loci.memory.context.store import ContextObject, ContextStore
from loci.runtime.digest.chunks import Piece, Position, pieces
from loci.runtime.digest.lexical import Found, Scan, content_words, line_words, scan
from loci.runtime.models.base import Model, Request
from loci.runtime.prompt.build import fit
from loci.runtime.prompt.catalogue import SMALL_PARAMETERS

__all__ = ["ANSWER_TOKENS", "StreamReader", "evidence_of", "found_evidence", "update_instructions"]

ANSWER_TOKENS = 256
UNTAGGED_KEPT = 4
TAG = re.compile(r"\[(\d+)\]")


def update_instructions(memory_tokens: int) -> str:
    return (
        "You read a long document one chunk at a time, to answer a question at the end. "
        f"You keep a memory of at most {memory_tokens} tokens: it is all you will have when you answer. "
        "After each chunk, rewrite the memory: keep what helps answer the question, add what this chunk adds, "
        "drop the rest. Begin each note with the number of the chunk it came from, in brackets, "
        "like: [3] <what chunk 3 says>. Reply with the new memory only."
    )


ANSWER_INSTRUCTIONS = (
    "Answer the question from your notes. Reply with the answer alone, as short as it can be; "
    "if the notes do not hold it, say that the document does not say."
)
# With lines found, no way out is offered: a small model takes it even when the line holds the answer.
FOUND_INSTRUCTIONS = (
    "Answer the question from the lines found in the document and your notes. "
    "Reply with the answer alone, as short as it can be."
)
MODEL_READS = 3  # a lookup: the model reads the chunks of the best few found lines


@dataclass
class StreamReader:
    """Reads `objects` from the store chunk by chunk; `checkpoint(state)` is awaited after every chunk."""

    model: Model
    contexts: ContextStore
    objects: Sequence[ContextObject]
    question: str
    chunk_tokens: int
    memory_tokens: int
    checkpoint: Callable[[dict[str, Any]], Awaitable[None]]
    lookup: bool = True

    async def run(self, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Read from `state` (empty for a new job) to the end; the answer and the final state."""
        state = {
            "position": [0, 0, 0],
            "chunk": 0,
            "memory": "",
            "sources": {},
            "recent": [],
            "tokens_read": 0,
            "skipped": 0,
            **state,
        }
        if "found" not in state:
            scanned = await scan(self.contexts.store, self.objects, self.question) if self.lookup else Scan([])
            state["found"] = [line.as_json() for line in scanned.found]
            state["counts"] = scanned.counts
        found = [Found.from_json(item) for item in state["found"]]
        wanted = found[: self._model_reads()]
        start = Position.from_json(state["position"])
        async for piece in pieces(self.contexts.store, self.objects, start, self.chunk_tokens, self.model.count_tokens):
            if not found or any(_holds(piece, line) for line in wanted):
                await self._read(piece, state)
            else:
                state["skipped"] += 1
                _advance(state, piece, state["chunk"] + 1)
            await self.checkpoint(state)
        reply = await self.model.generate(
            Request(self.answer_messages(state["memory"], found), max_tokens=ANSWER_TOKENS, purpose="answer")
        )
        return reply.text.strip(), state

    def _model_reads(self) -> int:
        """How many found lines' chunks the model reads: none on a small model, which answers
        better from the lines alone (and a chunk costs it minutes), a few on a larger one."""
        parameters = self.model.parameters
        return 0 if parameters is not None and parameters < SMALL_PARAMETERS else MODEL_READS

    async def _read(self, piece: Piece, state: dict[str, Any]) -> None:
        number = state["chunk"] + 1
        messages = self._update_messages(state["memory"], piece, number)
        reply = await self.model.generate(Request(messages, max_tokens=self.memory_tokens, purpose="memory"))
        memory = reply.text.strip()
        if reply.completion_tokens > self.memory_tokens:  # a backend that ignores max_tokens
            memory = fit(memory, self.memory_tokens, self.model.count_tokens)[0]
        _track(state, memory, number, [piece.doc, piece.start_line, piece.end_line])
        state["memory"] = memory
        _advance(state, piece, number)

    def _update_messages(self, memory: str, piece: Piece, number: int) -> list[dict[str, str]]:
        obj = self.objects[piece.doc]
        user = (
            f"Question: {self.question}\n\nMemory:\n{memory or '(empty)'}\n\n"
            f"Chunk {number} ({obj.id} {obj.name}, lines {piece.start_line}-{piece.end_line}):\n{piece.text}"
        )
        return [
            {"role": "system", "content": update_instructions(self.memory_tokens)},
            {"role": "user", "content": user},
        ]

    def answer_messages(self, memory: str, found: list[Found]) -> list[dict[str, str]]:
        """The prompt the answer is written to: the question, the found lines, the notes."""
        lines = "".join(f"({self.objects[f.doc].id} line {f.line}) {f.text}\n" for f in found)
        shown = f"Lines found in the document:\n{lines}\n" if lines else ""
        user = f"Question: {self.question}\n\n{shown}Notes:\n{memory or '(none)'}"
        instructions = FOUND_INSTRUCTIONS if found else ANSWER_INSTRUCTIONS
        return [{"role": "system", "content": instructions}, {"role": "user", "content": user}]


def _holds(piece: Piece, line: Found) -> bool:
    return piece.doc == line.doc and piece.start_line <= line.line <= piece.end_line


def _advance(state: dict[str, Any], piece: Piece, number: int) -> None:
    state.update(chunk=number, position=piece.end.as_json(), tokens_read=state["tokens_read"] + piece.tokens)


def _track(state: dict[str, Any], memory: str, number: int, where: list[int]) -> None:
    """Keep the ranges of the chunks `memory` cites (and of the last untagged changes), drop the rest."""
    sources: dict[str, list[int]] = {**state["sources"], str(number): where}
    cited = {tag for tag in TAG.findall(memory) if tag in sources}
    state["sources"] = {tag: sources[tag] for tag in cited}
    recent = state["recent"]
    if not memory:
        recent = []
    elif not cited and memory != state["memory"]:
        recent = [*recent, [number, *where]][-UNTAGGED_KEPT:]
    state["recent"] = recent


def evidence_of(state: dict[str, Any], objects: Sequence[ContextObject]) -> list[dict[str, Any]]:
    """The line ranges the final memory rests on, in document order, adjacent ranges merged."""
    ranges = [tuple(where) for where in state.get("sources", {}).values()]
    ranges += [tuple(item[1:]) for item in state.get("recent", [])]
    merged: list[list[int]] = []
    for doc, start, end in sorted(set(ranges)):
        if merged and merged[-1][0] == doc and start <= merged[-1][2] + 1:
            merged[-1][2] = max(merged[-1][2], end)
        else:
            merged.append([doc, start, end])
    return [
        {"id": objects[doc].id, "name": objects[doc].name, "start": start, "end": end}
        for doc, start, end in merged
        if doc < len(objects)
    ]


def found_evidence(
    state: dict[str, Any], objects: Sequence[ContextObject], question: str, answer: str
) -> list[dict[str, Any]]:
    """The found lines the answer rests on, quoted: those that hold a word of the answer's own (not the
    question's), or else the best one, each after the line it completes (its anchor) if it has one."""
    found = [Found.from_json(item) for item in state.get("found", [])]
    own = line_words(answer) - set(content_words(question))
    chosen = [line for line in found if own & line_words(line.text)] or found[:1]
    at = {(line.doc, line.line): line for line in found}
    chosen = list(dict.fromkeys(step for line in chosen for step in (at.get((line.doc, line.anchor)), line) if step))
    return [
        {"id": objects[f.doc].id, "name": objects[f.doc].name, "start": f.line, "end": f.line, "quote": f.text}
        for f in chosen
        if f.doc < len(objects)
    ]
