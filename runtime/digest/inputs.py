"""The files a digest job reads: checked, hashed, then loaded into the context store.

`check_inputs` refuses every bad input before a job exists, so a refused
file leaves no job behind: a missing file, a directory, an empty file or one
of only whitespace, a binary file, a PDF without a text layer (a scan). It
hashes each file (SHA-256, streamed), which is how `--resume` notices a file
that changed since the job started.

`load_inputs` puts the documents into the context store, where every
strategy reads them: `stream` chunk by chunk, `direct` whole, `navigate`
through the context tools. Text, Markdown, code, JSON and JSONL go through
the store's streaming loader (an unchanged file is not loaded twice). A PDF
is read page by page with `pypdf` (the `pdf` extra) and its text streamed
into the same loader, each page opened by a `[page N]` line; a PDF already
loaded with the same hash is reused.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread
import sqlite_utils

from loci.memory.context.loader import SNIFF_BYTES, binary_reason
from loci.memory.context.store import ContextObject, ContextStore
from loci.memory.errors import NotFoundError, UsageError
from loci.memory.projects import writable_project
from loci.memory.regular import open_regular

__all__ = ["Input", "check_inputs", "load_inputs", "pdf_pages"]

HASH_BLOCK = 1 << 20
PDF_EXTRA = "reading a PDF needs the pdf extra: pip install 'loci-agent[pdf]'"


@dataclass(frozen=True)
class Input:
    """One checked file: its resolved path, what it is (`text` or `pdf`), and its SHA-256."""

    path: Path
    kind: str
    sha256: str

    def as_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "kind": self.kind, "sha256": self.sha256}


def check_inputs(paths: Sequence[str | Path]) -> list[Input]:
    """Check and hash every file (blocking: call it in a worker thread); a clear `UsageError` for the first bad one."""
    if not paths:
        raise UsageError("give at least one file to digest")
    return [_check(Path(name)) for name in paths]


def _check(path: Path) -> Input:
    if not path.exists():
        raise NotFoundError(f"{path}: no such file")
    if path.is_dir():
        raise UsageError(f"{path} is a directory; pass its files")
    try:
        with open_regular(path) as handle:
            first = handle.read(SNIFF_BYTES)
            digest, text = _hash(handle, first)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not first:
        raise UsageError(f"{path} is empty: there is nothing to read")
    if first.startswith(b"%PDF-") or path.suffix.lower() == ".pdf":
        _check_pdf(path)
        return Input(path.resolve(), "pdf", digest)
    if reason := binary_reason(first):
        raise UsageError(f"{path} looks binary ({reason}); digest reads text, Markdown, code, JSON and PDF")
    if not text:
        raise UsageError(f"{path} holds only whitespace: there is nothing to read")
    return Input(path.resolve(), "text", digest)


def _hash(handle: io.BufferedReader, first: bytes) -> tuple[str, bool]:
    """The file's SHA-256, and whether it holds anything but whitespace."""
    sha = hashlib.sha256(first)
    text = bool(first.strip())
    while block := handle.read(HASH_BLOCK):
        sha.update(block)
        text = text or bool(block.strip())
    return sha.hexdigest(), text


def _check_pdf(path: Path) -> None:
    """Refuse a PDF that cannot be read or has no text layer; stops at the first page with text."""
    for text in pdf_pages(path):
        if text.strip():
            return
    raise UsageError(f"{path} has no text layer (a scanned PDF?): there is no text to read; run OCR on it first")


def pdf_pages(path: Path) -> Iterator[str]:
    """The text of each page of a PDF, in order, read lazily."""
    try:
        from pypdf import PdfReader
        from pypdf.errors import PyPdfError
    except ImportError:
        raise UsageError(PDF_EXTRA) from None
    try:
        reader = PdfReader(path)
        if reader.is_encrypted:
            raise UsageError(f"{path} is an encrypted PDF; decrypt it first")
        for page in reader.pages:
            yield page.extract_text() or ""
    except (PyPdfError, ValueError, KeyError) as exc:
        raise UsageError(f"cannot read the PDF {path}: {exc}") from exc


class _PdfText(io.RawIOBase):
    """A PDF's text as a UTF-8 byte stream, one page at a time, for the store's streaming loader."""

    def __init__(self, path: Path) -> None:
        self._pages = pdf_pages(path)
        self._number = 0
        self._buffer = b""

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        while not self._buffer:
            text = next(self._pages, None)
            if text is None:
                return 0
            self._number += 1
            self._buffer = f"[page {self._number}]\n{text.rstrip()}\n\n".encode()
        size = min(len(target), len(self._buffer))
        target[:size] = self._buffer[:size]
        self._buffer = self._buffer[size:]
        return size


async def load_inputs(contexts: ContextStore, inputs: Sequence[Input]) -> list[ContextObject]:
    """Each input as a `doc` in the context store, in order."""
    loaded = []
    for item in inputs:
        if item.kind == "pdf":
            loaded.append(await _load_pdf(contexts, item))
        else:
            loaded.append(await contexts.add_file(item.path))
    return loaded


async def _load_pdf(contexts: ContextStore, item: Input) -> ContextObject:
    def find(db: sqlite_utils.Database) -> int | None:
        sql = (
            "SELECT id FROM context_objects WHERE kind = 'doc' AND complete = 1 AND project = ?"
            " AND json_extract(meta, '$.pdf_sha256') = ? ORDER BY id DESC LIMIT 1"
        )
        row = db.execute(sql, [writable_project(contexts.project), item.sha256]).fetchone()
        return row[0] if row else None

    if (number := await contexts.store.read(find)) is not None:
        return await contexts.get(f"doc:{number}")
    source = await anyio.to_thread.run_sync(_PdfText, item.path)
    meta = {"format": "text", "pdf": str(item.path), "pdf_sha256": item.sha256}
    return await contexts.add_stream(item.path.name, io.BufferedReader(source), meta=meta)
