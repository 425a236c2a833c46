"""Scoring continuations on the bundled GGUF: one prompt evaluated once, each candidate from its KV cache.

The scores are log-probabilities (finite, negative), the same when asked
again, and scoring leaves the context as a generation on the same prompt
expects it: the generation reuses the prompt and writes what it writes
without scoring before it.
"""

from __future__ import annotations

import math

import anyio
import pytest

from loci.runtime.models.base import Model, Request, can_score

pytestmark = pytest.mark.model

LINES = (
    "doc:1 lines 1-3:\n1| The harbour council meets on the first Monday of each month.\n"
    "2| The next meeting is on 14 March 2024 in Room 5.\n3| Berth fees are paid in April."
)
MESSAGES = [{"role": "user", "content": f"{LINES}\n\nQuestion: When is the next meeting?\nAnswer:"}]
CANDIDATES = ["14 March 2024", "Room 5", "April"]


async def test_scores_are_log_probabilities_that_do_not_change_when_asked_again(gguf: Model) -> None:
    assert can_score(gguf)
    with anyio.fail_after(120):
        first = await gguf.score(MESSAGES, CANDIDATES)  # type: ignore[attr-defined]
        again = await gguf.score(MESSAGES, CANDIDATES)  # type: ignore[attr-defined]
    assert [len(c.logprobs) for c in first] == [gguf.count_tokens(t) for t in CANDIDATES]
    assert all(math.isfinite(c.total) and c.total < 0 and c.end <= 0 for c in first)
    assert [c.total for c in first] == pytest.approx([c.total for c in again])
    assert max(range(3), key=lambda i: first[i].total + first[i].end) == 0  # the date the question asks for


async def test_a_generation_after_scoring_reuses_the_prompt_and_is_unchanged(gguf: Model) -> None:
    request = Request(MESSAGES, max_tokens=16)
    with anyio.fail_after(120):
        before = await gguf.generate(request)
        await gguf.score(MESSAGES, CANDIDATES)  # type: ignore[attr-defined]
        after = await gguf.generate(request)
    assert after.text == before.text and after.reused_tokens >= after.prompt_tokens - 1
