"""The words that frame a question ("what", "has", "the"): left out of every match and every ranking.

Context search (`memory.context.fulltext`), memory recall (`memory.graph.terms`)
and the line ranker (`memory.text.lines`) leave them out of the words they
weigh unless nothing else is left, so they never rank a line.
"""

from __future__ import annotations

__all__ = ["STOP_WORDS"]

_STOP_TEXT = (
    "a about after again all also am an and any are as at be been before being between both but by can could did do"
    " does doing done down during each even ever few for from get got had has have having he her here hers herself"
    " him himself his how i if in into is it its itself just kind like likely me might more most much must my myself"
    " no nor not now of off on once one only or other our ours out over own really same she should so some"
    " something such than that the their theirs them themselves then there these they thing things this those"
    " through to too type under until up upon us very was way we were what whatever when where whether which while"
    " who whom whose why will with would yes yet you your yours"
)
STOP_WORDS = frozenset(_STOP_TEXT.split())
