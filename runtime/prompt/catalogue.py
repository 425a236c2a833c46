"""Which tools the model reads: the default catalogue, by model size and task.

Every tool description is prompt the model must read, every turn; a 135M
model reads a 700-token catalogue worse than a short one, and more tools
mean more wrong choices. So unless the user named the tool sets, a run
picks its catalogue: a small model (fewer than `SMALL_PARAMETERS`
parameters; a backend that does not know the count is taken as large) gets
what its task needs: no tools when the documents are shown whole (it
answers from them), and search, read and outline when it must navigate,
with the first search made for it from the task's words (`first_look`: a
small model's own first query is mostly a copy of the prompt's example); a
larger model gets every tool the host serves and makes its own first look. External tools (an MCP config) are
always kept (their names are namespaced `server__tool`): the user asked for them. `--trace` prints the choice and why.
"""

from __future__ import annotations

from dataclasses import dataclass

from loci.runtime.host.host import ToolSpec
from loci.runtime.prompt.fit import WHOLE

__all__ = ["FIRST_LOOK", "SMALL_PARAMETERS", "Catalogue", "choose_tools"]

SMALL_PARAMETERS = 1_000_000_000
FIRST_LOOK = "context_search"
SMALL_WHOLE: tuple[str, ...] = ()
SMALL_NAVIGATE = ("context_search", "context_read", "context_outline")


@dataclass(frozen=True)
class Catalogue:
    tools: list[ToolSpec]
    reason: str
    first_look: bool = False  # the runtime makes the first search, from the task's words


def choose_tools(tools: list[ToolSpec], *, parameters: int | None, mode: str, pinned: bool) -> Catalogue:
    """The tools a run shows: all when `pinned` (the user chose) or the model is large; a few for a small one."""
    if pinned:
        return Catalogue(tools, "the tool sets named by the user")
    size = f"{parameters / 1e6:,.0f}M parameters" if parameters else "parameters unknown"
    if parameters is None or parameters >= SMALL_PARAMETERS:
        return Catalogue(tools, f"every tool: {size}")
    wanted = SMALL_WHOLE if mode == WHOLE else SMALL_NAVIGATE
    kept = [tool for tool in tools if tool.name in wanted or "__" in tool.name]
    first_look = mode != WHOLE and any(tool.name == FIRST_LOOK for tool in kept)
    return Catalogue(
        kept, f"small model ({size}), {mode} mode" + (", first search by the runtime" if first_look else ""), first_look
    )
