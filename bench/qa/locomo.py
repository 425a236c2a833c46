"""The LoCoMo set of `loci bench qa --data FILE`: answers on real conversations, Loci against plain retrieval.

Questions of categories 1 (multi-hop), 2 (temporal) and 4 (single-hop) are
sampled with the seed from a LoCoMo-format file, and each conversation is
written out as one text file, a turn a line (`[8 May 2023] Caroline: ...`),
as a user would have it. Each question is then answered three ways, in the
same run, on the same loaded model:

- `loci`: the `loci run` path, a fresh home per question, the conversation
  loaded as a file (`runtime.session.session.open_session`, then `agent.run`);
- `direct`: the conversation's head, cut to the model's window, and the
  question, in one prompt;
- `rag`: plain BM25 (k1 1.5, b 0.75, every word of the question) over the
  turns, its top `RAG_K` turns in the order found, and the same prompt.

Answers are scored as LoCoMo scores them: token F1 after normalising
(lowercase, punctuation and the articles a, an, the dropped, words
Porter-stemmed as LoCoMo's scorer does, here by SQLite FTS5's stemmer),
and `hit` when the normalised gold answer is contained in the normalised
answer, as whole words. `recited` counts Loci answers holding a sentence of
the prompt's own text (system prompts, worked examples, instructions) that
the conversation does not hold. Loci and rag answer each question side by
side; `direct` answers them all afterwards, a conversation's questions
together, so a local model reuses the KV cache of their shared head (the
conversation). Each answer is printed on stderr as it ends, so a run cut short
still says what it measured.
"""

from __future__ import annotations

import json
import math
import random
import re
import sqlite3
import statistics
import string
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loci.memory.errors import ModelBehaviorError, UsageError
from loci.memory.graph.dates import spoken_date
from loci.memory.graph.fts.sqlite import stems as term_stems
from loci.memory.imports.locomo import turns_of as locomo_turns
from loci.runtime.loop.decide import INSTRUCTIONS
from loci.runtime.loop.records import RunConfig
from loci.runtime.models.base import Model, Request
from loci.runtime.prompt.build import TEMPLATE_OVERHEAD, fit
from loci.runtime.prompt.regions import EXAMPLE_TEXTS, PLAIN, RULES
from loci.runtime.reading.answers import sentences
from loci.runtime.session.session import open_session

__all__ = [
    "prompted",
    "ANSWER_TOKENS",
    "ARMS",
    "CATEGORIES",
    "PROMPT",
    "LocomoQuestion",
    "bm25_top",
    "contains",
    "f1",
    "locomo_set",
    "normalise",
    "run_locomo",
]

CATEGORIES = (1, 2, 4)
ARMS = ("loci", "rag", "direct")
RAG_K = 8
ANSWER_TOKENS = 48
PROMPT = "{context}\n\nAnswer the question from the lines above, in a few words.\nQuestion: {question}\nAnswer:"
_ARTICLES = re.compile(r"\b(a|an|the)\b")


@dataclass(frozen=True)
class LocomoQuestion:
    question: str
    answer: str
    category: int
    conversation: str  # the sample's id
    lines: tuple[str, ...]  # the conversation, a turn a line


def normalise(text: str) -> str:
    text = "".join(c for c in str(text).lower() if c not in set(string.punctuation))
    return " ".join(_ARTICLES.sub(" ", text).split())


def f1(answer: str, gold: str, stems: sqlite3.Connection) -> float:
    """LoCoMo's token F1 of `answer` against `gold`, both normalised and Porter-stemmed (FTS5's stemmer, on the
    in-memory connection `stems`)."""
    got, want = _stemmed(normalise(answer).split(), stems), _stemmed(normalise(gold).split(), stems)
    common = sum((Counter(got) & Counter(want)).values())
    if not common:
        return 0.0
    precision, recall = common / len(got), common / len(want)
    return 2 * precision * recall / (precision + recall)


def contains(answer: str, gold: str) -> bool:
    """Whether the normalised gold answer is in the normalised answer, as whole words ("2" is not in "27")."""
    return f" {normalise(gold)} " in f" {normalise(answer)} "


def _stemmed(words: list[str], conn: sqlite3.Connection) -> list[str]:
    found = term_stems(conn, list(dict.fromkeys(words))) if words else {}
    return [stem for word in words for stem in found.get(word, [word])[:1]]


