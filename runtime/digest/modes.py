"""The other strategies, `direct` and `navigate`, and how `auto` picks one.

`direct` is one call with the whole document. When the documents do not fit
the window they are cut to it (the head of each, in order) and the result
says how much was read: that is the baseline the benchmarks compare against.

`navigate` is the agent itself, with the context tools (outline, read,
search, and `context_ask`, which recurses over a span) over the loaded
documents, on the job's session (`runtime.digest.run`), whose store is the
job's own: the home is opened once.

`auto` prefers a direct call whenever the documents fit the window:
recursive methods lose to it there, small models most of all. Past the
window, a question about the whole (summarise, list every, how many) reads
everything with `stream`; a lookup goes to `navigate` only on a model with a
large window, and to `stream` otherwise, since a small model browses badly.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from contextlib import aclosing
from typing import Any

from loci.memory.context.store import ContextObject, ContextStore
from loci.runtime.digest.chunks import Piece, Position, pieces
from loci.runtime.loop.records import Limits, RunConfig, RunResult
from loci.runtime.models.base import Model, Request
from loci.runtime.prompt.build import TEMPLATE_OVERHEAD
from loci.runtime.reading.evidence import Cited, evidence_json
from loci.runtime.session.session import Session

__all__ = ["GLOBAL", "STRATEGIES", "as_result", "choose", "direct", "navigate", "session_config"]

STRATEGIES = ("stream", "navigate", "direct", "auto")
NAVIGATE_MIN_WINDOW = 16_384
DIRECT_REPLY = 256
GLOBAL = re.compile(r"\b(summar\w*|overview|all|every|each|list|how many|count|themes?|overall|whole)\b", re.IGNORECASE)
DIRECT_INSTRUCTIONS = (
    "Read the document below and answer the question. Reply with the answer alone, as short as it can be; "
    "if the document does not hold it, say that the document does not say."
)


def choose(total_tokens: int, question: str, model: Model) -> tuple[str, str]:
    """`(strategy, why)` for `auto`."""
    window = model.context_window
    need = total_tokens + model.count_tokens(DIRECT_INSTRUCTIONS + question) + DIRECT_REPLY + TEMPLATE_OVERHEAD
    if need <= window:
        return "direct", f"the documents fit the window ({need:,} of {window:,} tokens): one call reads them whole"
    if GLOBAL.search(question):
        return (
            "stream",
            f"{total_tokens:,} tokens exceed the {window:,}-token window and the question is about the whole",
        )
    if window >= NAVIGATE_MIN_WINDOW:
        return (
            "navigate",
            f"{total_tokens:,} tokens exceed the window; a lookup, on a model with a {window:,}-token window",
        )
    return "stream", f"{total_tokens:,} tokens exceed the {window:,}-token window, too small a window to browse well"


async def direct(
    model: Model, contexts: ContextStore, objects: Sequence[ContextObject], question: str
) -> dict[str, Any]:
    """One call over the documents, cut to the window if they do not fit."""
    budget = (
        model.context_window - model.count_tokens(DIRECT_INSTRUCTIONS + question) - DIRECT_REPLY - TEMPLATE_OVERHEAD
    )
    parts, evidence, read, whole, tokens_read = [], [], 0, 0, 0
    for index, obj in enumerate(objects):
        header = f"--- {obj.id} {obj.name}\n"
        room = budget - read - model.count_tokens(header)
        piece = await _head(contexts, objects, index, room, model.count_tokens) if room > 0 else None
        if piece is None:
            break
        parts.append(header + piece.text)
        read += model.count_tokens(header) + piece.tokens
        tokens_read += piece.tokens
        evidence.append({"id": obj.id, "name": obj.name, "start": piece.start_line, "end": piece.end_line})
        whole += piece.end == Position(index + 1)
    messages = [
        {"role": "system", "content": DIRECT_INSTRUCTIONS},
        {"role": "user", "content": f"Question: {question}\n\n" + "\n".join(parts)},
    ]
    reply = await model.generate(Request(messages, max_tokens=DIRECT_REPLY, purpose="answer"))
    total = sum(obj.tokens for obj in objects)
    cut = whole < len(objects)
    return {
        "answer": reply.text.strip(),
        "evidence": evidence,
        "tokens_read": tokens_read,
        "status": "partial" if cut else "done",
        "reason": f"cut to the window: read {tokens_read:,} of {total:,} tokens" if cut else None,
    }


async def _head(
    contexts: ContextStore, objects: Sequence[ContextObject], index: int, room: int, count: Callable[[str], int]
) -> Piece | None:
    """The head of document `index` that fits in `room` tokens."""
    async with aclosing(pieces(contexts.store, objects, Position(index), room, count)) as chunks:
        async for piece in chunks:
            return piece if piece.doc == index else None
    return None


def session_config(max_turns: int) -> RunConfig:
    """The config of a job's session: `navigate`'s turns, with the context tools only."""
    return RunConfig(limits=Limits(max_turns=max_turns), tools=("context",))


async def navigate(
    session: Session, objects: Sequence[ContextObject], task: str, *, notes: str = ""
) -> tuple[RunResult, dict[str, Any]]:
    """The agent browses the documents with the context tools, recursing with `context_ask`; its result and
    the job's outcome. `notes` are the lines recalled from memory for the task, shown under it."""
    result = await session.agent.run(task, notes=notes, objects=list(objects))
    names = {obj.id: obj.name for obj in objects}
    return result, {
        "answer": result.answer,
        "evidence": evidence_json(result.evidence, names=names),
        "tokens_read": sum(t.result_tokens for t in result.turns),
        "status": result.status,
        "reason": result.reason,
    }


def as_result(outcome: dict[str, Any]) -> RunResult:
    """A `direct` or `stream` outcome as the `RunResult` its run record keeps."""
    evidence = [Cited(e["id"], e["start"], e["end"], "") for e in outcome["evidence"]]
    return RunResult(outcome["answer"], outcome["status"], evidence, reason=outcome.get("reason"))
