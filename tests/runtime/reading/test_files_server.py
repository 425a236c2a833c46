"""The same question through llama-cpp-python's server: the same plan, look, span and check as the local GGUF."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import anyio
import pytest

from loci.runtime.models.openai import OpenAIModel
from loci.runtime.session.session import open_session

pytestmark = pytest.mark.server

UUID = Path(sysconfig.get_paths()["stdlib"]) / "uuid.py"


async def test_a_small_model_behind_a_server_reads_as_the_local_one_does(tmp_path: Path, llama_server: str) -> None:
    async with OpenAIModel("smollm2", llama_server, context_window=2_048) as model:
        assert await model.discover_parameters() == 135_000_000  # the served GGUF's name says it
        with anyio.fail_after(300):
            async with open_session(model, tmp_path / "loci.db", files=[UUID]) as session:
                result = await session.agent.run("Who wrote the uuid module?")
    assert result.plan is not None and "retrieve then read" in result.plan.tools_reason and result.plan.tools == []
    searched = [str(turn.action.arguments.get("query", "")) for turn in result.turns if turn.action.tool]
    assert searched and not any("zorvex" in query.casefold() for query in searched)
    assert "Ka-Ping Yee" in result.answer and result.status == "done"
