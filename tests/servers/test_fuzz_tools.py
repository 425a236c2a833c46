"""Fuzzing the served tools' arguments: wrong types, huge strings, unicode, negative ranges.

Whatever the arguments, a call ends in a result: never a crash of the server
(the SDK's bare "Error executing tool X" is what a crash looks like), never a
traceback in the text, and an error result always says something.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from loci.memory.engines.sqlite.store import Store
from loci.servers.app import build_app

TOOLS = {
    "context_list": ["kinds", "limit"],
    "context_outline": ["id"],
    "context_read": ["id", "start", "end", "unit"],
    "context_search": ["query", "ids", "k", "regex"],
    "memory_remember": ["text", "kind", "links", "metadata"],
    "memory_update": ["id", "text", "reason"],
    "memory_forget": ["id", "reason"],
    "memory_restore": ["id", "reason"],
    "context_load": ["path"],
    "context_forget": ["id"],
    "memory_recall": ["query", "k", "kinds"],
    "memory_get": ["id"],
    "memory_neighbors": ["id", "depth", "kinds"],
    "memory_link": ["a", "b", "kind", "weight"],
    "memory_stats": [],
}

ids = st.sampled_from(["doc:1", "mem:1", "note:1", "doc:1:1-2", "mem:", "doc:-1", "mem:9" * 30, "doc:²", "", " "])
odd = st.text(alphabet="\u0000\ud800\udfff\U0001f600()*\"'", min_size=1, max_size=20)
texts = st.one_of(odd, st.text(max_size=40), st.just("x" * 20_000))
numbers = st.one_of(st.integers(-3, 3), st.integers(), st.floats(allow_nan=True), st.sampled_from([2**70, -(2**70)]))
scalars = st.one_of(texts, ids, numbers, st.none(), st.booleans())
values = st.one_of(scalars, st.lists(scalars, max_size=4), st.dictionaries(st.text(max_size=5), scalars, max_size=3))


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(sorted(TOOLS)))
    arguments = draw(st.fixed_dictionaries({}, optional={key: values for key in [*TOOLS[name], "unexpected"]}))
    return name, arguments


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BlockingPortal, Client]]:
    with start_blocking_portal("asyncio") as portal:
        store = portal.call(Store.open, tmp_path_factory.mktemp("fuzz") / "loci.db")
        try:
            with portal.wrap_async_context_manager(Client(build_app(store, ["context", "memory"]))) as client:
                portal.call(client.call_tool, "memory_remember", {"text": "a seed fact"})
                yield portal, client
        finally:
            store.close()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=calls())
def test_any_arguments_end_in_a_readable_result(served: tuple[BlockingPortal, Client], call: tuple[str, dict]) -> None:
    portal, client = served
    name, arguments = call
    result = portal.call(client.call_tool, name, _json_safe(arguments))
    text = " ".join(getattr(part, "text", "") for part in result.content)
    assert "Traceback" not in text
    assert text.strip() != f"Error executing tool {name}", f"{name} crashed on {arguments!r}"
    if result.is_error:
        assert len(text) > len(f"Error executing tool {name}")


def _json_safe(value: Any) -> Any:
    """What a JSON client can send: NaN and infinities become null, as the SDK's own encoder does."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    return value
