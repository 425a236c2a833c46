"""The one model wrapper: every property of the protocol comes from the inner model, `serial` included."""

from __future__ import annotations

import anyio
import pytest

from loci.runtime.digest.settings import MeteredModel
from loci.runtime.loop.recursion import _Limited
from loci.runtime.models.base import Request, is_serial
from loci.runtime.models.scripted import ScriptedModel
from loci.runtime.models.wrapper import ModelWrapper

REQUEST = Request([{"role": "user", "content": "hello there"}], max_tokens=8)


@pytest.mark.parametrize("serial", [True, False])
async def test_a_wrapper_forwards_every_property_of_the_protocol(serial: bool) -> None:
    inner = ScriptedModel(["hi"], context_window=4_096, name="remote", parameters=135, serial=serial)
    wrapped = ModelWrapper(ModelWrapper(inner))
    assert (wrapped.name, wrapped.context_window, wrapped.parameters) == ("remote", 4_096, 135)
    assert is_serial(wrapped) is serial
    assert wrapped.count_tokens("three words here") == 3
    assert (await wrapped.generate(REQUEST)).text == "hi"
    assert inner.calls == [REQUEST]


@pytest.mark.parametrize("serial", [True, False])
async def test_the_runtime_wrappers_keep_a_remote_model_remote(serial: bool) -> None:
    inner = ScriptedModel(["a", "b"], serial=serial)
    metered, limited = MeteredModel(inner), _Limited(inner, anyio.CapacityLimiter(1))
    assert is_serial(metered) is serial and is_serial(limited) is serial
    await metered.generate(REQUEST)
    await limited.generate(REQUEST)
    assert metered.calls == 1 and len(inner.calls) == 2


async def test_closing_a_wrapper_leaves_the_inner_model_to_its_owner() -> None:
    class Closing(ScriptedModel):
        closed = False

        async def aclose(self) -> None:
            self.closed = True

    inner = Closing([])
    await ModelWrapper(inner).aclose()
    assert not inner.closed
