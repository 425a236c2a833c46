"""`loci chat`: the session logic driven by scripted lines, and a real process killed mid-chat."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import anyio
import pytest

from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import NotFoundError
from loci.memory.records.chat import ChatLog
from loci.runtime.cli.chat import Chat, chat_loop, open_chat
from loci.runtime.loop.records import NoteMode, RunConfig
from loci.runtime.models.base import Request
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.prompt.build import RegionSizes
from loci.runtime.prompt.window import is_note
from loci.runtime.session.session import Session, open_session
from tests.runtime.cli_helpers import loci, script

ROOT = Path(__file__).resolve().parents[3]


def tool(name: str, state: str, **arguments: Any) -> dict[str, Any]:
    return {"state": state, "tool": name, "arguments": arguments}


def answer(text: str, state: str) -> dict[str, Any]:
    return {"state": state, "answer": text, "evidence": []}


class Console:
    """Scripted input lines and captured output; counts the lines actually read."""

    def __init__(self, lines: Iterable[str]) -> None:
        self.lines = list(lines)
        self.read_count = 0
        self.out: list[str] = []

    async def read(self) -> str | None:
        if self.read_count >= len(self.lines):
            return None
        self.read_count += 1
        return self.lines[self.read_count - 1]

    def write(self, text: str) -> None:
        self.out.append(text)

    @property
    def text(self) -> str:
        return "\n".join(self.out)


@pytest.fixture
async def chatted(tmp_path: Path) -> AsyncIterator[tuple[Session, ScriptedModel]]:
    model = ScriptedModel(
        [tool("context_list", "the user grows tomatoes"), answer("hello, gardener", "the user grows tomatoes; greeted")]
    )
    async with open_session(model, tmp_path / "loci.db") as session:
        yield session, model


async def run_chat(session: Session, lines: list[str], **kwargs: Any) -> tuple[Chat, Console]:
    console = Console(lines)
    chat = await open_chat(session, "scripted", write=console.write, **kwargs)
    with anyio.fail_after(30):
        await chat_loop(chat, console.read)
    return chat, console


async def test_a_line_is_answered_with_state_and_budget_status(chatted: tuple[Session, ScriptedModel]) -> None:
    session, model = chatted
    _, console = await run_chat(session, ["hi there"])
    model.check_used()
    assert "loci> hello, gardener" in console.out
    assert "[state: the user grows tomatoes; greeted]" in console.text
    status = next(line for line in console.text.splitlines() if line.startswith("[2 turns; prompt "))
    budgets = session.agent.sizes
    assert f"/{budgets.total - budgets.reply}:" in status
    assert re.search(
        rf"system \d+/{budgets.system} .*state \d+/{budgets.state} .*observation \d+/{budgets.observation}", status
    )


async def test_state_history_and_quit_commands(chatted: tuple[Session, ScriptedModel]) -> None:
    session, _ = chatted
    _, console = await run_chat(session, ["hi there", "/state", "/history", "/nonsense", "/quit", "never read"])
    assert console.read_count == 5
    state_at = console.out.index("the user grows tomatoes; greeted")
    assert state_at > 0
    history = console.out[state_at + 1]
    assert "context_list" in history and re.search(r"turn:\d+", history)
    assert "unknown command /nonsense" in console.out[state_at + 2]


async def test_state_carries_into_the_next_task(tmp_path: Path) -> None:
    model = ScriptedModel(
        [answer("noted", "constraint: no pesticides"), answer("ok", "constraint: no pesticides; asked again")]
    )
    async with open_session(model, tmp_path / "loci.db") as session:
        await run_chat(session, ["remember: no pesticides", "what should I spray?"])
    assert "constraint: no pesticides" in model.calls[1].messages[1]["content"]


async def test_the_line_is_committed_before_the_agent_runs(tmp_path: Path) -> None:
    seen: list[list[str]] = []

    async with open_session(ScriptedModel([]), tmp_path / "loci.db") as session:

        def policy(request: Request) -> dict[str, Any]:
            rows = session.store.read_sync(lambda db: db.execute("SELECT role, text FROM chat_messages").fetchall())
            seen.append([f"{role}:{text}" for role, text in rows])
            return answer("fine", "s")

        session.agent.model.steps.append(policy)
        await run_chat(session, ["is it saved?"])
    assert seen == [["user:is it saved?"]]


async def test_a_failing_model_is_reported_and_logged_and_the_chat_goes_on(tmp_path: Path) -> None:
    model = ScriptedModel(["not json", "still not", "never json"])
    async with open_session(model, tmp_path / "loci.db") as session:
        chat, console = await run_chat(session, ["hello", "/state"])
        messages = await chat.log.messages(chat.record.id)
    assert any(line.startswith("error> ModelBehaviorError") for line in console.out)
    assert [m.role for m in messages] == ["user", "error"]
    assert console.out[-1] == "(the state is empty)"


async def test_resume_shows_the_exchange_and_restores_the_state(chatted: tuple[Session, ScriptedModel]) -> None:
    session, _ = chatted
    first, _ = await run_chat(session, ["hi there"])
    resumed, console = await run_chat(session, ["/state"], resume="latest")
    assert resumed.record.id == first.record.id
    assert console.out[1:4] == ["you> hi there", "loci> hello, gardener", "[state: the user grows tomatoes; greeted]"]
    assert console.out[-1] == "the user grows tomatoes; greeted"
    by_id, _ = await run_chat(session, [], resume=first.record.id)
    assert by_id.state == "the user grows tomatoes; greeted"
    with pytest.raises(NotFoundError, match="no chat session 99"):
        await open_chat(session, "scripted", write=print, resume=99)


async def test_resume_without_a_chat_is_a_clear_error(store: Store) -> None:
    with pytest.raises(NotFoundError, match="no chat to resume"):
        await ChatLog(store).find()


async def test_prune_folds_the_older_turns_into_a_note(tmp_path: Path) -> None:
    note = "listed the documents twice; nothing there"
    script = [tool("context_list", "a"), tool("context_list", "b"), answer("listed", "b"), note]
    model = ScriptedModel(script)
    async with open_session(model, tmp_path / "loci.db") as session:
        _, console = await run_chat(session, ["/prune", "list twice", "/prune", "/history"])
    model.check_used()
    assert model.calls[-1].purpose == "note"
    assert re.search(r"pruned into note:\d+", console.text)
    assert "nothing to prune" in console.text  # the first /prune, on an empty window
    assert re.search(r"note:\d+ \(notes on turn:\d+\): listed the documents twice", console.text)


def script_file(tmp_path: Path) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps([answer("the plot fee is 35 euros", "fee known: 35 euros")]), encoding="utf-8")
    return path


async def test_a_killed_chat_loses_nothing_acknowledged(tmp_path: Path, home: str) -> None:
    env = {**os.environ, "LOCI_HOME": str(tmp_path), "PYTHONUNBUFFERED": "1"}
    command = [
        sys.executable,
        "-m",
        "loci.runtime.cli.main",
        "chat",
        "--model",
        f"scripted:{script_file(tmp_path)}",
        "--db",
        home,
    ]
    process = await anyio.open_process(command, cwd=ROOT, env=env)
    assert process.stdin is not None and process.stdout is not None
    try:
        await process.stdin.send(b"what is the fee?\n")
        seen = b""
        with anyio.fail_after(60):
            while b"loci> the plot fee is 35 euros" not in seen:
                seen += await process.stdout.receive()
        process.send_signal(signal.SIGKILL)
        with anyio.fail_after(30):
            assert await process.wait() == -signal.SIGKILL
    finally:
        if process.returncode is None:
            process.kill()
        await process.aclose()
    with anyio.fail_after(60):
        done = await anyio.run_process([*command, "--resume"], cwd=ROOT, env=env, input=b"", check=False)
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    assert "you> what is the fee?" in out
    assert "loci> the plot fee is 35 euros" in out
    assert "[state: fee known: 35 euros]" in out


async def test_resume_restores_the_window_in_a_new_session(home: str) -> None:
    first_model = ScriptedModel([tool("context_list", "looked"), answer("none loaded", "looked")])
    async with open_session(first_model, home) as session:
        await run_chat(session, ["what is loaded?"])
        held = session.agent.window.ids()
    second_model = ScriptedModel([answer("still none", "looked again")])
    async with open_session(second_model, home) as session:
        await run_chat(session, ["and now?"], resume="latest")
    assert held and held[0].startswith("turn:")
    shown = second_model.calls[0].messages[1]["content"]
    assert f"{held[0]}: turn 1" in shown and "context_list" in shown


def test_the_chat_command_takes_the_region_budgets_it_is_given(tmp_path: Path) -> None:
    spec = script(tmp_path, [answer("hello", "greeted")])
    done = loci(
        "chat", "--model", spec, "--window-tokens", "300", "--state-tokens", "40", home=tmp_path, stdin="hi\n/quit\n"
    )
    assert done.returncode == 0, done.stderr
    assert "state 5/40" in done.stdout and "window 0/300" in done.stdout


async def test_a_line_and_its_answer_enter_the_window_the_next_line_sees(tmp_path: Path) -> None:
    model = ScriptedModel([answer("in the office", "key: office"), answer("you asked where the key is", "recalled")])
    async with open_session(model, tmp_path / "loci.db") as session:
        chat, console = await run_chat(session, ["Where is the shed key?", "What was my first question?", "/history"])
        rows = session.store.read_sync(
            lambda db: db.execute("SELECT role, window FROM chat_messages ORDER BY seq").fetchall()
        )
        window = session.agent.window
    model.check_used()
    second = model.calls[1].messages[1]["content"]
    assert "you asked: Where is the shed key? loci answered: in the office" in second
    assert len(window.items) == 2 and all(ref.startswith("turn:") for ref in window.ids())
    statuses = [line for line in console.out if "window now" in line]
    assert len(statuses) == 2
    assert re.search(rf"window now 1 item, [1-9]\d*/{chat.last.sizes.window} tokens", statuses[0])
    assert "window now 2 items" in statuses[1]
    assert [(role, json.loads(ids)) for role, ids in rows] == [
        ("user", []),
        ("assistant", window.ids()[:1]),
        ("user", []),
        ("assistant", window.ids()),
    ]
    history = console.out[-1]
    assert history.startswith("In the window:") and "you asked: What was my first question?" in history


async def test_resume_restores_the_exchanges_as_the_window_showed_them(tmp_path: Path) -> None:
    first_model = ScriptedModel([answer("35 euros a season", "fee: 35")])
    async with open_session(first_model, tmp_path / "loci.db") as session:
        await run_chat(session, ["How much is a plot?"])
        shown_before = session.agent.window.render()
    second_model = ScriptedModel([answer("you asked about the plot fee", "recalled")])
    async with open_session(second_model, tmp_path / "loci.db") as session:
        await run_chat(session, ["What did I ask?"], resume="latest")
    prompt = second_model.calls[0].messages[1]["content"]
    assert shown_before and f"Recent turns:\n{shown_before}" in prompt  # byte for byte: the KV prefix holds


async def test_chat_lines_fold_into_a_note_like_any_turn(tmp_path: Path) -> None:
    model = ScriptedModel([answer(f"answer number {i} about the garden rules", f"s{i}") for i in range(8)])
    config = RunConfig(sizes=RegionSizes.for_window(8_192, window=90), note_mode=NoteMode.EXTRACT)
    async with open_session(model, tmp_path / "loci.db", config) as session:
        await run_chat(session, [f"question {i}: what do the rules say?" for i in range(8)])
        window = session.agent.window
        first = (await session.contexts.list(["note"]))[0]
        first_note = await session.contexts.read(first.id)
    model.check_used()
    assert any(is_note(item) for item in window.items), "the window outgrew its size and folded no note"
    assert "turn:1: you asked: question 0" in first_note.text  # the folded exchange, its question first
    assert window.tokens() <= 90 + model.count_tokens(window.items[-1].render())  # within W, but for the newest
    assert any("(notes on turn:" in call.messages[1]["content"] for call in model.calls)
