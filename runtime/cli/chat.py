"""`loci chat`: a person talks to the agent, on the same loop as `loci run`.

Each line is a task the `Agent` runs (several turns if it needs them); the
answer is printed, then one status line: the working state, shortened, and
the prompt tokens each region used against its budget, and the window's size
as it stands after the line. The working state and the window carry from one
task to the next, so the chat is one continuing piece of work: each line's
question and answer enter the window as one turn (`Window.add_exchange`),
fold into notes as any turn does, and are restored by `--resume` from the
window ids logged with the answer.

Each line answers its own question (runtime/session/thread.py): a short
line that refers back ("double it", "that function") is run with the
previous question and answer beside it, and an answer that repeats an
earlier turn's answer to a different question is asked again once from
the files alone (no window, no state; the window is put back after), and
is `partial` if it still repeats it. A follow-up that asks for arithmetic on
the previous answer's number ("double it", "what is half of that?") is worked
out (`Thread.computed`), standing on the evidence that answer cited.

Commands: `/state` prints the whole state, `/history` the window and the
latest turns and notes in the context store, `/prune` asks the agent to
prune its window into a note, `/quit` (or end of input) leaves.

The log lives in the home (`memory.records.chat`): the line is committed before the
agent runs on it, the answer and its state before it is shown, so killing
the process loses nothing acknowledged, and `--resume [ID]` continues.

With `--file`, the chat's runs read those files and the chat's own turns,
not the home's other documents (a question about one file is answered from
it); `--all` reads every document in the home, as a chat without `--file`
does.

`Chat` takes an output function and `chat_loop` an input function, so the
tests drive a chat without a terminal; the command reads lines with
`input()` in a worker thread, leaving the event loop free.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from dataclasses import replace

import anyio
import anyio.to_thread

from loci.memory.context.objects import ContextObject
from loci.memory.engines.sqlite.store import default_db_path
from loci.memory.errors import LociError, UsageError
from loci.memory.records.chat import ChatLog, ChatMessage, ChatSession
from loci.runtime.cli.display import one_line
from loci.runtime.cli.flags import project_of
from loci.runtime.cli.run import add_model_arguments, check_sizes, sizes_from
from loci.runtime.loop.records import Limits, RunConfig, RunResult
from loci.runtime.models.specs import load_model
from loci.runtime.session.background import Background
from loci.runtime.session.experience import Brief
from loci.runtime.session.session import Session, check_files, open_session
from loci.runtime.session.thread import Thread

__all__ = ["Chat", "chat_loop", "open_chat", "read_line", "register"]

Read = Callable[[], Awaitable[str | None]]
Write = Callable[[str], None]

PROMPT = "you> "
SPEAKERS = {"user": "you", "assistant": "loci"}
SHORT_STATE = 100
HISTORY_SHOWN = 10


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("chat", help="talk to the agent; the chat persists in the home")
    add_model_arguments(parser)
    parser.add_argument(
        "--resume", nargs="?", const="latest", default=None, metavar="ID", help="continue the latest chat, or chat ID"
    )
    parser.add_argument("--file", "-f", action="append", default=[], help="a file the agent may read (repeatable)")
    parser.add_argument(
        "--all",
        action="store_true",
        help="with --file, also read every other document in the home (default: only those)",
    )
    parser.add_argument(
        "--max-turns", type=int, default=8, help="turns per line before the agent must answer (default 8)"
    )
    parser.add_argument("--mcp-config", help="an mcpServers JSON file of external MCP servers")
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    resume = _resume_id(args.resume)
    check_sizes(args)
    check_files(args.file)
    model = await load_model(args.model, context_window=args.context_window)
    try:
        config = RunConfig(
            limits=Limits(max_turns=args.max_turns), sizes=sizes_from(args, model), mcp_config=args.mcp_config
        )
        db = args.db or default_db_path()
        # A chat is a long-lived process: its worker runs every job kind (`runtime.session.background`).
        project = project_of(args)
        async with open_session(
            model, db, config, files=args.file, background=Background.ALL, project=project
        ) as session:
            # With --file, the chat reads those files (and its own turns); the rest of the home only with --all.
            objects = list(session.loaded) if args.file and not args.all else None
            chat = await open_chat(session, model.name, write=_print, resume=resume, objects=objects)
            await chat_loop(chat, read_line)
    finally:
        await model.aclose()
    return 0


def _resume_id(value: str | None) -> int | str | None:
    if value is None or value == "latest":
        return value
    if not value.isdigit():
        raise UsageError(f"--resume takes a chat id (a number), not {value!r}")
    return int(value)


def _print(text: str) -> None:
    print(text, flush=True)


async def read_line() -> str | None:
    """One line from the terminal, read in a worker thread; None at end of input."""
    try:
        return await anyio.to_thread.run_sync(input, PROMPT, abandon_on_cancel=True)
    except EOFError:
        print(flush=True)  # end the prompt's line
        return None


async def open_chat(
    session: Session,
    model: str,
    *,
    write: Write,
    resume: int | str | None = None,
    objects: list[ContextObject] | None = None,
) -> Chat:
    """A new chat, or the one `resume` names ("latest" or an id), its messages shown again; `objects`, when
    given, are the documents its runs read (None: every document in the home)."""
    log = ChatLog(session.store, project=session.runs.project)  # the session's project
    if resume is None:
        record = await log.start(model)
        write(f"chat {record.id} with {model}; /state /history /prune /quit")
        return Chat(session, log, record, write, objects=objects)
    record = await log.find(None if resume == "latest" else int(resume))
    messages = await log.messages(record.id)
    write(f"resuming chat {record.id} ({record.model}, {len(messages)} messages)")
    for message in messages:
        write(f"{SPEAKERS.get(message.role, message.role)}> {message.text}")
    last = next((m for m in reversed(messages) if m.role == "assistant"), None)
    state = last.state if last else ""
    chat = Chat(session, log, record, write, state=state, objects=objects, thread=_thread(messages))
    if last and last.window:
        await session.agent.window.restore(list(last.window))
    if chat.state:
        write(f"[state: {one_line(chat.state, SHORT_STATE)}]")
    return chat


def _thread(messages: list[ChatMessage]) -> Thread:
    """The exchanges of a chat's log: each question with the answer that followed it."""
    thread, asked = Thread(), None
    for message in messages:
        if message.role == "user":
            asked = message.text
        elif message.role == "assistant" and asked is not None:
            thread.add(asked, message.text.split("\n(partial: ")[0])
            asked = None
    return thread


