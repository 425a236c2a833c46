"""Planning a run: how it shows its documents, which tools the model reads, and whether it reads.

Before the first turn, `Planner.plan` measures the documents against the
model's window (whole when they fit beside the system text the run would
show, else navigation: `runtime.prompt.fit`), picks the catalogue by model
size and mode (`runtime.prompt.catalogue`), and decides whether the run
reads (`runtime.loop.state`): a small model shown its documents whole (at
most `READ_WHOLE_TOKENS` of them) gets no tools and answers from them; one
that must navigate reads the runtime's look and answers from it, under the
short system prompt of a run without tools, with the room of the
observation and half the window lent to the lines found. What it decides is
the run's own `RunState`; the long-lived `Agent` keeps none of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from loci.memory.context.store import ContextObject, ContextStore
from loci.runtime.host.host import McpHost
from loci.runtime.loop.decide import Decider
from loci.runtime.loop.records import RunConfig, RunPlan
from loci.runtime.loop.state import RunState, reading_sizes
from loci.runtime.models.base import Model
from loci.runtime.models.ledger import Ledger
from loci.runtime.prompt.build import RegionSizes
from loci.runtime.prompt.catalogue import choose_tools
from loci.runtime.prompt.fit import READ_WHOLE_TOKENS, WHOLE, plan_documents
from loci.runtime.prompt.regions import Regions, system_text, with_notes
from loci.runtime.prompt.window import Window

__all__ = ["TASK_FRAME_TOKENS", "Planner"]

TASK_FRAME_TOKENS = 24  # "Task:", "Documents:" and the region's separators


@dataclass(frozen=True)
class Planner:
    """What every run of one agent is planned with."""

    model: Model
    contexts: ContextStore
    host: McpHost  # its tools are read at each plan: servers may be added after the agent is built
    config: RunConfig
    sizes: RegionSizes
    window: Window
    ledger: Ledger

    async def plan(
        self, task: str, objects: list[ContextObject], state: str, *, notes: str = "", reads: bool
    ) -> RunState:
        """The run's plan, sizes, regions and decider for `task` and the `notes` recalled for it;
        `reads=False` keeps the tool loop whatever the model."""
        count, limits, style = self.model.count_tokens, self.config.limits, self.config.answer_style
        pinned = self.config.tools is not None
        whole = choose_tools(self.host.tools, parameters=self.model.parameters, mode=WHOLE, pinned=pinned)
        # Shown whole, a small model's run reads them (no tools): the system text is the short one.
        whole_reads = reads and not whole.tools
        system = count(system_text([] if whole_reads else whole.tools, style))
        task_tokens = count(with_notes(task, notes)) + TASK_FRAME_TOKENS
        most = READ_WHOLE_TOKENS if whole_reads else None
        shown = await plan_documents(self.contexts, objects, self.sizes, task_tokens, count, system, most)
        catalogue = whole
        if shown.mode != WHOLE:
            catalogue = choose_tools(self.host.tools, parameters=self.model.parameters, mode=shown.mode, pinned=pinned)
        looks = reads and catalogue.first_look and limits.max_turns > 1
        # Shown whole, a small model answers under the plain prompt (a task, then the documents): asked as a
        # reading run asks (the lines, then the question), the bundled model lost the harbor file's fee.
        reads = looks
        tools = [] if reads else catalogue.tools
        reason = catalogue.reason
        if looks:
            reason = reason.replace("first search by the runtime", "retrieve then read")
        plan = RunPlan(shown.mode, shown.describe(), [t.name for t in tools], reason)
        sizes = reading_sizes(shown.sizes) if looks else shown.sizes
        regions = Regions(
            task,
            tools,
            objects,
            self.window,
            state=state,
            documents=shown.lines,
            style=style,
            reading=reads,
            looked=looks,
            notes=notes,
        )
        ids = [obj.id for obj in objects]
        decider = Decider(self.model, self.contexts, sizes, limits, self.ledger, style, ids)
        return RunState(plan, sizes, regions, decider, reads=reads, looks=looks)
