"""The BEAM set of `loci bench qa --beam DIR`: one stated value asked back from a long user/assistant chat.

BEAM's development chats (`DIR/N/chat.json`, with
`DIR/N/probing_questions/probing_questions.json`; fetched into `.cache/beam`,
never part of the repository) are long conversations between a user and an
assistant; a user's message ends with BEAM's own mark of its place,
`->-> 1,26` (batch, turn), which no user would have written and which a
reader would take for a value: it is left out. A question whose rubric is one line, "LLM response should state:
X", with X a few words ("12 miles away", "March 29"), asks for one value the
user stated. Each chat is written out as a user would have it, one message a
line (`user: ...`, `assistant: ...`), and each such question is then answered
on that file by the arms of the real-file set (`bench.qa.files.run_files`):
Loci on `loci run Q --file F`, plain BM25 over the lines, and the file's
head. An answer is right when it contains X, as whole words after LoCoMo's
normalising.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from loci.bench.qa.files_data import FileQuestion
from loci.memory.errors import UsageError

__all__ = ["MAX_WORDS", "beam_set"]

MAX_WORDS = 4
_STATES = re.compile(r"(?i)^llm response should state:\s*(.+)$")
_PLACE = re.compile(r"\s*->->\s*[\w/]+,\s*[\w/]+\s*$")  # BEAM's mark of a message's batch and turn


def beam_set(root: Path, chats: list[int], out: Path) -> list[FileQuestion]:
    """The one-value questions of the chats numbered `chats` under `root`, each chat written to `out`."""
    questions = []
    for number in chats:
        folder = Path(root) / str(number)
        try:
            chat = json.loads((folder / "chat.json").read_text(encoding="utf-8"))
            probes = json.loads((folder / "probing_questions" / "probing_questions.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"{folder} is not a BEAM chat (chat.json and probing_questions): {exc}") from exc
        path = out / f"beam-chat-{number}.txt"
        path.write_text("\n".join(_lines(chat)) + "\n", encoding="utf-8")
        for items in probes.values():
            for item in items:
                value = _one_value(item.get("rubric") or [])
                if value:
                    questions.append(FileQuestion(path, str(item["question"]), value))
    return questions


def _lines(chat: list[dict]) -> list[str]:
    """The chat's messages in order, one a line, as `role: text`, without BEAM's place marks."""
    lines = []
    for batch in chat:
        for turn in batch.get("turns") or []:
            for message in turn:
                text = " ".join(_PLACE.sub("", str(message.get("content", ""))).split())
                lines.append(f"{message.get('role', 'user')}: {text}")
    return lines


def _one_value(rubric: list[str]) -> str | None:
    """X when the rubric is one line "... should state: X" and X is a few words (not "contradictory")."""
    if len(rubric) != 1 or not (match := _STATES.match(rubric[0].strip())):
        return None
    value = match.group(1).strip().rstrip(".")
    return value if len(value.split()) <= MAX_WORDS and "contradictory" not in value else None
