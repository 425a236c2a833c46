"""Scores through llama-cpp-python's server against the llama backend's, for the same GGUF."""

from __future__ import annotations

import anyio
import pytest

from loci.runtime.models.base import Model, can_score
from loci.runtime.models.specs import load_model

pytestmark = [pytest.mark.model, pytest.mark.server, pytest.mark.slow]

ASK = [
    {"role": "system", "content": "Answer with the value only."},
    {
        "role": "user",
        "content": "Line 12: COPY_BUFSIZE = 1024 * 1024 if _WINDOWS else 64 * 1024\nWhat is the value of COPY_BUFSIZE?",
    },
]
CANDIDATES = ["1024", "64 * 1024", "1024 * 1024 if _WINDOWS else 64 * 1024", "_WINDOWS", "Ka-Ping Yee"]
LIKELY_END = -6.0  # an end this likely is among the server's top choices after the candidate, so it is read


async def test_the_server_scores_each_candidate_as_the_llama_backend_does(gguf: Model, llama_server: str) -> None:
    remote = await load_model(f"openai:smollm2@{llama_server}")
    try:
        assert can_score(remote)  # the probe found log-probabilities
        with anyio.fail_after(300):
            here = await gguf.score(ASK, CANDIDATES)  # type: ignore[attr-defined]
            there = await remote.score(ASK, CANDIDATES)  # type: ignore[attr-defined]
    finally:
        await remote.aclose()
    for candidate, local, served in zip(CANDIDATES, here, there, strict=True):
        assert len(served.logprobs) == len(local.logprobs), candidate  # the same tokens, not another spelling
        assert served.logprobs == pytest.approx(local.logprobs, abs=0.3), candidate
        assert served.total == pytest.approx(local.total, abs=0.5), candidate
        if local.end >= LIKELY_END:
            assert served.end == pytest.approx(local.end, abs=0.5), candidate
        else:
            assert served.end >= local.end - 0.5, candidate  # not among the top: an upper bound stands for it
    whole = [[s.total + s.end for s in scores] for scores in (here, there)]
    assert max(range(len(CANDIDATES)), key=whole[0].__getitem__) == max(
        range(len(CANDIDATES)), key=whole[1].__getitem__
    )
