"""`loci doctor`: what a llama.cpp user checks first when a local model misbehaves or crashes.

It prints, in this order, so that the cheap facts are on screen before the
part that can fail: the CPU and the flags that decide which ggml kernels run,
the llama-cpp-python version and llama.cpp's own system info, the
extra-buffer-types verdict in use and where it is cached (deciding it now,
with a probe, if nothing is cached), and then the speed of the bundled
model with that verdict: prompt evaluation (one batch of `--prompt-tokens`)
and generation (`--tokens` greedy tokens, one at a time). The model runs in
this process, through `runtime.models.llama.load`, like every other load.
`--json` prints the same facts as one JSON object instead.

Both forms also report the coding agents' hooks: their last errors, where
they are installed, which installed command fails to start (exit 127: the
client cannot run it) and which hook never ran (runtime/cli/hook_check.py).

`loci doctor --db PATH` checks a home instead: `PRAGMA integrity_check` and
each FTS5 index against its content (`memory.engines.sqlite.health.check_home`), printing
what it found (exit 1 when anything), and lifting the damage mark a failed
write left when the file is whole again. `--db postgresql://…` (or
`$LOCI_DB`) checks a PostgreSQL home: it connects, applies the pending
migrations, and prints the server, the migrations and each table's rows
(`memory.engines.postgres.health`).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio.to_thread

from loci.memory.engines.select import use_engine
from loci.memory.engines.sqlite.health import check_home
from loci.memory.engines.sqlite.store import default_db_path
from loci.memory.errors import BackendError, NotFoundError, UsageError
from loci.memory.location import is_postgres, need_postgres_driver

__all__ = ["cpu_name", "measure_speed", "register"]

FILLER = "The harbor ledger lists every berth, its owner and its fee; the clerk adds each sale with its date. "


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("doctor", help="check the CPU, llama.cpp and the bundled model's speed")
    parser.add_argument("--prompt-tokens", type=int, default=256, help="prompt tokens to evaluate (default 256)")
    parser.add_argument("--tokens", type=int, default=32, help="tokens to generate (default 32)")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: one per core)")
    parser.add_argument(
        "--db",
        default=None,
        help="check this Loci home (a SQLite file, or postgresql://USER@HOST:PORT/DB) instead of llama.cpp",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run)


def cpu_name() -> str:
    """The CPU's model name from /proc/cpuinfo, else what the platform says."""
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            name, _, value = line.partition(":")
            if name.strip() in ("model name", "Model"):
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


async def run(args: argparse.Namespace) -> int:
    if args.db is not None:
        if is_postgres(args.db):
            return await _check_postgres(str(args.db), args.json)
        return await _check_db(Path(args.db), args.json)
    from loci.runtime.models.llama.verdict import cpu_flags

    if args.prompt_tokens < 1 or args.tokens < 1 or (args.threads is not None and args.threads < 1):
        raise UsageError("--prompt-tokens, --tokens and --threads must be at least 1")
    report: dict[str, Any] = {"cpu": cpu_name(), "cores": os.cpu_count(), "cpu_flags": cpu_flags()}
    show = _Printer(args.json)
    show(f"cpu: {report['cpu']} ({report['cores']} logical cores, {platform.machine()})")
    show(f"cpu flags that matter: {' '.join(report['cpu_flags'])}")
    report["hook_errors"], report["hooks"] = _hooks(default_db_path(), show)
    status = await _check_llama(report, show, args)
    if args.json:
        print(json.dumps(report))
    return status


async def _check_db(path: Path, as_json: bool) -> int:
    found = await anyio.to_thread.run_sync(check_home, path.expanduser())
    problems = found["problems"]
    found["hook_errors"], found["hooks"] = _hooks(path.expanduser(), _Printer(as_json))
    if as_json:
        print(json.dumps(found))
        return 1 if problems else 0
    print(f"home: {found['path']}")
    for problem in problems:
        print(f"  {problem}")
    if problems:
        print(f"damaged: {len(problems)} problem{'s' * (len(problems) > 1)} found")
        return 1
    print(f"integrity_check: ok; full-text indexes ok: {', '.join(found['fts_tables']) or 'none'}")
    if found["mark_cleared"]:
        print("the damage mark is lifted: Loci writes to this home again")
    return 0


