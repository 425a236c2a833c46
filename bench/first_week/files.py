"""The file parts of `loci bench first-week`: a chat per file with follow-ups, and digest over a megabyte.

- chat: `loci chat --file F` (runtime/cli/chat.py `Chat`), five turns on
  each of four real files (bench/data/first_week.json), some of which refer
  back ("Double it.", "What is half of that?"); `rag` gets the same turn
  as the chat runs it (runtime/session/thread.py `Thread.task`: a follow-up
  with the exchange it refers to), BM25's top 8 lines of the file and one
  prompt. A turn is right when its gold value is in the answer, as whole
  words (bench/qa/locomo.py `contains`); `copied` counts the answers that
  say again, word for word, what an earlier turn answered to another
  question.
- digest: `loci digest` (runtime/digest/run.py, strategy `auto`) on one
  file made of real copyright files (`first` of them, then the rest in
  order, up to `bytes`), three questions; `rag` is BM25's top 8 lines of
  the same file.
"""

from __future__ import annotations

import statistics
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from loci.bench.qa.locomo import ANSWER_TOKENS, PROMPT, bm25_top, contains, prompted
from loci.memory.errors import BackendError, ModelBehaviorError
from loci.runtime.cli.chat import open_chat
from loci.runtime.digest.run import digest
from loci.runtime.loop.records import RunConfig
from loci.runtime.models.base import Model
from loci.runtime.prompt.build import TEMPLATE_OVERHEAD, fit
from loci.runtime.session.session import open_session
from loci.runtime.session.thread import Thread

__all__ = ["DATA", "concatenated", "rag_answer", "run_chats", "run_digest"]

DATA = Path(__file__).parents[1] / "data" / "first_week.json"
DOCS = Path("/usr/share/doc")


def _path(name: str) -> Path:
    return Path(name.replace("{stdlib}", sysconfig.get_paths()["stdlib"]))


async def run_chats(model: Model, config: RunConfig, chats: list[dict[str, Any]]) -> dict[str, Any]:
    """Each file's chat on both arms; the share right per arm, and the loci answers that copy an earlier one."""
    right: dict[str, list[bool]] = {"loci": [], "rag": []}
    copied = 0
    for chat in chats:
        file = _path(chat["file"])
        lines = tuple(file.read_text(encoding="utf-8", errors="replace").splitlines())
        thread, said = Thread(), Thread()
        with tempfile.TemporaryDirectory(prefix="loci-first-week-chat-") as home:
            async with open_session(model, Path(home) / "loci.db", config, files=[file]) as session:
                talk = await open_chat(session, model.name, write=lambda _: None, objects=list(session.loaded))
                for question, gold in chat["turns"]:
                    try:
                        await talk.ask(question)
                        answer = talk.last.answer if talk.last else ""
                    except (ModelBehaviorError, BackendError):
                        answer = ""
                    asked = thread.task(question)
                    rag = await rag_answer(model, lines, asked)
                    copied += said.repeats(question, answer) is not None
                    said.add(question, answer)
                    thread.add(question, rag)
                    for arm, text in (("loci", answer), ("rag", rag)):
                        right[arm].append(contains(text, gold))
                    print(
                        f"first-week chat {file.name}: {question!r} gold={gold!r}"
                        f" loci={answer[:80]!r} rag={rag[:60]!r}",
                        file=sys.stderr,
                        flush=True,
                    )
    return {
        "chat_turns": len(right["loci"]),
        "chat_loci": round(statistics.fmean(right["loci"]), 3) if right["loci"] else 0.0,
        "chat_rag": round(statistics.fmean(right["rag"]), 3) if right["rag"] else 0.0,
        "chat_copied": copied,
    }


async def rag_answer(model: Model, lines: tuple[str, ...], question: str) -> str:
    """The `rag` arm: BM25's top 8 lines and the question in one prompt, the lines cut to the window (a BEAM
    message can be thousands of tokens), as `bench qa` fits them."""
    frame = model.count_tokens(PROMPT.format(context="", question=question))
    room = model.context_window - ANSWER_TOKENS - TEMPLATE_OVERHEAD - frame - 8
    return await prompted(model, fit("\n".join(bm25_top(lines, question)), room, model.count_tokens)[0], question)


def concatenated(out: Path, first: list[str], size: int) -> Path:
    """Real copyright files, `first` of them first and then the rest in order, until `size` bytes."""
    names = [*first, *sorted(p.parent.name for p in DOCS.glob("*/copyright") if p.parent.name not in first)]
    parts, total = [], 0
    for name in names:
        path = DOCS / name / "copyright"
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        parts.append(f"==> {name}/copyright <==\n{text}")
        total += len(text.encode())
        if total >= size:
            break
    out.write_text("\n".join(parts), encoding="utf-8")
    return out


async def run_digest(model: Model, plan: dict[str, Any]) -> dict[str, Any]:
    """Three questions over the concatenation, by `loci digest` and by BM25's top 8 lines."""
    right: dict[str, list[bool]] = {"loci": [], "rag": []}
    with tempfile.TemporaryDirectory(prefix="loci-first-week-digest-") as home:
        path = concatenated(Path(home) / "copyrights.txt", plan["first"], plan["bytes"])
        lines = tuple(path.read_text(encoding="utf-8").splitlines())
        for question, gold in plan["questions"]:
            record = await digest([path], question, model=model, db=Path(home) / "loci.db")
            rag = await rag_answer(model, lines, question)
            for arm, text in (("loci", record["answer"]), ("rag", rag)):
                right[arm].append(contains(text, gold))
            print(
                f"first-week digest: {question!r} gold={gold!r} loci={record['answer'][:80]!r}"
                f" ({record['status']}, {record['wall_s']}s) rag={rag[:60]!r}",
                file=sys.stderr,
                flush=True,
            )
        size = path.stat().st_size
    return {"digest_bytes": size, "digest_loci": sum(right["loci"]), "digest_rag": sum(right["rag"]), "digest_of": 3}
