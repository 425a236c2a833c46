"""`loci memory import FILE`: which format a file is in, and importing it.

`detect` names the format from the file's content, not its name: a JSON
document is LoCoMo (a list of samples with a `conversation`), a ChatGPT
export (a list of conversations with a `mapping`) or a Loci export (an
object with `nodes` and `edges`); a JSONL file is the reference memory
server's (`type` entity or relation), a Codex rollout (records with a
`type` such as `session_meta` and a `payload`), a Claude Code transcript
(records with a `type` and a `message` or a `sessionId`) or messages (a `role` or a
`speaker`); a text file of `[date] Speaker: text` lines is a text
transcript. `sniff_conversations` is the same without the errors: the
conversations a text holds, or None, for callers that only want to know
(the context store, loading a file). A file that is none of them is an error that says which formats
there are. Conversations are imported one transaction each, in the file's
order (memory/imports/writer.py); memory files in one (memory/imports/memory_files.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from loci.memory.context.store import ContextStore
from loci.memory.errors import UsageError
from loci.memory.graph.graph import Graph
from loci.memory.imports.chatgpt import is_chatgpt, read_chatgpt
from loci.memory.imports.claude_code import is_claude_code, read_claude_code
from loci.memory.imports.codex import is_codex, read_codex
from loci.memory.imports.locomo import is_locomo, read_locomo
from loci.memory.imports.memory_files import import_export, import_reference, is_export, is_reference
from loci.memory.imports.messages import is_message, read_messages
from loci.memory.imports.records import Conversation
from loci.memory.imports.text import is_text_transcript, read_text
from loci.memory.imports.writer import Imported, import_conversation
from loci.memory.json_input import TooDeep, loads
from loci.memory.regular import read_regular

__all__ = [
    "CONVERSATION_FORMATS",
    "FORMATS",
    "MEMORY_FORMATS",
    "ImportReport",
    "detect",
    "import_file",
    "read_conversations",
    "sniff_conversations",
]

CONVERSATION_FORMATS: dict[str, Callable[[str, str], list[Conversation]]] = {
    "jsonl": read_messages,
    "locomo": read_locomo,
    "claude-code": read_claude_code,
    "codex": read_codex,
    "chatgpt": read_chatgpt,
    "text": read_text,
}
FORMATS = ("auto", *CONVERSATION_FORMATS, "loci-export", "memory-jsonl")
MEMORY_FORMATS = ("loci-export", "memory-jsonl")
MAX_FILE_BYTES = 1 << 30


@dataclass
class ImportReport:
    """What importing one file did."""

    path: str
    format: str
    conversations: list[Imported] = field(default_factory=list)
    nodes: int = 0
    edges: int = 0

    @property
    def added(self) -> int:
        return sum(c.added for c in self.conversations)


def detect(text: str, source: str) -> str:
    """The format of a file's text (see the module docstring)."""
    head = text.lstrip()[:1]
    if head in ("[", "{"):
        try:
            data = loads(text)
        except TooDeep as exc:
            raise UsageError(f"{source}: refused: {exc}") from None
        except ValueError:
            data = None
        if data is not None:
            for name, test in (("locomo", is_locomo), ("chatgpt", is_chatgpt), ("loci-export", is_export)):
                if test(data) or (isinstance(data, dict) and name != "loci-export" and test([data])):
                    return name
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        record = loads(first)
    except ValueError:
        record = None
    if isinstance(record, dict):
        if is_reference(record):
            return "memory-jsonl"
        if is_codex(record):
            return "codex"
        if is_claude_code(record):
            return "claude-code"
        if is_message(record):
            return "jsonl"
    if is_text_transcript(text):
        return "text"
    raise UsageError(f"{source}: cannot tell its format; pass --format, one of {', '.join(FORMATS[1:])}")


def sniff_conversations(text: str, source: str) -> tuple[str, list[Conversation]] | None:
    """`(format, conversations)` when `text` is a conversation in a format read here, else None (never raises)."""
    try:
        fmt = detect(text, source)
        if fmt not in CONVERSATION_FORMATS:
            return None
        return fmt, CONVERSATION_FORMATS[fmt](text, source)
    except UsageError:
        return None


def read_conversations(path: Path, fmt: str = "auto") -> tuple[str, list[Conversation]]:
    """The format and the conversations of a conversation file."""
    text, source = _read(path)
    fmt = detect(text, source) if fmt == "auto" else fmt
    if fmt not in CONVERSATION_FORMATS:
        raise UsageError(f"{source} is {fmt}, which holds memories, not conversations")
    return fmt, CONVERSATION_FORMATS[fmt](text, source)


async def import_file(
    graph: Graph, path: Path, fmt: str = "auto", contexts: ContextStore | None = None, cause: str = "import"
) -> ImportReport:
    """Import one file into `graph` (and its tool records into `contexts`)."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    text, source = _read(path)
    fmt = detect(text, source) if fmt == "auto" else fmt
    report = ImportReport(source, fmt)
    if fmt in ("loci-export", "memory-jsonl"):
        reader = import_export if fmt == "loci-export" else import_reference
        counts = await reader(graph, text, source)
        report.nodes, report.edges = counts.nodes, counts.edges
        return report
    for conversation in CONVERSATION_FORMATS[fmt](text, source):
        report.conversations.append(await import_conversation(graph, conversation, contexts, cause))
    return report


def _read(path: Path) -> tuple[str, str]:
    """The text of a regular file of at most `MAX_FILE_BYTES` (memory/regular.py: no FIFO, device or socket)."""
    source = str(path)
    if Path(path).is_dir():
        raise UsageError(f"{source} is a directory; import one file at a time")
    try:
        return read_regular(path, MAX_FILE_BYTES).decode("utf-8"), source
    except UnicodeDecodeError as exc:
        raise UsageError(f"{source} is not UTF-8 text (byte {exc.start})") from exc
    except OSError as exc:
        raise UsageError(f"cannot read {source}: {exc.strerror}") from exc
