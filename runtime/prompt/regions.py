"""The text of each prompt region, as the model reads it.

`Regions` holds one run's material (the question and the notes recalled for
it, each a field; tools, loaded objects or their lines, typed
(`runtime.prompt.shown`); working state, recent turns, latest observation)
and renders it region by region; `runtime.prompt.build.build_prompt` then
cuts each to its budget. The answer check reads the same fields
(`Regions.shown`), never the rendered text.
The system text depends only on the tool catalogue and the answer style, so
it is byte-identical every turn and a local model serves it from its KV cache.

The reply format is taught by worked examples of a call and of an answer,
with concrete values, never by templates with placeholders: a small model
copies a placeholder such as "<the answer>" into its reply. The examples are
about an invented planet (Zorvex), a domain no task can be mistaken for, and
their own texts are listed in `EXAMPLE_TEXTS`, so an answer that repeats them
is refused (`runtime.reading.answers`); a search for their words
(`EXAMPLE_WORDS`) that the task does not say loses them (`unexampled`): no
example word reaches a search.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any

from loci.memory.context.store import ContextObject
from loci.memory.text.words import JOINERS, RUN
from loci.runtime.host.host import ToolSpec
from loci.runtime.prompt.shown import Lines
from loci.runtime.prompt.topic import without_documents
from loci.runtime.prompt.window import Window

__all__ = [
    "EXAMPLE_TEXTS",
    "EXAMPLE_WORDS",
    "LISTED_OBJECTS",
    "PLAIN",
    "RULES",
    "AnswerStyle",
    "Observation",
    "Regions",
    "system_text",
    "unexampled",
    "with_notes",
]

LISTED_OBJECTS = 20

# The examples are about an invented planet, a domain no task can be mistaken for; the answer check knows them.
EXAMPLE_STATE = "Line 12 of doc:1 names the moons of Zorvex."
EXAMPLE_ANSWER = "Zorvex has three moons."
EXAMPLE_QUERY = "Zorvex moons"
EXAMPLE_TEXTS = (EXAMPLE_STATE, EXAMPLE_ANSWER, "The moons of Zorvex should be in the Planets section.")
# The examples' own subject: a search for these words, when the task does not say them, searches the prompt.
EXAMPLE_WORDS = frozenset({"zorvex", "moon", "moons", "planet", "planets"})

INTRO = "You are Loci. You complete a task from documents, and use tools to find what you cannot see.\n"
PLAIN = (
    "You are Loci. You answer the task from the documents shown with it, in plain words.\n"
    "Documents are shown as `N| text`, N being the line number. Answer from the documents only."
)
RULES = """Rules:
- `state` holds your working notes: rewrite it each turn with what still matters.
- Answer from the documents only. Documents are shown as `N| text`, N being the line number.
- Never repeat a call: a result you already have is stored as obs:N.
- A large result is stored as obs:N and shown in part; read on with context_read."""


class AnswerStyle(enum.Enum):
    """How the model gives its answer: inside the JSON action, or as free text after deciding to answer."""

    JSON = "json"
    TEXT = "text"


def system_text(tools: list[ToolSpec], style: AnswerStyle = AnswerStyle.JSON) -> str:
    """Role, a worked example of a call and of an answer, the rules and the catalogue (none without tools)."""
    if not tools and style is AnswerStyle.TEXT:
        return PLAIN
    call = _example_call(tools)
    lines = [INTRO, "Reply each turn with one JSON object."]
    if call:
        lines.append(f"To call a tool, for example:\n{call}")
    evidence = [{"id": "doc:1", "start": 12, "end": 12}]
    if style is AnswerStyle.JSON:
        example = {"state": EXAMPLE_STATE, "answer": EXAMPLE_ANSWER, "evidence": evidence}
        lines.append(f"To answer, for example:\n{json.dumps(example)}")
    else:
        decision = json.dumps({"state": EXAMPLE_STATE, "answer": True})
        lines.append(
            f"To answer, reply {decision}; you are then asked for the answer in plain words, such as: {EXAMPLE_ANSWER}"
        )
    lines.append(RULES)
    lines.append("Tools:\n" + "\n".join(_tool_line(tool) for tool in tools))
    return "\n".join(lines)


def unexampled(query: str, task: str) -> str:
    """`query` without the examples' words the task does not say (a small model copies the example's query);
    the task's own words when nothing else is left."""
    asked = {word.casefold() for word in _task_words(task)}
    kept = [w for w in query.split() if w.strip("\"'.,?!()").casefold() not in EXAMPLE_WORDS - asked]
    if kept:
        return " ".join(kept)
    return " ".join(w for w in _task_words(task) if w.casefold() not in EXAMPLE_WORDS) or query


def _example_call(tools: list[ToolSpec]) -> str:
    names = {tool.name for tool in tools}
    if "context_search" in names:
        arguments: dict[str, Any] = {"query": EXAMPLE_QUERY}
        name = "context_search"
    elif tools:
        name, arguments = tools[0].name, {}
    else:
        return ""
    return json.dumps({"state": EXAMPLE_TEXTS[2], "tool": name, "arguments": arguments})


