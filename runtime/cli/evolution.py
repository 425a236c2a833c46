"""`loci memory refine|consolidate|history|procedures` and `loci feedback`: evolution from the shell.

    loci memory refine                   run the queued background jobs once, then exit
    loci memory consolidate [--dry-run]  decay, prune, promote or retire procedures
    loci memory history ID               how a node (mem:N) or an edge (edge:N) came to be: a line an event
                                         (`--json`: every event whole)
    loci memory procedures [TASK]        the live procedures, for a task or all
    loci feedback RUN_ID good|bad|0.7 [NOTE]

`loci run --json` prints the `run_id` that `loci feedback` takes. The same
feedback again counts once; a different one replaces the earlier verdict
(its refinement undoes what the earlier one did). Feedback queues the run's
refinement, which the next
`loci memory refine` (or a long-lived process's worker) carries out.
Each runs on either engine (`open_home`: a SQLite file or a
`postgresql://` connection string).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from loci.runtime.cli.display import safe
from loci.runtime.cli.flags import add_project, project_of
from loci.runtime.cli.home import open_home

__all__ = ["register", "register_memory"]


def register_memory(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add the evolution subcommands to `loci memory`."""
    refine = sub.add_parser("refine", parents=[common], help="run the queued refinement jobs once")
    refine.add_argument("--max-jobs", type=int, default=None, help="stop after this many jobs")
    consolidate = sub.add_parser("consolidate", parents=[common], help="decay, prune and judge procedures")
    consolidate.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")
    history = sub.add_parser("history", parents=[common], help="how a memory or a link came to be")
    history.add_argument("id", help="mem:N or edge:N")
    procedures = sub.add_parser("procedures", parents=[common], help="the live procedures, for a task or all")
    procedures.add_argument("task", nargs="?", default="")
    procedures.add_argument("-k", type=int, default=10)
    for parser in (refine, consolidate, history, procedures):
        parser.set_defaults(handler=handle)


def register(sub: Any) -> None:
    parser = sub.add_parser("feedback", help="say how a run went: good, bad or a score from 0 to 1")
    parser.add_argument("run_id", help="the run id that `loci run --json` printed (12 or run:12)")
    parser.add_argument("outcome", help="good, bad, or a number from 0 to 1")
    parser.add_argument("note", nargs="?", default="", help="what went right or wrong, in words")
    parser.add_argument(
        "--db", default=None, help="the Loci home: a SQLite file or postgresql://... (default: $LOCI_HOME/loci.db)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_project(parser)
    parser.set_defaults(handler=handle, memory_command="feedback")


async def handle(args: argparse.Namespace) -> int:
    from loci.memory.evolution.evolution import Evolution
    from loci.memory.graph.graph import Graph

    async with open_home(args.db) as store:
        evolution = Evolution(Graph(store, project=project_of(args)))
        result = await _dispatch(evolution, args)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        _print(args.memory_command, result)
    return 0


async def _dispatch(evolution: Any, args: argparse.Namespace) -> Any:
    command = args.memory_command
    if command == "feedback":
        return await evolution.episodes.feedback(args.run_id, args.outcome, args.note, bare="run")
    if command == "refine":
        from loci.memory.jobs.worker import Worker

        ran = await Worker(evolution.jobs, evolution.handlers()).drain(args.max_jobs)
        return {"ran": ran, "queue": await evolution.jobs.counts()}
    if command == "consolidate":
        return await evolution.consolidate(dry_run=args.dry_run)
    if command == "history":
        return await evolution.history(args.id)
    return await evolution.procedures(args.task, args.k)


def _print(command: str, result: Any) -> None:
    if command == "feedback":
        print(
            f"{result['episode']}  outcome {result['outcome']:g}" + ("" if result["counted"] else "  (already counted)")
        )
    elif command == "refine":
        ran, queue = result["ran"], result["queue"]
        print(f"ran {ran['done']} jobs ({ran['retry']} to retry, {ran['failed']} failed); queue: {queue}")
    elif command == "consolidate":
        prefix = "would change" if result.get("dry_run") else "changed"
        moves = ", ".join(f"{k} {v}" for k, v in result["procedures"].items()) or "no procedure moved"
        print(f"{prefix} {result['changes']}: decayed {result['decayed']}, pruned {result['pruned']}; {moves}")
    elif command == "history":
        _print_history(result)
    else:
        if not result:
            print("no procedures")
        for proc in result:
            print(f"{proc['id']:>10}  {proc['status']:<12}  {proc['success_mean']:.2f}  {proc['text']}")


def _print_history(result: dict[str, Any]) -> None:
    if "kind" in result and "src" not in result:
        print(f"{result['id']}  {result['kind']}  {result.get('status') or ''}  {result['text'][:100]}")
    else:
        print(f"{result['id']}  {result['src']} -[{result['kind']} {result['weight']:.3f}]-> {result['dst']}")
    for event in result["events"]:
        at = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(event["at"]))
        cause = safe(event["cause"], lines=False)
        print(f"  #{event['id']:<6} {at}  {event['op']:<9} {_changes(event)}  <- {cause}")
    for text in result.get("texts", []):
        why = f" because {text['reason']}" if text.get("reason") else ""
        if text["op"] == "update":
            print(f"  was: {text['text'][:100]!r} until replaced{why}")
        elif text["op"] == "delete":
            print(f"  forgotten{why}: {text['text'][:100]!r}")
        else:
            print(f"  restored{why}")
    for source in result.get("sources", []):
        run = f"run {source['run_id']}" if source["run_id"] is not None else "no run"
        print(f"  from {source['episode']} ({run}, outcome {source['outcome']}): {source['task'][:80]}")


def _changes(event: dict[str, Any]) -> str:
    """What an event changed, whole, as `key: before -> after` (or the one side it has), `;`-separated."""
    before, after = event.get("before") or {}, event.get("after") or {}
    parts = []
    for key in dict.fromkeys([*before, *after]):
        was, now = (_value(side[key]) if key in side else None for side in (before, after))
        parts.append(f"{key}: {was} -> {now}" if was is not None and now is not None else f"{key}: {was or now}")
    return "; ".join(parts) or "-"


def _value(value: Any) -> str:
    return safe(json.dumps(value, ensure_ascii=False), lines=False)
