"""The real-file set of `loci bench qa --files`: facts of files that ship with Python and Debian, in many phrasings.

The facts (`bench/data/qa_files.json`, read by `bench.qa.files_data`) were
written by hand on files no one wrote for Loci: Python 3.11's modules,
Debian copyright files, the common licences, man pages as `man -P cat`
renders them, and Debian changelogs and READMEs. Each fact is asked in at
least three phrasings, as different people would ask it (by its name, in
plain words, casually), and each phrasing is answered by each arm, in the
same run, on the same loaded model:

- `loci`: the `loci run Q --file F` path: a fresh home, the file loaded,
  `session.run` on what was loaded (its run and episode recorded);
- `rag`: plain BM25 over the file's lines (`bench.qa.locomo.bm25_top`), its
  top 8 lines in the order found (cut to the window, should they be longer),
  and LoCoMo's prompt ("Answer the question from the lines above, in a few
  words.");
- `direct` (asked for by name: it is the slowest): the file's head, cut to
  the model's window, and the same prompt.

`loci` and `rag` alternate question by question, so the load of the machine
falls on both alike; `direct` comes after. The scoring and the report
(accuracy over every phrasing, facts right in every phrasing, `done` while
wrong, median seconds, per kind and per style) are `bench.qa.files_report`'s.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loci.bench.qa.files_data import FileQuestion
from loci.bench.qa.files_report import Outcome, report
from loci.bench.qa.locomo import ANSWER_TOKENS, PROMPT, bm25_top, prompted
from loci.memory.errors import ModelBehaviorError, UsageError
from loci.runtime.loop.records import RunConfig
from loci.runtime.models.base import Model
from loci.runtime.prompt.build import TEMPLATE_OVERHEAD, fit
from loci.runtime.session.session import open_session

__all__ = ["ARMS", "DEFAULT_ARMS", "run_files"]

ARMS = ("loci", "rag", "direct")
DEFAULT_ARMS = ("loci", "rag")


async def rag(model: Model, q: FileQuestion) -> tuple[str, str]:
    """The best 8 lines by BM25, cut to the window when they are longer (a chat's messages can be)."""
    return await prompted(model, _fitted(model, "\n".join(bm25_top(q.lines, q.question)), q), q.question), ""


async def direct(model: Model, q: FileQuestion) -> tuple[str, str]:
    return await prompted(model, _fitted(model, "\n".join(q.lines), q), q.question), ""


def _fitted(model: Model, context: str, q: FileQuestion) -> str:
    frame = model.count_tokens(PROMPT.format(context="", question=q.question))
    return fit(context, model.context_window - ANSWER_TOKENS - TEMPLATE_OVERHEAD - frame - 8, model.count_tokens)[0]


async def loci(model: Model, q: FileQuestion, config: RunConfig) -> tuple[str, str]:
    """`loci run Q --file F` on a fresh home: the answer and its status."""
    with tempfile.TemporaryDirectory(prefix="loci-files-") as home:
        try:
            async with open_session(model, Path(home) / "loci.db", config, files=[q.file]) as session:
                _, result = await session.run(q.question, objects=list(session.loaded))
        except ModelBehaviorError as exc:  # never a valid action: a wrong answer, not a crash
            return f"(failed: {exc})", "failed"
        return result.answer, result.status


async def run_files(
    model: Model,
    questions: list[FileQuestion],
    config: RunConfig,
    arms: Sequence[str] = DEFAULT_ARMS,
    name: str = "files",
) -> dict[str, Any]:
    """Every question on each of `arms` (loci and rag in turn, then direct); the flat `{name}_*` keys."""
    unknown = [arm for arm in arms if arm not in ARMS]
    if unknown:
        raise UsageError(f"unknown arms {', '.join(unknown)}; choose from {', '.join(ARMS)}")
    rows: dict[str, list[Outcome]] = {arm: [] for arm in ARMS if arm in arms}
    order = [(q, arm) for q in questions for arm in ("loci", "rag") if arm in rows]
    order += [(q, "direct") for q in questions if "direct" in rows]
    for q, arm in order:
        started = time.monotonic()
        if arm == "loci":
            answer, status = await loci(model, q, config)
        else:
            answer, status = await (rag(model, q) if arm == "rag" else direct(model, q))
        outcome = Outcome(q, arm, answer, status, time.monotonic() - started)
        rows[arm].append(outcome)
        print(
            f"{name} {len(rows[arm])}/{len(questions)} {arm}: {'right' if outcome.right else 'wrong'} {status} "
            f"{outcome.seconds:.1f}s {q.file.name} [{q.style}]: {q.question!r} gold={q.answer!r} "
            f"answer={answer[:100]!r}",
            file=sys.stderr,
            flush=True,
        )
    return report(name, questions, rows)
