"""The data `loci bench recall` and `loci bench evolution --data` measure on: LoCoMo JSON or BEAM chats.

Both become `Sample`s: a conversation read by the same reader `loci memory
import` uses (memory/imports/locomo.py, memory/imports/beam.py) and its
questions, each with its evidence refs and category.

- LoCoMo: a JSON file, a list of samples whose `qa` holds `{question,
  evidence: [dia_id, ...], category}`; category 5 (adversarial) is left out,
  as is usual.
- BEAM: a folder holding `chat.json` and `probing_questions/probing_questions.json`,
  or a folder of such folders (`chats/100K`), read in numeric order. The
  probing questions are grouped by kind (the category); a question's evidence
  is its `source_chat_ids` (message ids: a list, or a dict of lists such as
  `{original_info, updated_info}`), or failing those the `chat_id: N` its
  `conversation_references` name. A question with no evidence (abstention)
  is left out. `newest` is the evidence a question about a changed fact wants
  first: `updated_info` where the question names it, else, for the
  kinds that set statements against each other (`NEWEST_KINDS`), the latest
  message of its evidence.

A sample that cannot be read is a `Failed` (its name and the reason) beside
the others, so one bad conversation costs only itself; a path that holds no
data at all is a `UsageError`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loci.memory.errors import LociError, UsageError
from loci.memory.imports.beam import read_beam
from loci.memory.imports.locomo import turns_of
from loci.memory.imports.records import Conversation

__all__ = ["NEWEST_KINDS", "Failed", "Question", "Sample", "load_data"]

NEWEST_KINDS = ("knowledge_update", "contradiction_resolution")
_CHAT_ID = re.compile(r"chat_id\s*:?\s*(\d+)")


@dataclass(frozen=True)
class Question:
    text: str
    category: str
    evidence: frozenset[str]
    newest: frozenset[str] = frozenset()


@dataclass
class Sample:
    name: str
    conversation: Conversation
    questions: list[Question] = field(default_factory=list)


@dataclass(frozen=True)
class Failed:
    name: str
    reason: str


def load_data(path: Path) -> tuple[list[Sample], list[Failed]]:
    """The samples at `path` (a LoCoMo file or a BEAM folder), and those that could not be read."""
    path = Path(path)
    if path.is_dir():
        return _beam(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise UsageError(f"no benchmark file at {path}") from exc
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path} is not a readable JSON file: {exc}") from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{path} is not a readable JSON file: {exc}") from exc
    if isinstance(data, dict) and "conversation" in data:
        data = [data]
    if not isinstance(data, list) or not data:
        raise UsageError(f"{path} is not in the LoCoMo format (a list of samples with a conversation each)")
    return _locomo(data, str(path))


def _locomo(data: list[Any], source: str) -> tuple[list[Sample], list[Failed]]:
    samples, failed = [], []
    for index, sample in enumerate(data, start=1):
        name = str(sample.get("sample_id") or index) if isinstance(sample, dict) else str(index)
        try:
            if not isinstance(sample, dict) or "conversation" not in sample:
                raise UsageError("not a LoCoMo sample (an object with a conversation)")
            turns = turns_of(sample, source, f"sample {index}")
            key = f"locomo:{sample.get('sample_id') or f'{Path(source).stem}:{index}'}"
            conversation = Conversation(key=key, title=name, turns=turns)
            samples.append(Sample(name, conversation, _locomo_questions(sample, {t.ref for t in turns})))
        except LociError as exc:
            failed.append(Failed(name, str(exc)))
    return samples, failed


def _locomo_questions(sample: dict[str, Any], known: set[str]) -> list[Question]:
    found = []
    for qa in sample.get("qa") or []:
        if not isinstance(qa, dict):
            continue
        category = str(qa.get("category", ""))
        evidence = frozenset(str(e) for e in qa.get("evidence") or []) & known
        text = str(qa.get("question", ""))
        if category != "5" and evidence and text.strip():
            found.append(Question(text, category, evidence))
    return found


def _beam(path: Path) -> tuple[list[Sample], list[Failed]]:
    if (path / "chat.json").is_file():
        chats = [path]
    else:
        chats = sorted((p for p in path.iterdir() if (p / "chat.json").is_file()), key=_numeric)
    if not chats:
        raise UsageError(f"{path} holds no BEAM chat (a chat.json, or folders that hold one)")
    samples, failed = [], []
    for chat in chats:
        try:
            source = chat / "chat.json"
            [conversation] = read_beam(source.read_text(encoding="utf-8"), str(source))
            known = {t.ref for t in conversation.turns}
            samples.append(Sample(chat.name, conversation, _beam_questions(chat, known)))
        except (LociError, OSError, ValueError) as exc:
            failed.append(Failed(chat.name, str(exc)))
    return samples, failed


def _numeric(path: Path) -> tuple[int, str]:
    return (int(path.name), "") if path.name.isdigit() else (1 << 62, path.name)


def _beam_questions(chat: Path, known: set[str]) -> list[Question]:
    source = chat / "probing_questions" / "probing_questions.json"
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise UsageError(f"{source}: no probing questions") from exc
    if not isinstance(data, dict):
        raise UsageError(f"{source}: the probing questions are an object of lists, one per kind")
    found = []
    for kind, questions in data.items():
        for probe in questions if isinstance(questions, list) else []:
            if not isinstance(probe, dict) or not str(probe.get("question") or "").strip():
                continue
            ids = probe.get("source_chat_ids")
            groups = ids if isinstance(ids, dict) else {"": ids if isinstance(ids, list) else _referenced(probe)}
            evidence = frozenset(str(i) for group in groups.values() for i in _list(group)) & known
            if not evidence:
                continue
            newest = frozenset(str(i) for i in _list(groups.get("updated_info"))) & known
            if not newest and kind in NEWEST_KINDS:
                newest = frozenset([max(evidence, key=_as_number)])
            found.append(Question(str(probe["question"]), str(kind), evidence, newest))
    return found


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [] if value is None else [value]


def _referenced(probe: dict[str, Any]) -> list[int]:
    references = probe.get("conversation_references") or []
    return [int(m) for ref in _list(references) for m in _CHAT_ID.findall(str(ref))]


def _as_number(ref: str) -> tuple[int, str]:
    return (int(ref), ref) if ref.isdigit() else (-1, ref)
