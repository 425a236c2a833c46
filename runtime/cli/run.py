"""`loci run TASK`: one task, answered by the agent, printed with its evidence.

The answer and the cited lines go to stdout, control characters escaped
(`runtime.cli.display.safe`: a document line cannot drive the terminal);
stderr then says the run's id and how to judge it
(`run 12: loci feedback 12 good|bad`), which `--json` carries as `run_id`.
With no `--file`, `--dir` or stdin, the run reads the memory graph when it
holds the question, else the home's documents (runtime/session/sources.py),
and stderr says which (`--json`: `source`, `source_why`); a span of recalled
memories is shown under their ids (`mem:22`).
Every numeric flag is checked before a model loads (`runtime.cli.flags`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from loci.memory.engines.sqlite.store import default_db_path
from loci.memory.errors import UsageError
from loci.memory.graph.records import node_ref
from loci.runtime.cli.display import safe
from loci.runtime.cli.flags import add_project, at_least, project_of
from loci.runtime.loop.records import BUILT_IN, Limits, RunConfig, RunResult, TurnTrace
from loci.runtime.models.base import Model
from loci.runtime.models.specs import DEFAULT_SPEC, load_model
from loci.runtime.prompt.build import RegionSizes
from loci.runtime.session.session import check_files, open_session
from loci.runtime.session.sources import ask

__all__ = ["add_model_arguments", "as_text", "check_sizes", "register", "sizes_from", "tools_for"]


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("run", help="run one task and print the answer")
    parser.add_argument("task", help="what to do, in words")
    parser.add_argument(
        "--file", "-f", action="append", default=[], help="a file the agent may read (repeatable; - reads stdin)"
    )
    parser.add_argument(
        "--dir", "-d", action="append", default=[], help="a directory to load recursively (skips binaries and .git)"
    )
    add_model_arguments(parser)
    parser.add_argument("--max-turns", type=int, default=8, help="turns before the agent must answer (default 8)")
    parser.add_argument("--max-tokens", type=int, default=None, help="prompt plus completion tokens the run may spend")
    parser.add_argument("--max-seconds", type=float, default=None, help="wall time the run may take")
    parser.add_argument(
        "--tools",
        default=None,
        help=(
            f"built-in tool sets, comma-separated, from {','.join(BUILT_IN)} (default: all, the catalogue "
            "picked by model size and task; context is always on)"
        ),
    )
    parser.add_argument("--tool-choice", default="", help="tools the first turns must call, in order, comma-separated")
    parser.add_argument("--mcp-config", help="an mcpServers JSON file of external MCP servers")
    parser.add_argument("--trace", action="store_true", help="print each turn to stderr")
    parser.add_argument(
        "--json", action="store_true", help="print the answer, evidence, status, counts and run_id as JSON"
    )
    parser.add_argument("--no-episode", action="store_true", help="leave no episode in the memory graph for this run")
    parser.set_defaults(handler=run)


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", "-m", default=DEFAULT_SPEC, help=f"model spec (default {DEFAULT_SPEC})")
    parser.add_argument("--context-window", type=int, default=None, help="the model's context window in tokens")
    parser.add_argument(
        "--db",
        default=None,
        help="the home: a SQLite file or a postgresql:// connection string (default $LOCI_HOME/loci.db)",
    )
    add_project(parser)
    parser.add_argument("--state-tokens", type=int, help="budget S of the working state (default: from the window)")
    parser.add_argument("--window-tokens", type=int, help="budget W of the recent-turns window")
    parser.add_argument("--observation-tokens", type=int, help="budget O of the latest tool result")


def tool_sets(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = set(names) - set(BUILT_IN)
    if unknown:
        raise UsageError(f"unknown tool set {', '.join(sorted(unknown))}; choose from {', '.join(BUILT_IN)}")
    return names


def tools_for(names: tuple[str, ...] | None, files: bool) -> tuple[str, ...] | None:
    """The tool sets a run pins, from those `--tools` named. A question with no file that names only the memory's
    (and the context's, which is always on) is what a plain run already reads (runtime/session/sources.py): its
    catalogue is picked as without `--tools`, and holds the memory tools. Pinned, a small model spent its turns
    calling them, eight times the seconds of a plain run."""
    if names is not None and not files and set(names) <= {"memory", "context"}:
        return None
    return names


def check_sizes(args: argparse.Namespace) -> None:
    """Refuse a window or a budget below one token, before any model loads."""
    at_least(1, context_window=args.context_window, state_tokens=args.state_tokens)
    at_least(1, window_tokens=args.window_tokens, observation_tokens=args.observation_tokens)


def sizes_from(args: argparse.Namespace, model: Model) -> RegionSizes:
    """The region sizes for `model`'s window with the flags' overrides (checked first with `check_sizes`)."""
    overrides = {
        name: value
        for name, value in (
            ("state", args.state_tokens),
            ("window", args.window_tokens),
            ("observation", args.observation_tokens),
        )
        if value is not None
    }
    return RegionSizes.for_window(model.context_window, **overrides)


async def run(args: argparse.Namespace) -> int:
    check_sizes(args)
    limits = Limits(max_turns=args.max_turns, max_tokens=args.max_tokens, max_seconds=args.max_seconds)
    files = [name for name in args.file if name != "-"]
    check_files(files)
    for name in args.dir:
        if not Path(name).is_dir():
            raise UsageError(f"--dir {name}: not a directory")
    tools = tools_for(tool_sets(args.tools), bool(args.file or args.dir))
    model = await load_model(args.model, context_window=args.context_window)
    try:
        on_turn = print_trace if args.trace else None
        config = RunConfig(limits=limits, sizes=sizes_from(args, model), tools=tools, mcp_config=args.mcp_config)
        db, episodes = args.db or default_db_path(), not args.no_episode
        async with open_session(
            model, db, config, files=files, on_turn=on_turn, episodes=episodes, project=project_of(args)
        ) as session:
            loaded = list(session.loaded)
            if "-" in args.file:
                loaded.append(await session.contexts.add_stream("stdin", sys.stdin.buffer))
            for name in args.dir:
                found = await session.contexts.add_directory(name)
                loaded += found.objects
                for skipped, why in found.skipped:
                    print(f"loci: skipped {skipped}: {why}", file=sys.stderr)
            for obj in loaded:
                if obj.meta.get("replaced_bytes"):
                    print(
                        f"loci: {obj.name} is not valid UTF-8; "
                        f"{obj.meta['replaced_bytes']} bytes were replaced with U+FFFD",
                        file=sys.stderr,
                    )
            choice = [name.strip() for name in args.tool_choice.split(",") if name.strip()]
            # The run reads what was loaded for it; with nothing loaded, the memory graph when it holds the
            # question, else every document in the home (runtime/session/sources.py).
            # The run's episode is written and its refinement queued; `loci memory refine` or a worker runs it.
            answered = await ask(session, args.task, loaded, tool_choice=choice)
    finally:
        await model.aclose()
    run_id, result, source = answered.run_id, answered.result, answered.source
    shown = {"run_id": run_id, **result.as_json()}
    if source is not None:
        shown.update(source=source.name, source_why=source.why)
        for item, ids in zip(shown["evidence"], answered.memories, strict=False):
            if ids:
                item["memories"] = [node_ref(i) for i in ids]
    print(json.dumps(shown, ensure_ascii=False, indent=2) if args.json else as_text(result, answered.memories))
    if source is not None and not args.json:
        where = "the memory graph" if source.name == "memory" else "the home's documents"
        print(f"loci: answered from {where} ({source.why})", file=sys.stderr)
    if not args.json and not args.no_episode:
        print(f"run {run_id}: loci feedback {run_id} good|bad", file=sys.stderr)
    return 0


def print_trace(trace: TurnTrace) -> None:
    if trace.plan is not None:
        print(f"[run] {trace.plan.describe()}", file=sys.stderr)
    action = trace.action
    what = (
        f"answer {json.dumps(action.answer)[:100]}"
        if action.is_answer
        else f"{action.tool}({json.dumps(action.arguments, ensure_ascii=False)[:100]})"
    )
    regions = " ".join(f"{k}={v}" for k, v in trace.prompt_tokens.items())
    result = f" -> {trace.observation_id} {trace.result_tokens} tok" if trace.observation_id else ""
    result += f" (repeats {trace.repeated}: not run again)" if trace.repeated else ""
    result += " (state cut to its budget)" if trace.state_cut else ""
    retry = f" retries={trace.retries}" if trace.retries else ""
    print(
        f"[turn {trace.turn}] {what}{result} | prompt {regions} | "
        f"evaluated {trace.evaluated_tokens} reused {trace.reused_tokens}"
        f" | {trace.seconds:.2f}s{retry}",
        file=sys.stderr,
    )


def as_text(result: RunResult, memories: list[list[int]] | None = None) -> str:
    """The answer and its evidence for a terminal: control characters in either are shown escaped. A span of
    recalled memories is headed by their ids (`memories`, one list a span)."""
    lines = [safe(result.answer)]
    if result.status != "done":
        lines.append(f"(partial: {safe(result.reason or '')})")
    for number, cited in enumerate(result.evidence):
        ids = memories[number] if memories and number < len(memories) else []
        where = " ".join(node_ref(i) for i in ids) if ids else f"{safe(cited.id)} lines {cited.start}-{cited.end}"
        lines.append(f"\n--- {where}")
        lines.append(safe(cited.text.rstrip()))
    return "\n".join(lines)