@dataclass
class Observation:
    """The latest tool result: its head (and the document lines in it, read once as it comes in), and where the
    whole of it is stored."""

    id: str
    tool: str
    head: str
    tokens: int
    cut: bool
    is_error: bool
    lines: Lines = field(init=False)

    def __post_init__(self) -> None:
        self.lines = Lines.parse(self.head)  # a result crossed MCP as text: its rows are read where it enters

    def render(self) -> str:
        kind = "Error from" if self.is_error else "Result of"
        text = f"{kind} {self.tool} ({self.id}, {self.tokens} tokens):\n{self.head}"
        if self.cut:
            next_line = self.head.count("\n") + 1
            text += (
                f'\n[cut: this is the head of {self.id}; read on with context_read(id="{self.id}", start={next_line})]'
            )
        return text


def with_notes(question: str, notes: str) -> str:
    """The task as the model reads it: the question, and under it the notes recalled for it."""
    return f"{question}\n\n{notes}" if notes else question


@dataclass
class Regions:
    """One run's material, each part a field: the question as asked (`given`) and the notes recalled for it
    (`notes`, quoted) apart, so no later stage takes them back out of the text they are rendered into."""

    given: str  # the task as it was asked, without the notes recalled for it
    tools: list[ToolSpec]
    objects: list[ContextObject]
    window: Window
    state: str = ""
    observation: Observation | None = None
    error: str | None = None
    documents: Lines = Lines()  # the documents whole, when they fit (runtime.prompt.fit), or the lines a look found
    style: AnswerStyle = AnswerStyle.JSON
    reading: bool = False  # one answer from the documents shown (whole, or the lines found); no state shown
    looked: bool = False  # the documents are the lines the runtime's look found, not the documents whole
    notes: str = ""  # the notes recalled from memory for the task, in their quoted block (memory.graph.quoted)

    @property
    def task(self) -> str:
        """The task as the model reads it: the question with the recalled notes under it."""
        return with_notes(self.given, self.notes)

    @property
    def question(self) -> str:
        """What is asked, without the notes recalled for it: what a search looks for, what an answer answers."""
        return self.given.strip()

    @property
    def asked(self) -> str:
        """The question as lines are ranked for it: without the words that name its documents
        (`runtime.prompt.topic`: "zipfile" in a question asked of `zipfile.py` says which file, not which line)."""
        return without_documents(self.question, [obj.source or obj.name for obj in self.objects])

    @property
    def asked_task(self) -> str:
        """The task with its question as lines are ranked for it (`asked`), its recalled notes kept."""
        return with_notes(self.asked, self.notes)

    def material(self, *, task: bool = True) -> str:
        """What the model was shown to answer from, as text: the task (unless `task` is False), the documents,
        the window and the latest result."""
        observation = self.observation.head if self.observation else ""
        return "\n".join([self.task if task else "", self.documents.text, self.window.region(), observation])

    def shown(self) -> Lines:
        """The lines the model was shown to answer from, typed: the documents, the window (the run's own turns)
        and the latest result."""
        observation = self.observation.lines if self.observation else ""
        return Lines.of("", self.documents, self.window.region(), observation)

    def render(
        self,
        *,
        allow_tools: bool = True,
        allow_answer: bool = True,
        forced: str | None = None,
        instruction: str | None = None,
    ) -> dict[str, str]:
        return {
            "system": system_text(self.tools, self.style),
            "task": self._task(),
            "state": "" if self.reading else f"State (your working notes):\n{self.state or '(empty)'}",
            "window": self.window.region(),
            "observation": self._observation(allow_tools, allow_answer, forced, instruction),
        }

    def _task(self) -> str:
        text = f"Task: {self.task}"
        if self.reading:  # the notes recalled for the task are material too, shown beside the lines
            heading = "Lines found in the documents" if self.looked else "Documents"
            return f"{heading}:\n{self.documents.text}" + (f"\n\n{self.notes}" if self.notes else "")
        if self.documents:
            return f"{text}\nDocuments:\n{self.documents.text}"
        if self.objects:
            shown = self.objects[-LISTED_OBJECTS:]
            listing = "\n".join(f"- {o.id} {o.name} ({o.lines} lines, {o.tokens} tokens)" for o in shown)
            more = len(self.objects) - len(shown)
            text += f"\nDocuments (read them with the tools):\n{listing}" + (
                f"\n(and {more} more: context_list shows all)" if more else ""
            )
        return text

    def _observation(self, allow_tools: bool, allow_answer: bool, forced: str | None, instruction: str | None) -> str:
        parts = [self.observation.render()] if self.observation else []
        if self.error:
            parts.append(f"Your last reply was rejected: {self.error}. Reply again.")
        if instruction:
            parts.append(instruction)
        elif forced:
            parts.append(f"Call {forced} now.")
        elif not allow_tools:
            parts.append("This is your last turn: answer the task now.")
        elif not allow_answer:
            parts.append("Look at the documents with a tool first.")
        elif self.documents:
            parts.append("Answer if the documents above tell you; otherwise call a tool.")
        else:
            parts.append("Call a tool, or answer if you have found what the task asks.")
        return "\n\n".join(parts)


def _tool_line(tool: ToolSpec) -> str:
    props = tool.input_schema.get("properties", {})
    required = set(tool.input_schema.get("required", []))
    args = ", ".join(name + ("" if name in required else "?") for name in props)
    summary = (tool.description or "").strip().split("\n\n")[0].replace("\n", " ")
    return f"- {tool.name}({args}): {summary}"


def _task_words(task: str) -> list[str]:
    """The task's words as a query writes them: identifiers whole (`os.path`, `--sort-keys` as `sort-keys`), from
    their first letter or digit (the one splitter's runs, `memory.text.words.RUN`)."""
    return [word for run in RUN.findall(task) if (word := run.lstrip(JOINERS))]
