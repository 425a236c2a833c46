"""Batch jobs run concurrently on a model that can take several calls at once, and stream their results."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from loci.memory.errors import BackendTimeout
from loci.runtime.digest.batch import BatchJob, run_batch
from loci.runtime.models.base import Reply, Request
from tests.runtime.digest_helpers import write_doc


class TwoAtOnce:
    """A remote-like model whose calls return only once two of them are in flight together.

    A call that waits `ALONE_S` without a second one fails as a backend timeout, so a job that never reaches
    the model (it failed, or waits on the other) shows in the results instead of hanging the test."""

    name = "two-at-once"
    context_window = 8_192
    parameters = None
    ALONE_S = 20

    def __init__(self) -> None:
        self.active = 0
        self.most = 0
        self.both = anyio.Event()

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    async def generate(self, request: Request) -> Reply:
        self.active += 1
        self.most = max(self.most, self.active)
        if self.active == 2:
            self.both.set()
        try:
            with anyio.fail_after(self.ALONE_S):
                await self.both.wait()
        except TimeoutError:
            raise BackendTimeout(f"only one call reached the model in {self.ALONE_S} s") from None
        finally:
            self.active -= 1
        return Reply(text="7316", prompt_tokens=1, completion_tokens=1)

    async def aclose(self) -> None:
        return None


async def test_jobs_run_concurrently_and_each_result_is_appended_as_it_finishes(tmp_path: Path) -> None:
    jobs = [BatchJob(n, [write_doc(tmp_path / f"{n}.txt")], "Code?") for n in (1, 2)]
    out = tmp_path / "results.jsonl"
    out.write_text('{"line": 0, "from": "an earlier run"}\n', encoding="utf-8")
    model = TwoAtOnce()
    with anyio.fail_after(60):
        outcome = await run_batch(jobs, out, model, concurrency=2, options={"db": tmp_path / "loci.db"})
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert model.most == 2 and outcome.done == 2 and outcome.failed == [], lines
    assert lines[0] == {"line": 0, "from": "an earlier run"}  # appended: nothing of the earlier run is lost
    assert sorted(line["line"] for line in lines[1:]) == [1, 2] and all(line["answer"] == "7316" for line in lines[1:])
