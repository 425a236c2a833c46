"""`loci bench navigate`: what navigating a large corpus costs, through the tools only.

A synthetic corpus of a few million tokens hides planted facts ("The access
code for vault NAME is CODE."), among decoys that share every word but the
vault's name. A scripted, deterministic searcher answers one question per
fact using only the `context` MCP tools, called through an in-process MCP
client exactly as the runtime calls them: search for the question's words,
read the matching line of each hit in turn until the answer's pattern
appears, answer. It measures the navigation overhead (tool calls, tokens the
tools return, which is what a model would have to read) without a model's
quality in the way. The same questions then go through the whole turn loop (`agent` in the
report, see `bench/context/navigate_agent.py`): turns and prompt tokens per question.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp import Client

from loci.bench.context.corpus import Corpus, token_counter
from loci.bench.context.navigate_agent import navigate_with_agent
from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import UsageError
from loci.servers.context import build_context_server
from loci.tools.context import ContextTools

__all__ = ["add_arguments", "run"]

FILE_TOKENS = 500_000
DECOYS_PER_FACT = 3
MAX_READS = 5


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tokens", type=int, default=3_000_000, help="corpus size in tokens (default 3M)")
    parser.add_argument("--questions", type=int, default=20, help="planted facts to find")
    parser.add_argument("--counter", choices=["auto", "tiktoken", "estimate"], default="auto", help="token counter")
    parser.add_argument("--seed", type=int, default=3)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    counter_name, count = token_counter(args.counter)
    rng = random.Random(args.seed)
    facts, plants = _plant(rng, args.questions, args.tokens)
    with tempfile.TemporaryDirectory(prefix="loci-navigate-") as tmp:
        Corpus(args.seed).write(Path(tmp) / "corpus", args.tokens, FILE_TOKENS, count, plants)
        async with await Store.open(Path(tmp) / "bench.db") as store:
            contexts = ContextStore(store, count)
            started = time.perf_counter()
            loaded = await contexts.add_directory(Path(tmp) / "corpus")
            load_s = time.perf_counter() - started
            started = time.perf_counter()
            async with Client(build_context_server(ContextTools(contexts))) as client:
                per_question = [await _navigate(client, name, code, count) for name, code in facts]
            navigate_s = time.perf_counter() - started
            started = time.perf_counter()
            agent = await navigate_with_agent(contexts, facts, count)
            agent["seconds"] = round(time.perf_counter() - started, 2)
    corpus_tokens = sum(o.tokens for o in loaded.objects)
    calls = sum(q["tool_calls"] for q in per_question)
    returned = sum(q["tokens_returned"] for q in per_question)
    found = sum(q["found"] for q in per_question)
    n = max(1, len(per_question))
    return {
        "bench": "navigate",
        "counter": counter_name,
        "corpus_tokens": corpus_tokens,
        "files": len(loaded.objects),
        "load_seconds": round(load_s, 2),
        "questions": len(per_question),
        "found": found,
        "found_rate": round(found / n, 3),
        "tool_calls": calls,
        "tool_calls_per_question": round(calls / n, 2),
        "tokens_returned": returned,
        "tokens_returned_per_question": round(returned / n, 1),
        "tokens_returned_share_of_corpus": round(returned / n / max(1, corpus_tokens), 8),
        "navigate_seconds": round(navigate_s, 2),
        "agent": agent,
        "per_question": per_question,
    }


def _plant(rng: random.Random, questions: int, tokens: int) -> tuple[list[tuple[str, str]], dict[int, list[str]]]:
    """`(vault name, code)` per question, and the sentences to put at which corpus line."""
    total_lines = max(10, tokens // 15)  # about 15 tokens a line: a generous bound on the line count
    if not 1 <= questions <= 200:
        raise UsageError(f"--questions must be between 1 and 200, not {questions}")
    numbers = rng.sample(range(100, 1000), questions * (1 + DECOYS_PER_FACT))
    names = [f"{rng.choice(['Zephyr', 'Orion', 'Basalt', 'Juniper', 'Cobalt'])}-{number}" for number in numbers]
    facts, plants = [], {}
    for index, name in enumerate(names):
        letters = "ABCDEFGHJKLMNPQRSTUVWXYZ"
        code = f"{rng.randint(1000, 9999)}-{rng.choice(letters)}{rng.choice(letters)}"
        line = rng.randrange(total_lines // 2)  # well inside the corpus whatever the real line count
        plants.setdefault(line, []).append(f"The access code for vault {name} is {code}.\n")
        if index < questions:
            facts.append((name, code))
    return facts, plants


async def _navigate(client: Client, name: str, code: str, count: Callable[[str], int]) -> dict[str, Any]:
    """Search, then read the matching lines one hit at a time until the answer shows."""
    calls, returned, answer = 0, 0, None
    pattern = re.compile(rf"access code for vault {re.escape(name)} is (\S+?)\.")
    result = await client.call_tool("context_search", {"query": f"access code vault {name}", "k": MAX_READS})
    calls += 1
    returned += count(result.content[0].text)
    hits = [] if result.is_error else result.structured_content["result"]
    for hit in hits:
        read = await client.call_tool("context_read", {"id": hit["id"], "start": hit["line"], "end": hit["line"]})
        calls += 1
        returned += count(read.content[0].text)
        if not read.is_error and (match := pattern.search(read.structured_content["text"])):
            answer = match.group(1)
            break
    return {
        "question": f"What is the access code for vault {name}?",
        "answer": answer,
        "expected": code,
        "found": answer == code,
        "tool_calls": calls,
        "tokens_returned": returned,
    }


if __name__ == "__main__":
    import anyio

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    print(json.dumps(anyio.run(run, parser.parse_args()), indent=1))
