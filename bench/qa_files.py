"""The real-file set of `loci bench qa --files`: answers on files that ship with Python and Debian.

The questions (`bench/data/qa_files.json`) were written by hand on files no
one wrote for Loci: standard-library modules of Python 3.11 and Debian
copyright files, each pointed at by its path on the machine (`{stdlib}/argparse.py`:
Python's own modules are found where this Python keeps them,
`sysconfig.get_paths()["stdlib"]`, so the set runs on any machine), each
answer a span of one line of its file (`grep -F` finds it). A question whose file is
missing is skipped, and the report says which and why. Each question is
answered three ways, in the same run, on the same loaded model:

- `loci`: the `loci run Q --file F` path: a fresh home, the file loaded,
  `session.run` on what was loaded (its run and episode recorded);
- `rag`: plain BM25 over the file's lines (`bench.locomo_qa.bm25_top`), its
  top 8 lines in the order found (cut to the window, should they be longer),
  and LoCoMo's prompt ("Answer the question
  from the lines above, in a few words.");
- `direct`: the file's head, cut to the model's window, and the same prompt.

An answer is right when the expected span is in it, as whole words after
LoCoMo's normalising (`bench.locomo_qa.contains`). For `loci` the report
also counts answers that said `done` while wrong: the run vouched for an
answer its evidence does not hold.
"""

from __future__ import annotations

import json
import statistics
import sys
import sysconfig
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.locomo_qa import ANSWER_TOKENS, PROMPT, bm25_top, contains, prompted
from memory.errors import ModelBehaviorError, UsageError
from runtime.loop.records import RunConfig
from runtime.models.base import Model
from runtime.prompt.build import TEMPLATE_OVERHEAD, fit
from runtime.session.session import open_session

__all__ = ["ARMS", "FILES", "FileQuestion", "file_set", "run_files"]

FILES = Path(__file__).parent / "data" / "qa_files.json"


@dataclass(frozen=True)
class FileQuestion:
    file: Path
    question: str
    answer: str

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(self.file.read_text(encoding="utf-8", errors="replace").splitlines())


def file_set(path: Path = FILES) -> tuple[list[FileQuestion], list[str]]:
    """The questions whose file is on this machine, and a reason for each one skipped."""
    try:
        rows = json.loads(Path(path).read_text(encoding="utf-8"))["questions"]
    except FileNotFoundError as exc:
        raise UsageError(f"no question file at {path}") from exc
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path} is not a question file (a JSON object with `questions`): {exc}") from exc
    found, skipped = [], []
    for row in rows:
        file = Path(str(row["file"]).replace("{stdlib}", sysconfig.get_paths()["stdlib"]))
        if file.is_file():
            found.append(FileQuestion(file, str(row["question"]), str(row["answer"])))
        else:
            skipped.append(f"{row['question']!r}: {file} is not on this machine")
    return found, skipped


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


ARMS = ("loci", "rag", "direct")


async def run_files(
    model: Model, questions: list[FileQuestion], config: RunConfig, arms: Sequence[str] = ARMS, name: str = "files"
) -> dict[str, Any]:
    """Every question on each of `arms` (loci and rag side by side, then direct); the flat `{name}_*` keys."""
    unknown = [arm for arm in arms if arm not in ARMS]
    if unknown:
        raise UsageError(f"unknown arms {', '.join(unknown)}; choose from {', '.join(ARMS)}")
    rows: dict[str, list[tuple[bool, float, str]]] = {arm: [] for arm in ARMS if arm in arms}
    order = [(q, name) for q in questions for name in ("loci", "rag") if name in rows]
    order += [(q, "direct") for q in questions if "direct" in rows]
    prefix = name
    for q, name in order:
        started = time.monotonic()
        if name == "loci":
            answer, status = await loci(model, q, config)
        else:
            answer, status = await (rag(model, q) if name == "rag" else direct(model, q))
        seconds = time.monotonic() - started
        right = contains(answer, q.answer)
        rows[name].append((right, seconds, status))
        print(
            f"{prefix} {len(rows[name])}/{len(questions)} {name}: {'right' if right else 'wrong'} {status} "
            f"{seconds:.1f}s {q.file.name}: {q.question!r} gold={q.answer!r} answer={answer[:100]!r}",
            file=sys.stderr,
            flush=True,
        )
    report: dict[str, Any] = {f"{prefix}_n": len(questions)}
    for name, outcomes in rows.items():
        report[f"{prefix}_{name}_acc"] = round(statistics.fmean(r[0] for r in outcomes), 3) if outcomes else 0.0
        report[f"{prefix}_{name}_right"] = sum(r[0] for r in outcomes)
        report[f"{prefix}_{name}_s_median"] = round(statistics.median(r[1] for r in outcomes), 2) if outcomes else 0.0
    if "loci" in rows:
        done_wrong = sum(not right and status == "done" for right, _, status in rows["loci"])
        report[f"{prefix}_loci_done_wrong"] = done_wrong
    return report