async def _check_postgres(url: str, as_json: bool) -> int:
    need_postgres_driver()
    from loci.memory.engines.postgres.health import check_postgres

    async with use_engine(url) as store:
        found = await check_postgres(store)
    if as_json:
        print(json.dumps(found))
        return 1 if found["problems"] else 0
    print(f"home: {found['path']} (PostgreSQL {found['server']})")
    for problem in found["problems"]:
        print(f"  {problem}")
    print(f"migrations applied: {len(found['migrations'])}")
    print("rows: " + ", ".join(f"{table} {count}" for table, count in found["rows"].items()))
    return 1 if found["problems"] else 0


def _hooks(db: Path, show: Callable[[str], None]) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """The last errors each coding-agent hook logged beside the home `db`, and where the hooks are installed,
    whether their commands start and when each last ran (runtime/cli/hook_check.py)."""
    from loci.runtime.cli.hook_check import hook_status
    from loci.runtime.cli.hooks import hook_report

    return hook_report(db, show), hook_status(db, show)


async def _check_llama(report: dict[str, Any], show: _Printer, args: argparse.Namespace) -> int:
    from loci.runtime.models.llama.load import default_model_path, process_verdict

    if importlib.util.find_spec("llama_cpp") is None:
        report["llama_cpp_python"] = None
        show("llama-cpp-python: not installed (pip install 'loci-agent[local]')")
        return 1
    import llama_cpp

    report["llama_cpp_python"] = version("llama_cpp_python")
    report["system_info"] = llama_cpp.llama_print_system_info().decode(errors="replace").strip()
    show(f"llama-cpp-python: {report['llama_cpp_python']}")
    show(f"llama.cpp system info: {report['system_info']}")
    try:
        model = default_model_path()
    except NotFoundError as exc:
        show(f"bundled model: {exc}")
        return 1
    verdict = await anyio.to_thread.run_sync(process_verdict, model)
    report.update(extra_bufts=verdict.extra_bufts, verdict=verdict.describe(), verdict_source=verdict.source)
    report["verdict_cache"] = str(verdict.path)
    show(f"verdict: {verdict.describe()}")
    show(f"verdict cache: {verdict.path}")
    threads = args.threads or os.cpu_count() or 2
    speed = await anyio.to_thread.run_sync(measure_speed, model, args.prompt_tokens, args.tokens, threads)
    report.update(model=model.name, **speed)
    show(
        f"speed ({model.name}, extra buffer types {verdict.mode}, {threads} thread{'s' * (threads != 1)}): "
        f"prompt {speed['prompt_tokens_per_second']:.1f} tok/s ({speed['prompt_tokens']} tokens), "
        f"generation {speed['generation_tokens_per_second']:.1f} tok/s ({speed['generated_tokens']} tokens)"
    )
    return 0


class _Printer:
    """Prints each line as soon as it is known, unless the report goes out as one JSON object."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet

    def __call__(self, line: str) -> None:
        if not self.quiet:
            print(line, flush=True)


def measure_speed(model: Path, prompt_tokens: int, tokens: int, threads: int) -> dict[str, Any]:
    """Prompt-evaluation and generation speed of `model`, loaded through `open_llama` (blocking)."""
    from loci.runtime.models.llama.load import open_llama

    n_ctx = prompt_tokens + tokens + 8
    try:
        batch = max(prompt_tokens, 8)
        llm = open_llama(model, n_ctx=n_ctx, n_batch=batch, n_threads=threads, n_threads_batch=threads, verbose=False)
    except (ValueError, RuntimeError, OSError) as exc:
        raise BackendError(f"llama.cpp could not load {model}: {exc}") from exc
    try:
        text = FILLER * (prompt_tokens // 8 + 1)
        prompt = llm.tokenize(text.encode(), add_bos=True)[:prompt_tokens]
        started = time.perf_counter()
        llm.eval(prompt)
        prompt_seconds = time.perf_counter() - started
        started = time.perf_counter()
        for _ in range(tokens):
            llm.eval([llm.sample(temp=0.0)])
        generation_seconds = time.perf_counter() - started
    finally:
        llm.close()
    return {
        "threads": threads,
        "prompt_tokens": len(prompt),
        "prompt_tokens_per_second": len(prompt) / prompt_seconds,
        "generated_tokens": tokens,
        "generation_tokens_per_second": tokens / generation_seconds,
    }
