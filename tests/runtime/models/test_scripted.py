"""The scripted model: replies in order, and a test fails when a step is left unused."""

from __future__ import annotations

import pytest

from loci.memory.errors import BackendError
from loci.runtime.models.base import Request
from loci.runtime.models.scripted import ScriptedModel


def ask(text: str = "hello") -> Request:
    return Request([{"role": "user", "content": text}])


async def test_every_model_a_test_makes_is_checked_at_its_end(every_scripted_step_used: list[ScriptedModel]) -> None:
    model = ScriptedModel(["one", {"two": 2}])
    assert every_scripted_step_used == [model]
    assert (await model.generate(ask())).text == "one"
    with pytest.raises(AssertionError, match="1 scripted step"):
        model.check_used()
    assert (await model.generate(ask())).text == '{"two": 2}'
    model.check_used()


async def test_a_script_that_runs_out_is_a_backend_error() -> None:
    model = ScriptedModel([lambda request: request.messages[-1]["content"].upper()])
    assert (await model.generate(ask("hi"))).text == "HI"
    with pytest.raises(BackendError, match="ran out of steps after 1 replies"):
        await model.generate(ask())
    assert len(model.calls) == 2
