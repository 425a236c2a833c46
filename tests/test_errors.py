"""The one error tree: every error Loci raises on purpose is a `LociError`, in its branch."""

from __future__ import annotations

import pytest

import memory
import runtime
import tools
from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import BackendError, InvalidAction, LociError, ModelBehaviorError, UsageError
from loci.runtime.host.host import ToolSpec
from loci.runtime.loop.action import InvalidAction as ActionInvalid
from loci.runtime.loop.action import parse_action
from loci.runtime.models.http_errors import TRANSIENT
from loci.runtime.prompt.build import RegionSizes
from loci.runtime.reading.evidence import check_evidence


def test_an_invalid_reply_is_the_model_s_fault_not_the_user_s() -> None:
    assert ActionInvalid is InvalidAction
    assert issubclass(InvalidAction, ModelBehaviorError) and not issubclass(InvalidAction, UsageError)
    with pytest.raises(InvalidAction, match="not valid JSON"):
        parse_action("{oops", [ToolSpec("context_list", "list", {"type": "object"})])


def test_the_packages_that_raise_re_export_the_tree() -> None:
    assert runtime.InvalidAction is memory.InvalidAction is InvalidAction
    assert runtime.UsageError is tools.UsageError is UsageError
    assert all(issubclass(cls, BackendError) for cls in TRANSIENT)


def test_budgets_larger_than_the_window_are_a_usage_error() -> None:
    with pytest.raises(UsageError, match="more than the 1024-token window"):
        RegionSizes.for_window(1_024, window=5_000)


async def test_evidence_citing_what_does_not_exist_is_an_invalid_action(store: Store) -> None:
    contexts = ContextStore(store)
    obj = await contexts.add_text("doc", "a.md", "one\ntwo\n")
    with pytest.raises(InvalidAction, match="evidence cites doc:99") as caught:
        await check_evidence(contexts, [{"id": "doc:99"}])
    assert isinstance(caught.value, LociError)
    cited = await check_evidence(contexts, [{"id": obj.id, "start": 2, "end": 2}])
    assert [(c.id, c.start, c.end, c.text.strip()) for c in cited] == [(obj.id, 2, 2, "two")]
