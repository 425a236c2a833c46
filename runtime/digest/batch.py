"""Batch jobs: `loci digest --jobs jobs.jsonl --out results.jsonl`.

The jobs file holds one `{"paths": [...], "question": "...", "strategy": "stream"}`
per line (`strategy` optional; paths relative to the jobs file). The whole
file is checked before the first job starts (every line parses, every file
it names exists and is a file), so a typo on line 40 does not surface an
hour in. The jobs share one model; with a remote (`openai`)
model up to `concurrency` run at once, with a local one they run one after
another (a local model answers one call at a time anyway).

Each result is appended to the output file as soon as its job finishes, one
JSON line: `{"line": N, ...the job's record}`, or `{"line": N, "status":
"failed", "error": ...}` for a job that failed, while the others go on.
Appending means a second run never loses the results of the first.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from loci.memory.errors import LociError, UsageError
from loci.memory.json_input import loads
from loci.runtime.digest.modes import STRATEGIES
from loci.runtime.digest.run import ProgressHook, digest
from loci.runtime.models.base import Model

__all__ = ["BatchJob", "read_jobs", "run_batch"]

KEYS = {"paths", "question", "strategy"}


@dataclass(frozen=True)
class BatchJob:
    line: int
    paths: list[Path]
    question: str
    strategy: str | None = None


@dataclass
class BatchOutcome:
    done: int = 0
    failed: list[int] = field(default_factory=list)


def read_jobs(path: str | Path) -> list[BatchJob]:
    """Every job of a JSONL jobs file, or a `UsageError` naming the first bad line."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise UsageError(f"--jobs {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the jobs file {path}: {exc}") from None
    jobs = [_job(path, number, text) for number, text in enumerate(lines, 1) if text.strip()]
    if not jobs:
        raise UsageError(f"the jobs file {path} holds no jobs; write one JSON object a line")
    return jobs


def _job(path: Path, number: int, text: str) -> BatchJob:
    where = f"{path} line {number}"
    try:
        item = loads(text)
    except ValueError as exc:
        raise UsageError(f"{where} is not JSON: {exc}") from None
    if not isinstance(item, dict):
        raise UsageError(f"{where}: a job is a JSON object with paths and question")
    if unknown := set(item) - KEYS:
        raise UsageError(f"{where}: unknown key {', '.join(sorted(unknown))}; a job has {', '.join(sorted(KEYS))}")
    paths, question, strategy = item.get("paths"), item.get("question"), item.get("strategy")
    if isinstance(paths, str):
        paths = [paths]
    if not paths or not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
        raise UsageError(f"{where}: paths must be a file name or a non-empty list of them")
    if not isinstance(question, str) or not question.strip():
        raise UsageError(f"{where}: question must be a non-empty string")
    if strategy is not None and strategy not in STRATEGIES:
        raise UsageError(f"{where}: unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")
    files = [path.parent / p for p in paths]
    for file in files:
        if not file.exists():
            raise UsageError(f"{where}: {file}: no such file")
        if not file.is_file():
            raise UsageError(f"{where}: {file} is not a file; name the files to read")
    return BatchJob(number, files, question, strategy)


async def run_batch(
    jobs: list[BatchJob],
    out: str | Path,
    model: Model,
    *,
    concurrency: int,
    options: dict[str, Any],
    progress: ProgressHook | None = None,
    finished: Callable[[int], None] | None = None,
) -> BatchOutcome:
    """Run `jobs` on `model`, up to `concurrency` at once, appending each result to `out` as it finishes."""
    if concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1 (got {concurrency})")
    outcome, lock, limiter = BatchOutcome(), anyio.Lock(), anyio.CapacityLimiter(concurrency)
    try:
        sink = open(out, "a", encoding="utf-8")  # noqa: SIM115 - held open for the whole batch
    except OSError as exc:
        raise UsageError(f"cannot write --out {out}: {exc.strerror or exc}") from None

    async def one(job: BatchJob) -> None:
        async with limiter:
            try:
                strategy = job.strategy or options.get("strategy", "auto")
                record = await digest(
                    job.paths, job.question, model=model, progress=progress, **{**options, "strategy": strategy}
                )
                result = {"line": job.line, **record}
                outcome.done += 1
                if finished is not None:
                    finished(record["job_id"])
            except LociError as exc:
                result = {"line": job.line, "status": "failed", "error": f"{type(exc).__name__}: {exc}"}
                outcome.failed.append(job.line)
        async with lock:
            sink.write(json.dumps(result, ensure_ascii=False) + "\n")
            sink.flush()

    try:
        async with anyio.create_task_group() as group:
            for job in jobs:
                group.start_soon(one, job)
    finally:
        sink.close()
    return outcome
