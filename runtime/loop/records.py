"""What one run is given and what it gives back.

A run is configured by one `RunConfig`, passed whole from `open_session`
through `Recursion` to every `Agent`, so a setting added here reaches every
level without a new keyword at each. Among its settings:

    limits        caps on one run: turns, retries, tokens, seconds   (`Limits`)
    sizes         the token size of each prompt region               (`runtime.prompt.build.RegionSizes`)
    note_mode     who writes the notes that replace pruned turns     (`runtime.prompt.notes.NoteMode`)
    answer_style  the answer inside the JSON action, or as text      (`runtime.prompt.regions.AnswerStyle`)
    tools         the built-in tool sets; None picks the catalogue   (`runtime.prompt.catalogue`)

What a run spends is kept apart, in a `runtime.models.ledger.Ledger` shared down
the tree of runs. A run gives back a `RunResult`: the answer, its status and
evidence, and one `TurnTrace` per turn (the action, with its tool and
arguments, and what the turn cost), and the `RunPlan` it made before its
first turn (documents whole or navigated, the tools the model reads), which
`--trace`, the benchmarks and the layers that wrap a run read.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from loci.memory.errors import UsageError
from loci.runtime.loop.action import Action
from loci.runtime.prompt.build import RegionSizes
from loci.runtime.prompt.notes import NoteMode
from loci.runtime.prompt.regions import AnswerStyle
from loci.runtime.reading.evidence import Cited, evidence_json

__all__ = [
    "BUILT_IN",
    "DEFAULT_MAX_DEPTH",
    "Limits",
    "RunConfig",
    "RunPlan",
    "RunResult",
    "TurnTrace",
]

# The built-in tool sets; a small model reads a shorter catalogue with fewer.
BUILT_IN = ("context", "memory", "history")
DEFAULT_MAX_DEPTH = 2


@dataclass(frozen=True)
class Limits:
    """Caps on what one run may do. `None` means no cap."""

    max_turns: int = 12
    max_retries: int = 2
    max_tokens: int | None = None
    max_seconds: float | None = None

    def __post_init__(self) -> None:
        if self.max_turns < 1:
            raise UsageError(f"--max-turns must be at least 1 (got {self.max_turns})")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise UsageError(f"--max-tokens must be at least 1 (got {self.max_tokens})")
        if self.max_seconds is not None and not self.max_seconds > 0:  # `not >` also refuses NaN
            raise UsageError(f"--max-seconds must be more than 0 (got {self.max_seconds:g})")


@dataclass(frozen=True)
class RunConfig:
    """Everything a session's runs are configured with; `sizes=None` splits the model's own window."""

    limits: Limits = field(default_factory=Limits)
    sizes: RegionSizes | None = None
    note_mode: NoteMode = NoteMode.BACKGROUND
    answer_style: AnswerStyle = AnswerStyle.TEXT
    max_depth: int = DEFAULT_MAX_DEPTH
    concurrency: int = 4
    tools: tuple[str, ...] | None = None  # None: every built-in set, the catalogue picked by model size and task
    mcp_config: str | Path | None = None

    @property
    def tool_sets(self) -> tuple[str, ...]:
        return BUILT_IN if self.tools is None else self.tools

    def sizes_for(self, context_window: int) -> RegionSizes:
        return self.sizes or RegionSizes.for_window(context_window)

    def for_child(self) -> RunConfig:
        """A child run's config: the same turn caps; its tokens and time come from the parent's ledger.
        A child's window ends with the child, so a note refined after it would never be read: it keeps extracts."""
        notes = NoteMode.EXTRACT if self.note_mode is NoteMode.BACKGROUND else self.note_mode
        return replace(self, limits=replace(self.limits, max_tokens=None, max_seconds=None), note_mode=notes)


@dataclass(frozen=True)
class RunPlan:
    """How a run was set up before its first turn: how documents are shown, which tools the model reads."""

    mode: str
    documents: str
    tools: list[str]
    tools_reason: str

    def describe(self) -> str:
        return f"{self.documents}; tools={','.join(self.tools)} ({self.tools_reason})"


@dataclass
class TurnTrace:
    """What one turn did, for `--trace` and the benchmarks."""

    turn: int
    action: Action
    prompt_tokens: dict[str, int]
    evaluated_tokens: int
    reused_tokens: int
    completion_tokens: int
    result_tokens: int = 0
    observation_id: str | None = None
    error: bool = False  # the tool's result was an error
    refs: tuple[int, ...] = ()  # the memory ids (mem:N) the head of the tool's result names
    retries: int = 0
    seconds: float = 0.0
    state_cut: bool = False
    repeated: str | None = None  # the id of the earlier result when this call repeated one (not dispatched)
    plan: RunPlan | None = None  # on the first turn only


@dataclass
class RunResult:
    """A run's outcome: `status` is "done", or "partial" with a `reason`."""

    answer: str
    status: str
    evidence: list[Cited] = field(default_factory=list)
    reason: str | None = None
    turns: list[TurnTrace] = field(default_factory=list)
    tokens: int = 0
    plan: RunPlan | None = None
    sizes: RegionSizes | None = None  # the region sizes the run used (showing documents whole re-splits them)

    @property
    def tool_calls(self) -> int:
        return sum(1 for t in self.turns if not t.action.is_answer)

    def as_json(self) -> dict[str, Any]:
        """The result as `loci run --json` and `run_task` give it: the cited text with each span."""
        return {
            "answer": self.answer,
            "status": self.status,
            "reason": self.reason,
            "evidence": evidence_json(self.evidence, text=True),
            "turns": len(self.turns),
            "tool_calls": self.tool_calls,
            "tokens": self.tokens,
            "mode": self.plan.mode if self.plan else None,
            "tools": self.plan.tools if self.plan else [],
        }
