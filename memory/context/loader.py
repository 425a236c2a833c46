"""Streaming text into chunks: never the whole file in memory.

A source (a file, stdin, a string) is read in blocks of `BLOCK_BYTES`,
decoded incrementally as UTF-8 and cut into chunks of whole lines, at most
`CHUNK_LINES` lines or about `CHUNK_CHARS` characters. A line longer than a
chunk is cut into pieces that keep its line number, so a 50 MB minified
JSON line is as cheap to load and read as a book. Each chunk carries its
line, character and token offsets; tokens are counted once per chunk with
the counter passed in (the model's own tokenizer).

Bytes that are not UTF-8 are replaced with U+FFFD and counted
(`replaced_bytes`), so a Latin-1 file loads, visibly damaged, instead of
failing. A source whose first block holds NUL bytes, or is mostly
undecodable, is binary and is refused (skipped in a directory).

`ChunkStream.next_batch` is synchronous and meant for a worker thread: the
store pulls about a megabyte of chunks at a time and inserts them in one
transaction, so memory stays flat whatever the size of the source.
"""

from __future__ import annotations

import codecs
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

__all__ = [
    "BATCH_CHARS",
    "CHUNK_CHARS",
    "CHUNK_LINES",
    "SNIFF_BYTES",
    "Chunk",
    "ChunkStream",
    "binary_reason",
    "detect_format",
    "split_lines",
]

CHUNK_LINES = 40
CHUNK_CHARS = 4_000
BLOCK_BYTES = 1 << 20
BATCH_CHARS = 1 << 20
SNIFF_BYTES = 8_192

FORMATS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".mts": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}
OTHER_CODE = {".c", ".h", ".cc", ".cpp", ".hpp", ".java", ".kt", ".rb", ".sh", ".sql", ".toml", ".yaml", ".yml"}

_counts = threading.local()


def _count_and_replace(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    _counts.replaced = getattr(_counts, "replaced", 0) + exc.end - exc.start
    return "\ufffd", exc.end


codecs.register_error("loci.count-replace", _count_and_replace)


@dataclass(frozen=True)
class Chunk:
    seq: int
    start_line: int
    end_line: int
    start_char: int
    end_char: int
    start_token: int
    end_token: int
    text: str


def detect_format(name: str) -> str:
    """`markdown`, `python`, `javascript`, `typescript`, `go`, `rust`, `json`, `jsonl`, `code` or `text`."""
    suffix = ("." + name.rsplit(".", 1)[-1].lower()) if "." in name else ""
    if suffix in FORMATS:
        return FORMATS[suffix]
    return "code" if suffix in OTHER_CODE else "text"


def binary_reason(sample: bytes) -> str | None:
    """Why `sample` (the first bytes of a source) looks binary, or None for text."""
    if b"\x00" in sample:
        return "it contains NUL bytes"
    text = sample.decode("utf-8", errors="replace")
    # The last few bytes may be a character cut in half by the sample's end.
    bad = text[:-4].count("\ufffd") - sample[:-8].count(b"\xef\xbf\xbd")
    if sample and bad > len(sample) * 0.3:
        return "most of its bytes are not text"
    return None


def split_lines(text: str) -> list[str]:
    """Lines with their `\\n` kept; only `\\n` ends a line (as in the stored line counts)."""
    lines = text.split("\n")
    last = lines.pop()
    out = [line + "\n" for line in lines]
    if last:
        out.append(last)
    return out


def decode_blocks(first: bytes, read: Callable[[int], bytes], stats: dict[str, int]) -> Iterator[str]:
    """Decode `first` then `read(BLOCK_BYTES)` until empty; count replaced bytes in `stats`."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="loci.count-replace")
    block = first
    while True:
        _counts.replaced = 0
        text = decoder.decode(block, final=not block)
        stats["replaced_bytes"] = stats.get("replaced_bytes", 0) + _counts.replaced
        if text:
            yield text
        if not block:
            return
        block = read(BLOCK_BYTES)


def string_blocks(text: str) -> Iterator[str]:
    for start in range(0, len(text), BLOCK_BYTES):
        yield text[start : start + BLOCK_BYTES]


class ChunkStream:
    """Chunks with offsets from a stream of text blocks; pull them with `next_batch`."""

    def __init__(self, blocks: Iterator[str], count_tokens: Callable[[str], int]) -> None:
        self._blocks = blocks
        self._count = count_tokens
        self._pending = ""
        self._buffer: list[str] = []
        self._buffer_chars = 0
        self._buffer_lines = 0
        self._ready: list[Chunk] = []
        self._done = False
        self.seq = self.chars = self.tokens = 0
        self.line = 1  # the line the next chunk starts on
        self.lines = 0

    @classmethod
    def from_binary(
        cls, source: BinaryIO, first: bytes, count_tokens: Callable[[str], int], stats: dict[str, int]
    ) -> ChunkStream:
        return cls(decode_blocks(first, source.read, stats), count_tokens)

    @classmethod
    def from_text(cls, text: str, count_tokens: Callable[[str], int]) -> ChunkStream:
        return cls(string_blocks(text), count_tokens)

    def next_batch(self, max_chars: int = BATCH_CHARS) -> list[Chunk]:
        """The next chunks, about `max_chars` characters of them; `[]` at the end."""
        size = sum(len(c.text) for c in self._ready)
        while size < max_chars and not self._done:
            block = next(self._blocks, None)
            before = len(self._ready)
            if block is None:
                self._finish()
            else:
                self._feed(block)
            size += sum(len(c.text) for c in self._ready[before:])
        batch, self._ready = self._ready, []
        return batch

    def _feed(self, block: str) -> None:
        lines = (self._pending + block).split("\n")
        self._pending = lines.pop()
        for line in lines:
            self._add_line(line + "\n")
        while len(self._pending) > CHUNK_CHARS:
            self._add(self._pending[:CHUNK_CHARS])
            self._pending = self._pending[CHUNK_CHARS:]

    def _finish(self) -> None:
        if self._pending:
            self._add_line(self._pending)
            self._pending = ""
        self._flush()
        self._done = True

    def _add_line(self, line: str) -> None:
        while len(line) > CHUNK_CHARS:
            self._add(line[:CHUNK_CHARS])
            line = line[CHUNK_CHARS:]
        self._add(line)

    def _add(self, piece: str) -> None:
        if self._buffer and (self._buffer_lines >= CHUNK_LINES or self._buffer_chars + len(piece) > CHUNK_CHARS):
            self._flush()
        self._buffer.append(piece)
        self._buffer_chars += len(piece)
        self._buffer_lines += piece.endswith("\n")

    def _flush(self) -> None:
        if not self._buffer:
            return
        text = "".join(self._buffer)
        ends_line = text.endswith("\n")
        end_line = self.line + text.count("\n") - ends_line
        tokens = self._count(text)
        self._ready.append(
            Chunk(
                self.seq,
                self.line,
                end_line,
                self.chars,
                self.chars + len(text),
                self.tokens,
                self.tokens + tokens,
                text,
            )
        )
        self.seq += 1
        self.chars += len(text)
        self.tokens += tokens
        self.lines = end_line
        self.line = end_line + 1 if ends_line else end_line
        self._buffer, self._buffer_chars, self._buffer_lines = [], 0, 0