def locomo_set(path: Path, count: int, seed: int) -> list[LocomoQuestion]:
    """`count` questions of `CATEGORIES` drawn with `seed` from the LoCoMo file at `path`."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise UsageError(f"no LoCoMo file at {path}") from exc
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path} is not a readable JSON file: {exc}") from exc
    if not isinstance(data, list) or not all(isinstance(s, dict) and "conversation" in s for s in data):
        raise UsageError(f"{path} is not in the LoCoMo format (a list of samples with a conversation)")
    pool = []
    for number, sample in enumerate(data):
        lines = tuple(_line(turn) for turn in locomo_turns(sample))
        name = str(sample.get("sample_id") or number)
        pool += [
            LocomoQuestion(str(q["question"]), str(q["answer"]), int(q["category"]), name, lines)
            for q in sample.get("qa") or []
            if q.get("category") in CATEGORIES and "answer" in q
        ]
    chosen = random.Random(seed).sample(pool, min(count, len(pool)))
    return sorted(chosen, key=lambda q: q.conversation)  # a conversation's questions together: its prefix is reused


def _line(turn: Any) -> str:
    caption = f" [shares an image: {turn.image}]" if turn.image else ""
    text = " ".join((turn.text + caption).split())
    return f"[{spoken_date(turn.said)}] {turn.speaker}: {text}" if turn.said else f"{turn.speaker}: {text}"


def bm25_top(lines: tuple[str, ...], query: str, k: int = RAG_K) -> list[str]:
    """Plain BM25 over the lines, every word of the query counted: the best `k`, best first."""
    docs = [re.findall(r"\w+", line.lower()) for line in lines]
    words = set(re.findall(r"\w+", query.lower()))
    frequency = Counter(word for doc in docs for word in set(doc) if word in words)
    average = sum(map(len, docs)) / max(1, len(docs))

    def score(doc: list[str]) -> float:
        counts = Counter(doc)
        total = 0.0
        for word in words & counts.keys():
            idf = math.log(1 + (len(docs) - frequency[word] + 0.5) / (frequency[word] + 0.5))
            tf = counts[word]
            total += idf * tf * 2.5 / (tf + 1.5 * (0.25 + 0.75 * len(doc) / average))
        return total

    ranked = sorted(range(len(lines)), key=lambda i: -score(docs[i]))
    return [lines[i] for i in ranked[:k]]


async def prompted(model: Model, context: str, question: str) -> str:
    """The same model asked with `PROMPT`: the plain-retrieval and direct arms' one call."""
    reply = await model.generate(
        Request(
            [{"role": "user", "content": PROMPT.format(context=context, question=question)}],
            max_tokens=ANSWER_TOKENS,
            purpose="direct",
        )
    )
    return reply.text.strip()


async def direct(model: Model, q: LocomoQuestion) -> str:
    frame = model.count_tokens(PROMPT.format(context="", question=q.question))
    room = model.context_window - ANSWER_TOKENS - TEMPLATE_OVERHEAD - frame - 8
    return await prompted(model, fit("\n".join(q.lines), room, model.count_tokens)[0], q.question)


async def rag(model: Model, q: LocomoQuestion) -> str:
    return await prompted(model, "\n".join(bm25_top(q.lines, q.question)), q.question)


async def loci(model: Model, q: LocomoQuestion, config: RunConfig) -> str:
    with tempfile.TemporaryDirectory(prefix="loci-locomo-") as home:
        path = Path(home) / f"{q.conversation}.txt"
        path.write_text("\n".join(q.lines) + "\n", encoding="utf-8")
        try:
            async with open_session(model, Path(home) / "loci.db", config, files=[path]) as session:
                return (await session.agent.run(q.question)).answer
        except ModelBehaviorError as exc:  # never a valid action: a wrong answer, not a crash
            return f"(failed: {exc})"


def recited(answer: str, conversation: str, frame: str) -> bool:
    """Whether `answer` holds a sentence of the prompt's own text that the conversation does not hold."""
    flat_frame, flat_material = _flat(frame), _flat(conversation)
    return any(
        len(flat) >= 8 and flat in flat_frame and flat not in flat_material for flat in map(_flat, sentences(answer))
    )


def _flat(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


async def run_locomo(
    model: Model, questions: list[LocomoQuestion], config: RunConfig, arms: Sequence[str] = ARMS
) -> dict[str, Any]:
    """Every question on each of `arms` (all three by default); the flat `locomo_*` keys."""
    systems: dict[str, Callable[[LocomoQuestion], Awaitable[str]]] = {
        "loci": lambda q: loci(model, q, config),
        "direct": lambda q: direct(model, q),
        "rag": lambda q: rag(model, q),
    }
    unknown = [arm for arm in arms if arm not in ARMS]
    if unknown:
        raise UsageError(f"unknown arms {', '.join(unknown)}; choose from {', '.join(ARMS)}")
    scores: dict[str, list[tuple[float, bool, float]]] = {name: [] for name in ARMS if name in arms}
    frame = "\n".join([PLAIN, RULES, *EXAMPLE_TEXTS, *INSTRUCTIONS])
    recitals = 0
    # loci and rag side by side, question by question; then direct, whose prompts share the conversation's head
    order = [(q, name) for q in questions for name in ("loci", "rag") if name in scores]
    order += [(q, "direct") for q in questions if "direct" in scores]
    with sqlite3.connect(":memory:") as stems:
        for q, name in order:
            started = time.monotonic()
            answer = await systems[name](q)
            seconds = time.monotonic() - started
            score, hit = f1(answer, q.answer, stems), contains(answer, q.answer)
            scores[name].append((score, hit, seconds))
            if name == "loci" and recited(answer, "\n".join(q.lines), frame):
                recitals += 1
            print(
                f"locomo {len(scores[name])}/{len(questions)} cat{q.category} {name}: f1={score:.2f} hit={int(hit)} "
                f"{seconds:.1f}s gold={q.answer[:40]!r} answer={answer[:100]!r}",
                file=sys.stderr,
                flush=True,
            )
    report: dict[str, Any] = {"locomo_n": len(questions)}
    for name, rows in scores.items():
        report[f"locomo_{name}_f1"] = round(statistics.fmean(r[0] for r in rows), 3) if rows else 0.0
        report[f"locomo_{name}_hit"] = round(statistics.fmean(r[1] for r in rows), 3) if rows else 0.0
    for name in scores:
        seconds = [r[2] for r in scores[name]]
        report[f"locomo_{name}_s_median"] = round(statistics.median(seconds), 2) if seconds else 0.0
    report["locomo_recited"] = recitals
    return report
