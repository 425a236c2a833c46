"""The recursive step: ask a question of one span, or map it over many.

`context_ask` and `context_map` are where Recursive Language Models recurse:
a child agent, one level deeper, answers a question with only the target span
as its context. The child is the runtime's business (tools/ never imports
runtime/): the runtime passes an `Asker`, an async callable taking the
question and a `Target` and returning the child's result as a dict
(`answer`, `evidence`, `status`, ...). Here we only check targets before
anything costs a model call, bound the fan-out, and keep the results.

`map_targets` runs the asker over many targets in one task group under a
`CapacityLimiter`, so at most `concurrency` children run at once (one at a
time on a local model, several against a server). The limiter is per call:
a child that itself maps does not wait on its parent's slots, which would
deadlock. Each result is stored as an `obs` context object, so the parent
reads it like any other tool result instead of carrying it in its prompt. A
child that fails with a Loci error becomes a result with status `error`; the
other children carry on.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from loci.memory.context.objects import Target
from loci.memory.context.store import ContextStore
from loci.memory.errors import LociError, ToolError, UsageError

__all__ = ["ANSWER_CHARS", "Asker", "ask", "check_targets", "map_targets", "render_result"]

Asker = Callable[[str, Target], Awaitable[dict[str, Any]]]

ANSWER_CHARS = 300
NO_MODEL = (
    "{tool} needs a model: it runs a child agent over the target, and no model is attached to this"
    " context server. Use context_search and context_read instead"
)


async def check_targets(contexts: ContextStore, question: str, targets: list[str], limit: int) -> list[Target]:
    """Parse and check every target (it exists, its range is inside it); one error lists all the bad ones."""
    if not question.strip():
        raise ToolError("the question is empty")
    if not targets:
        raise ToolError("give at least one target, such as doc:3 or doc:3:120-180")
    if len(targets) > limit:
        raise ToolError(f"{len(targets)} targets is too many for one call; the limit is {limit}")
    parsed, problems = [], []
    for text in targets:
        try:
            target = Target.parse(text)
            await contexts.check_target(target)
            parsed.append(target)
        except UsageError as exc:
            problems.append(str(exc))
    if problems:
        raise ToolError("; ".join(problems))
    return parsed


async def ask(contexts: ContextStore, asker: Asker | None, question: str, target: str) -> dict[str, Any]:
    if asker is None:
        raise ToolError(NO_MODEL.format(tool="context_ask"))
    [checked] = await check_targets(contexts, question, [target], 1)
    result = await asker(question, checked)
    return {"target": str(checked), **result}


async def map_targets(
    contexts: ContextStore, asker: Asker | None, question: str, targets: list[str], *, concurrency: int, limit: int
) -> list[dict[str, Any]]:
    """Ask `question` of every target, at most `concurrency` at once; store each result as an `obs`."""
    if asker is None:
        raise ToolError(NO_MODEL.format(tool="context_map"))
    checked = await check_targets(contexts, question, targets, limit)
    limiter = anyio.CapacityLimiter(max(1, concurrency))
    results: list[dict[str, Any]] = [{} for _ in checked]

    async def one(index: int, target: Target) -> None:
        async with limiter:
            try:
                result = await asker(question, target)
            except LociError as exc:
                result = {"answer": "", "status": "error", "error": str(exc)}
        meta = {
            "tool": "context_map",
            "question": question,
            "target": str(target),
            "status": result.get("status", "ok"),
        }
        obj = await contexts.add_text("obs", f"context_map {target}", render_result(question, target, result), meta)
        answer = str(result.get("answer", ""))
        if len(answer) > ANSWER_CHARS:
            answer = answer[: ANSWER_CHARS - 1] + "…"
        results[index] = {"target": str(target), "id": obj.id, "status": meta["status"], "answer": answer}

    async with anyio.create_task_group() as group:
        for index, target in enumerate(checked):
            group.start_soon(one, index, target)
    return results


def render_result(question: str, target: Target, result: dict[str, Any]) -> str:
    """A child's result as readable text: question, target, status, answer, then the rest."""
    lines = [f"question: {question}", f"target: {target}", f"status: {result.get('status', 'ok')}"]
    lines.append(f"answer: {result.get('answer', '')}")
    for key, value in result.items():
        if key in ("answer", "status"):
            continue
        if key == "evidence" and isinstance(value, list):
            lines.append("evidence:")
            lines += [f"- {item if isinstance(item, str) else json.dumps(item, default=str)}" for item in value]
        else:
            lines.append(f"{key}: {value if isinstance(value, str) else json.dumps(value, default=str)}")
    return "\n".join(lines) + "\n"
