"""The prompt: fixed regions, in a fixed order, each within its token budget.

    system       role, rules, tool catalogue      identical every turn
    task         the task, loaded objects          identical every turn of a run
    window       the most recent turns verbatim    at most W tokens, grows at its end
    state        the working state                 at most S tokens, rewritten each turn
    observation  the latest tool result            at most O tokens, new each turn

The order puts what changes least first, so a local model keeps the longest
possible prefix in its KV cache and evaluates only the tail: the window only
gains a line at its end between folds (and a fold changes it only from its
new note on), while the state may be rewritten every turn, so the state comes
after the window, where rewriting it costs only itself and the observation. Every region is
cut to its budget before the prompt is assembled, so the prompt can never
exceed the model's window, however many turns the run has had.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from loci.memory.errors import UsageError

__all__ = ["TEMPLATE_OVERHEAD", "Prompt", "RegionSizes", "build_prompt", "fit"]

TEMPLATE_OVERHEAD = 64  # chat-template tokens and region separators
MAX_TOKEN_CHARS = 16

REGIONS = ("system", "task", "window", "state", "observation")


@dataclass(frozen=True)
class RegionSizes:
    """The token size of each prompt region, split from the model's context window."""

    context_window: int
    reply: int
    system: int
    task: int
    state: int
    window: int
    observation: int

    @classmethod
    def for_window(cls, context_window: int, **overrides: int) -> RegionSizes:
        """Split a context window: a quarter for the window, a fifth for the observation, and so on."""
        reply = overrides.get("reply", max(256, context_window // 8))
        usable = context_window - reply - TEMPLATE_OVERHEAD
        shares = {"system": 0.22, "task": 0.10, "state": 0.08, "window": 0.34, "observation": 0.26}
        sizes = {name: int(usable * share) for name, share in shares.items()}
        sizes.update({k: v for k, v in overrides.items() if k in sizes})
        budgets = cls(context_window=context_window, reply=reply, **sizes)
        if budgets.total > context_window:
            raise UsageError(
                f"the budgets add up to {budgets.total} tokens, more than the {context_window}-token window"
            )
        return budgets

    @property
    def total(self) -> int:
        return TEMPLATE_OVERHEAD + self.reply + self.system + self.task + self.state + self.window + self.observation


@dataclass
class Prompt:
    """One turn's prompt, as chat messages, with the tokens each region used."""

    messages: list[dict[str, str]]
    tokens: dict[str, int]


def fit(text: str, max_tokens: int, count: Callable[[str], int], *, keep: str = "head") -> tuple[str, bool]:
    """Cut `text` to at most `max_tokens` tokens, keeping its head (or tail); say whether it was cut."""
    if count(text) <= max_tokens:
        return text, False
    # Tokens are rarely longer than MAX_TOKEN_CHARS: bisect only over that much of a huge text,
    # rather than tokenize all of it at every step.
    low, high = 0, min(len(text), max_tokens * MAX_TOKEN_CHARS)
    while low < high:  # the longest prefix (or suffix) that fits, by bisection on characters
        mid = (low + high + 1) // 2
        piece = text[:mid] if keep == "head" else text[len(text) - mid :]
        if count(piece) <= max_tokens:
            low = mid
        else:
            high = mid - 1
    return (text[:low] if keep == "head" else text[len(text) - low :]), True


def build_prompt(regions: dict[str, str], sizes: RegionSizes, count: Callable[[str], int]) -> Prompt:
    """Assemble the regions, each cut to its budget: system as one message, the rest as one user message."""
    cut = {}
    for name in REGIONS:
        limit = getattr(sizes, name)
        keep = "tail" if name == "window" else "head"
        cut[name], _ = fit(regions.get(name, ""), limit, count, keep=keep)
    user = "\n\n".join(cut[name] for name in REGIONS[1:] if cut[name])
    tokens = {name: count(cut[name]) for name in REGIONS}
    return Prompt(
        messages=[{"role": "system", "content": cut["system"]}, {"role": "user", "content": user}], tokens=tokens
    )