async def chat_loop(chat: Chat, read: Read) -> None:
    """Read lines until /quit or end of input; each is a command or a task.

    The session's background worker (`Background.ALL`) runs meanwhile: the memory graph's jobs, and the
    rewrites of the notes the chat's folds wrote as extracts, its model calls only while the chat waits
    for the person."""
    while True:
        line = await read()
        if line is None or not await chat.handle(line):
            return


class Chat:
    """One chat on one agent session: runs tasks, keeps the state, logs every exchange."""

    def __init__(
        self,
        session: Session,
        log: ChatLog,
        record: ChatSession,
        write: Write,
        *,
        state: str = "",
        objects: list[ContextObject] | None = None,
        thread: Thread | None = None,
    ) -> None:
        self.session = session
        self.objects = objects  # the documents the chat reads; None: every document in the home
        self.log = log
        self.record = record
        self.write = write
        self.state = state
        self.thread = thread or Thread()  # the questions and answers so far (runtime/session/thread.py)
        self.last: RunResult | None = None

    async def handle(self, line: str) -> bool:
        """Act on one line; False means the chat is over."""
        line = line.strip()
        if not line:
            return True
        if line.startswith("/"):
            return await self.command(line)
        await self.ask(line)
        return True

    async def command(self, line: str) -> bool:
        name = line.split()[0]
        if name == "/quit":
            return False
        if name == "/state":
            self.write(self.state or "(the state is empty)")
        elif name == "/history":
            self.write(await self.history())
        elif name == "/prune":
            await self.prune()
        else:
            self.write(f"unknown command {name}; the commands are /state /history /prune /quit")
        return True

    async def ask(self, line: str) -> None:
        await self.log.add(self.record.id, "user", line)
        try:
            result = await self._run(line)
        except LociError as exc:  # the model or a backend failed: say so, keep the chat
            message = f"{type(exc).__name__}: {exc}"
            await self.log.add(self.record.id, "error", message, self.state)
            self.write(f"error> {message}")
            return
        if result.turns:
            self.state = result.turns[-1].action.state
        window = self.session.agent.window
        await window.add_exchange(line, result.answer)  # the next line's prompt shows this exchange
        answer = result.answer + ("" if result.status == "done" else f"\n(partial: {result.reason})")
        await self.log.add(self.record.id, "assistant", answer, self.state, window.ids())
        self.last = result
        self.write(f"loci> {answer}")
        self.write(self.status())

    async def _run(self, line: str) -> RunResult:
        """Run the line's task (`Thread.task`: with the exchange it refers back to), continuing the chat's
        working state and window; an answer that repeats an earlier turn's to another question is `partial`."""
        scope = {} if self.objects is None else {"objects": self.objects}

        async def work(brief: Brief) -> RunResult:
            if self.last is not None and (worked := self.thread.computed(line)) is not None:
                # arithmetic on the previous answer's number: worked out, standing on what that answer stood on
                last = self.last
                return RunResult(worked, last.status, evidence=list(last.evidence), reason=last.reason, plan=last.plan)
            agent = self.session.agent
            result = await agent.run(brief.question, notes=brief.text, state=self.state, keep_window=True, **scope)
            if self.thread.repeats(line, result.answer) is None:
                return result
            # Asked again from the files alone (a follow-up's task carries the exchange it refers to), then the
            # chat's window is put back for the next line.
            kept = agent.window.ids()
            result = await agent.run(brief.question, notes=brief.text, **scope)
            await agent.window.restore(kept)
            if (turn := self.thread.repeats(line, result.answer)) is None:
                return result
            reason = f"the answer repeats turn {turn}'s, to another question"
            return replace(result, status="partial", reason="; ".join(r for r in (result.reason, reason) if r))

        result = (await self.session.run(self.thread.task(line), source="chat", work=work))[1]
        self.thread.add(line, result.answer)
        return result

    def status(self) -> str:
        """The state, shortened; the last prompt's tokens per region against the budgets; the window as it
        stands now, this line's exchange in it, which the next line's prompt starts from."""
        window = self.session.agent.window
        sizes = self.last.sizes if self.last and self.last.sizes else self.session.agent.sizes
        line = f"[state: {one_line(self.state, SHORT_STATE) or '(empty)'}]"
        items = len(window.items)
        now = f"window now {items} item{'s' if items != 1 else ''}, {window.tokens()}/{sizes.window} tokens"
        if self.last is None or not self.last.turns:
            return f"{line}\n[{now}]"
        trace = self.last.turns[-1]
        used = " ".join(f"{name} {tokens}/{getattr(sizes, name, '?')}" for name, tokens in trace.prompt_tokens.items())
        total = sum(trace.prompt_tokens.values())
        turns = len(self.last.turns)
        prompt = f"{turns} turn{'s' if turns != 1 else ''}; prompt {total}/{sizes.total - sizes.reply}: {used}"
        return f"{line}\n[{prompt}; {now}]"

    async def history(self) -> str:
        """The window as the agent sees it, then the latest turns and notes in the store."""
        parts = []
        window = self.session.agent.window
        if window.items:
            parts.append("In the window:\n" + window.render())
        contexts = self.session.contexts
        objects = (await contexts.list(["turn", "note"]))[-HISTORY_SHOWN:]
        if not objects:
            return "\n\n".join(parts) or "(no turns or notes yet)"
        lines = []
        for obj in objects:
            span = await contexts.read(obj.id, 1, min(obj.lines, 2), max_tokens=60)
            lines.append(f"{obj.id} {' '.join(span.text.split())[:160]}")
        parts.append(f"In the store (latest {len(objects)}; context_search reaches all):\n" + "\n".join(lines))
        return "\n\n".join(parts)

    async def prune(self) -> None:
        """Fold the older half of the window into a note, as the loop does when the window is full."""
        note = await self.session.agent.notes.prune()
        if note is None:
            self.write("nothing to prune: the window holds fewer than two items")
        else:
            self.write(f"pruned into {note}; the turns stay searchable")
