"""One run's state, and reading what a search found: retrieve-then-read for a small model.

`RunState` is what one run decides before its first turn and keeps until its
answer (the plan, its region sizes, the regions, the decider, the repeat
guard, the lines shown), so the long-lived `Agent` holds none of it.

A model under a billion parameters does not use a tool loop well: it copies
the prompt's example query, repeats its own call, and never reads the hit it
was shown. So when it must navigate documents, its run `reads`
(`runtime.prompt.catalogue` decides): the runtime's first look ranks every
line of the documents by the task's content words, as plain BM25 over lines
would (`runtime.reading.look`), and shows the best `LOOK_HITS` lines whole and
numbered, whatever room of the prompt they take, then their neighbours up
to `LOOK_TOKENS` in all, as the run's documents, under the short system
prompt of a run without tools; the model answers from them. That is plain retrieval plus the same
model: the floor the run stands on, never less. A larger model keeps the
full tool loop and makes its own first look.

`record_turn` stores each tool call's result and turn (`obs:N`, `turn:N`) and
shows the result's head as the latest observation.

A repeated identical search, in the tool loop, is answered by the next best
hit not shown yet, read whole (`next_hit`), instead of by a refusal that
leaves the model where it was (`runtime.loop.guard` decides it is a repeat).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from loci.memory.context.fulltext import content_words
from loci.memory.context.store import ContextStore
from loci.memory.graph.records import node_refs
from loci.runtime.host.host import ToolResult
from loci.runtime.loop.action import Action
from loci.runtime.loop.decide import Decider
from loci.runtime.loop.guard import Earlier, RepeatGuard
from loci.runtime.loop.records import RunPlan, TurnTrace
from loci.runtime.prompt.build import RegionSizes, fit
from loci.runtime.prompt.catalogue import FIRST_LOOK
from loci.runtime.prompt.regions import Observation, Regions
from loci.runtime.prompt.shown import Lines
from loci.runtime.prompt.window import TurnLine, Window
from loci.runtime.reading.look import Looked, best_lines, render_lines, show_lines

__all__ = ["LOOK_HITS", "RunState", "first_look", "look_turn", "next_hit", "reading_sizes", "record_turn"]

LOOK_HITS = 8
# The neighbours shown stop here (the best lines themselves may take the whole room): each token shown is one a
# CPU evaluates before the answer, and on the real-file set neighbours past 200 tokens made no answer right.
LOOK_TOKENS = 200
KEPT_OBSERVATION = 64
LOOK_FRAME_TOKENS = 32  # the region's header and the question below the lines
REFS_CHARS = 16_000  # a result's memory ids are read from its head (about 4,000 tokens)


@dataclass
class RunState:
    """What one run works with, from its plan to its answer."""

    plan: RunPlan
    sizes: RegionSizes
    regions: Regions
    decider: Decider
    reads: bool = False  # the model answers from the documents shown, in one call, without tools
    looks: bool = False  # retrieve-then-read: the runtime's look shows the lines the run reads
    first_look: bool = False  # the runtime makes the first search (a small model in the tool loop)
    guard: RepeatGuard = field(default_factory=RepeatGuard)
    looked: Looked = field(default_factory=Looked)


def reading_sizes(sizes: RegionSizes) -> RegionSizes:
    """A reading run's sizes: the lines shown go in the task region, which takes most of the observation's
    room and half the window's (a reading run has one look and no tool results)."""
    lent = sizes.observation - KEPT_OBSERVATION + sizes.window // 2
    return replace(sizes, task=sizes.task + lent, observation=KEPT_OBSERVATION, window=sizes.window - sizes.window // 2)


async def first_look(
    contexts: ContextStore, task: str, ids: list[str], budget: int, count: Callable[[str], int], looked: Looked
) -> tuple[Action, Lines]:
    """The runtime's search for the task's content words, and the best lines it found, shown whole."""
    lines = await best_lines(contexts, task, ids, k=LOOK_HITS)
    rows, shown = await show_lines(contexts, lines, budget, count, fill=LOOK_TOKENS)
    looked.add(shown)
    query = " ".join(content_words(task))
    action = Action(state=f"Reading the lines that hold: {query}", tool=FIRST_LOOK, arguments={"query": query})
    return action, rows or Lines.of("(no line of the documents holds the task's words)")


async def look_turn(contexts: ContextStore, run: RunState, task: str, count: Callable[[str], int]) -> TurnTrace:
    """Turn 1 of a reading run: the runtime's look, stored as its observation and shown as the run's documents."""
    budget = run.sizes.task - count(task) - LOOK_FRAME_TOKENS
    ids = [obj.id for obj in run.regions.objects]
    # The look searches by the question (without the words naming its documents, `Regions.asked`): the notes
    # recalled under it are shown with it, not searched for.
    action, lines = await first_look(contexts, run.regions.asked, ids, budget, count, run.looked)
    trace = TurnTrace(1, action, {}, 0, 0, 0, plan=run.plan)
    obj = await contexts.add_text("obs", f"turn 1 {action.tool}", lines.text, {"error": False})
    trace.observation_id, trace.result_tokens = obj.id, obj.tokens
    run.regions.documents = lines
    return trace


async def next_hit(
    contexts: ContextStore, action: Action, earlier: Earlier, looked: Looked, budget: int, count: Callable[[str], int]
) -> ToolResult | None:
    """For a repeated search: the best hit not shown yet, read whole with its neighbours; None when none is left."""
    query = str(action.arguments.get("query") or "")
    ids = action.arguments.get("ids") or None
    if action.tool != FIRST_LOOK or not query or action.arguments.get("regex"):
        return None
    fresh = looked.fresh(await best_lines(contexts, query, ids, k=LOOK_HITS * 2))[:1]
    if not fresh:
        return None
    text, shown = await render_lines(contexts, fresh, budget, count, around=2)
    looked.add(shown)
    return ToolResult(
        f"You searched this at turn {earlier.turn} ({earlier.observation_id}). The next best hit, read whole:\n{text}",
        False,
    )


async def record_turn(
    contexts: ContextStore, window: Window, run: RunState, trace: TurnTrace, result: ToolResult, count: Callable
) -> None:
    """Store a tool call's observation and its turn as context objects; show the head of a large result."""
    tool, error = trace.action.tool or "", result.is_error
    obj = await contexts.add_text("obs", f"turn {trace.turn} {tool}", result.text, {"error": error})
    trace.observation_id, trace.result_tokens = obj.id, obj.tokens  # counted once, as it was stored
    trace.error, trace.refs = error, tuple(node_refs(result.text[:REFS_CHARS]))
    head, cut = fit(result.text, run.sizes.observation - 60, count)
    run.regions.observation = Observation(obj.id, tool, head, trace.result_tokens, cut, error)
    line = TurnLine(trace.turn, tool, trace.action.arguments, obj.id, trace.result_tokens, error)
    turn_obj = await contexts.add_text(
        "turn", f"turn {trace.turn}", line.render(preview=result.text), {"observation": obj.id}
    )
    line.turn_id = turn_obj.id
    window.append(line)
