"""The KV prefix across folds, on the bundled GGUF's own tokenizer.

A scripted policy rewrites its state every turn (the worst case for a local model's cache) and reads
a page of varying text each turn, as `loci bench latency` does. Between consecutive prompts every
token before the first window line that changed (the new turn's line, or a fold's new note) must be
the same token, and the window must never be cut at its head: only then does llama.cpp re-evaluate
no more than the new line, the state and the observation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer

from loci.runtime.loop.records import BUILT_IN, AnswerStyle, Limits, NoteMode, RunConfig
from loci.runtime.models.base import Model, Request
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.prompt.build import RegionSizes
from loci.runtime.prompt.window import HEADER
from loci.runtime.session.session import open_session

pytestmark = pytest.mark.model

TURNS = 45
EXTRACT = NoteMode.EXTRACT  # the fold's note at once, as the default mode writes it; no rewrite moves it later
WORDS = "the plot fee is due in march; water only before nine; compost bins sit by the north gate;".split()


def page(number: int) -> str:
    size = 60 + (number * 37) % 120
    return f"Garden log, page {number}: " + " ".join(WORDS[(number * 7 + i * 3) % len(WORDS)] for i in range(size))


def policy() -> Any:
    """Reads page N at turn N, its state rewritten every turn; answers after TURNS pages."""
    done = {"turns": 0}

    def reply(request: Request) -> dict[str, Any]:
        done["turns"] += 1
        turn = done["turns"]
        state = f"read {turn - 1} pages; rule {turn % 5}: " + " ".join(WORDS[turn % 9 : turn % 9 + 6])
        if turn > TURNS:
            return {"state": state, "answer": "done", "evidence": []}
        return {"state": state, "tool": "read_page", "arguments": {"number": turn}}

    return reply


def window_lines(user: str) -> list[str]:
    if HEADER not in user:
        return []
    return user.split(HEADER, 1)[1].split("\n\n", 1)[0].splitlines()


def stable_prefix(previous: str, current: str) -> str:
    """The text of `current` before its first window line that `previous` did not hold at that place."""
    before, now = window_lines(previous), window_lines(current)
    if not now:
        return current.split("\n\nState (", 1)[0]
    if not before:
        return current[: current.index(HEADER)]
    changed = next((i for i, (a, b) in enumerate(zip(before, now, strict=False)) if a != b), min(len(before), len(now)))
    start = current.index(HEADER) + len(HEADER)
    return current[: start + sum(len(line) + 1 for line in now[:changed])]


def common(a: list[int], b: list[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


async def test_a_fold_keeps_every_token_before_its_new_note(gguf: Model, tmp_path: Path) -> None:
    model = ScriptedModel([policy()] * (TURNS + 1), counter=gguf.count_tokens, context_window=gguf.context_window)
    server = MCPServer(name="log")

    @server.tool(name="read_page")
    def read_page(number: int) -> str:
        """Read one page of the garden log."""
        return page(number)

    sizes = RegionSizes.for_window(gguf.context_window, reply=96)
    limits = Limits(max_turns=TURNS + 1)
    config = RunConfig(limits=limits, sizes=sizes, answer_style=AnswerStyle.JSON, tools=BUILT_IN, note_mode=EXTRACT)
    async with open_session(model, tmp_path / "loci.db", config) as session:
        await session.host.add("log", server)
        result = await session.agent.run("Read the garden log page by page.", tool_choice=["read_page"] * TURNS)
    assert len(result.turns) == TURNS + 1
    tokenize = gguf.llm.tokenize  # type: ignore[attr-defined]
    users = [call.messages[1]["content"] for call in model.calls]
    later_notes = 0
    for previous, current in zip(users, users[1:], strict=False):
        if window_lines(current):
            assert f"Task: Read the garden log page by page.\n\n{HEADER}" in current  # never cut at its head
        stable = stable_prefix(previous, current)
        assert previous.startswith(stable)
        # the newline that ends the stable lines is one token with the blank line that followed them before
        kept = len(tokenize(stable.removesuffix("\n").encode(), add_bos=False, special=False))
        ours, theirs = (tokenize(text.encode(), add_bos=False, special=False) for text in (current, previous))
        assert common(ours, theirs) >= kept, stable[-200:]
        lines = window_lines(current)
        fresh = lines[len(window_lines(stable + "\n\n")) :]
        if fresh and fresh[0].startswith("note:") and window_lines(stable + "\n\n"):
            later_notes += 1  # a fold that kept the notes before its new one
    assert later_notes >= 1, "no fold put its note after an earlier one"
