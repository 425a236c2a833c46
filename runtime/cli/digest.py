"""`loci digest PATH... -q QUESTION` and `loci jobs`: long-document jobs from the command line.

    loci digest book.md -q "Who betrays the captain?"            auto picks a strategy, says why
    loci digest logs/*.jsonl -q "..." --strategy stream --json
    loci digest --resume 7                                        after Ctrl-C or a kill
    loci digest --jobs jobs.jsonl --out results.jsonl --concurrency 4
    loci jobs                                                     every job and its status

The work is in `runtime.digest.run`; this module parses, draws the progress
bar on stderr (`runtime.digest.progress`) and prints the record: the answer
and its evidence, or with `--json` the record itself.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from collections.abc import Callable
from typing import Any

import anyio

from loci.memory.errors import UsageError
from loci.memory.projects import writable_project
from loci.memory.records.digest_jobs import DigestJobs
from loci.runtime.cli.flags import add_project, project_of
from loci.runtime.cli.home import open_home
from loci.runtime.digest.batch import read_jobs, run_batch
from loci.runtime.digest.modes import STRATEGIES
from loci.runtime.digest.progress import ProgressBar, progress_wanted
from loci.runtime.digest.run import digest, resume
from loci.runtime.digest.settings import Progress
from loci.runtime.models.specs import DEFAULT_SPEC, load_model, parse_spec

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("digest", help="answer a question over long documents, resumably")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="text, Markdown, code, JSON/JSONL or PDF files")
    parser.add_argument("-q", "--question", help="what to find out from the documents")
    parser.add_argument(
        "--strategy", choices=STRATEGIES, default="auto", help="stream, navigate, direct or auto (default)"
    )
    parser.add_argument("--model", "-m", default=None, help=f"model spec (default {DEFAULT_SPEC}; --resume: the job's)")
    parser.add_argument("--context-window", type=int, default=None, help="the model's context window in tokens")
    parser.add_argument(
        "--db", default=None, help="the home: a SQLite file or postgresql://... (default $LOCI_HOME/loci.db)"
    )
    add_project(parser)
    parser.add_argument("--chunk-tokens", type=int, default=None, help="stream: tokens a chunk (default: what fits)")
    parser.add_argument(
        "--memory-tokens", type=int, default=None, help="stream: the memory's bound (default: window/8)"
    )
    parser.add_argument("--max-turns", type=int, default=8, help="navigate: turns before the agent must answer")
    parser.add_argument("--resume", type=int, metavar="JOB_ID", help="continue a job from its last checkpoint")
    parser.add_argument("--jobs", metavar="JOBS.jsonl", help="one {paths, question, strategy?} a line")
    parser.add_argument("--out", metavar="RESULTS.jsonl", help="with --jobs: results are appended here as they finish")
    parser.add_argument("--concurrency", type=int, default=4, help="with --jobs and a remote model: jobs at once")
    parser.add_argument("--json", action="store_true", help="print the record as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(handler=run)

    jobs = sub.add_parser("jobs", help="list digest jobs and their status")
    jobs.add_argument(
        "--db", default=None, help="the home: a SQLite file or postgresql://... (default $LOCI_HOME/loci.db)"
    )
    add_project(jobs, every=True)
    jobs.add_argument("--limit", type=int, default=50, help="the most recent N jobs (default 50)")
    jobs.add_argument("--json", action="store_true", help="print the jobs as JSON")
    jobs.set_defaults(handler=list_jobs)


def check_arguments(args: argparse.Namespace) -> None:
    if args.resume is not None and (args.paths or args.question or args.jobs):
        raise UsageError("--resume takes the job's own files and question; give no PATH, -q or --jobs with it")
    if args.jobs:
        if args.paths or args.question:
            raise UsageError("--jobs takes the files and questions from the jobs file; give no PATH or -q with it")
        if not args.out:
            raise UsageError("--jobs needs --out RESULTS.jsonl, where the results go")
    elif args.resume is None:
        if not args.paths:
            raise UsageError("give the files to digest: loci digest PATH... -q QUESTION")
        if not args.question or not args.question.strip():
            raise UsageError("give the question: loci digest PATH... -q QUESTION")
    if args.out and not args.jobs:
        raise UsageError("--out goes with --jobs")


async def run(args: argparse.Namespace) -> int:
    check_arguments(args)
    if args.jobs:
        return await run_jobs(args)
    current: list[Progress] = []
    try:
        with ProgressBar(enabled=progress_wanted(args.quiet)) as bar:

            def hook(progress: Progress) -> None:
                current[:] = [progress]
                bar.update(progress)

            record = await run_one(args, hook)
    except (KeyboardInterrupt, anyio.get_cancelled_exc_class()):
        if current:  # the bar is down: this line stays readable
            job = current[0].job_id
            print(f"loci: job {job} stopped; continue it with: loci digest --resume {job}", file=sys.stderr)
        raise
    print(json.dumps(record, ensure_ascii=False, indent=2) if args.json else as_text(record))
    if not args.quiet and not args.json:
        print(summary(record), file=sys.stderr)
    return 0


async def run_one(args: argparse.Namespace, hook: Callable[[Progress], None]) -> dict[str, Any]:
    if args.resume is not None:
        return await resume(
            args.resume,
            model=args.model,
            db=args.db,
            context_window=args.context_window,
            progress=hook,
            project=writable_project(project_of(args)),
        )
    options = {"chunk_tokens": args.chunk_tokens, "memory_tokens": args.memory_tokens, "max_turns": args.max_turns}
    model = args.model or DEFAULT_SPEC
    return await digest(
        args.paths, args.question, model=model, db=args.db, strategy=args.strategy,
        context_window=args.context_window, progress=hook, project=writable_project(project_of(args)), **options,
    )  # fmt: skip


async def run_jobs(args: argparse.Namespace) -> int:
    jobs = read_jobs(args.jobs)
    spec = args.model or DEFAULT_SPEC
    concurrency = args.concurrency
    if concurrency > 1 and parse_spec(spec)[0] != "openai":
        concurrency = 1  # a local model answers one call at a time
    model = await load_model(spec, context_window=args.context_window)
    options = {
        "db": args.db, "strategy": args.strategy, "chunk_tokens": args.chunk_tokens,
        "memory_tokens": args.memory_tokens, "max_turns": args.max_turns,
        "project": writable_project(project_of(args)),
    }  # fmt: skip
    try:
        with ProgressBar(enabled=progress_wanted(args.quiet)) as bar:
            outcome = await run_batch(
                jobs, args.out, model, concurrency=concurrency, options=options, progress=bar.update, finished=bar.done
            )
    finally:
        await model.aclose()
    print(f"loci: {outcome.done} of {len(jobs)} jobs done; results in {args.out}", file=sys.stderr)
    if outcome.failed:
        print(
            f"loci: failed: lines {', '.join(map(str, outcome.failed))} (see their error in {args.out})",
            file=sys.stderr,
        )
        return 1
    return 0


def as_text(record: dict[str, Any]) -> str:
    lines = [record["answer"]]
    if record["status"] != "done":
        lines.append(f"(partial: {record.get('reason')})")
    for cited in record["evidence"]:
        if "quote" in cited:  # a found line, quoted as JSON so its control characters stay escaped
            quote = json.dumps(cited["quote"], ensure_ascii=False)
            lines.append(f"--- {cited['id']} {cited.get('name', '')} line {cited['start']}: {quote}")
        else:
            lines.append(f"--- {cited['id']} {cited.get('name', '')} lines {cited['start']}-{cited['end']}")
    return "\n".join(lines)


def summary(record: dict[str, Any]) -> str:
    return (
        f"loci: job {record['job_id']}: {record['strategy']} ({record['why']}); read {record['tokens_read']:,} of "
        f"{record['tokens_total']:,} tokens in {record['model_calls']} model calls, {record['wall_s']:.1f} s"
    )


async def list_jobs(args: argparse.Namespace) -> int:
    async with open_home(args.db) as store:
        jobs = await DigestJobs(store, project=project_of(args)).list(args.limit)
    rows = [
        {
            "id": job.id,
            "status": job.shown_status,
            "strategy": job.strategy,
            "tokens_read": job.state.get("tokens_read", 0),
            "tokens_total": job.state.get("tokens_total"),
            "chunks": job.state.get("chunk", 0),
            "question": job.question,
            "updated": datetime.datetime.fromtimestamp(job.updated).isoformat(timespec="seconds"),
            "error": job.error,
        }
        for job in jobs
    ]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    if not rows:
        print("no digest jobs yet")
        return 0
    print(f"{'id':>5}  {'status':<11} {'strategy':<9} {'read':>21}  {'updated':<19}  question")
    for row in rows:
        total = f"{row['tokens_total']:,}" if row["tokens_total"] is not None else "?"
        read = f"{row['tokens_read']:,}/{total}"
        question = row["question"] if len(row["question"]) <= 50 else row["question"][:47] + "..."
        print(f"{row['id']:>5}  {row['status']:<11} {row['strategy']:<9} {read:>21}  {row['updated']:<19}  {question}")
        if row["error"] and row["status"] != "done":
            print(f"{'':>7}{row['error']}")
    return 0
