"""Loading context objects: files, text, streams, directories, and what is refused."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from loci.memory.context.loader import BLOCK_BYTES, CHUNK_CHARS, ChunkStream
from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import NotFoundError, UsageError


async def test_add_file_records_lines_tokens_and_format(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "guide.md"
    path.write_text("# Guide\n\nfirst line\nsecond line\n")
    obj = await ContextStore(store).add_file(path)
    assert obj.id == "doc:1"
    assert (obj.name, obj.lines, obj.chars) == ("guide.md", 4, len(path.read_text()))
    assert obj.tokens > 0
    assert obj.meta["format"] == "markdown"
    assert obj.source == str(path.resolve())


async def test_token_offsets_use_the_counter_passed_in(store: Store) -> None:
    contexts = ContextStore(store, count_tokens=lambda text: len(text.split()))
    obj = await contexts.add_text("obs", "result", "one two three\nfour five\n")
    assert obj.tokens == 5


async def test_non_utf8_bytes_are_replaced_and_counted(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("café olé\n".encode("latin-1") + "real \ufffd kept\n".encode())
    contexts = ContextStore(store)
    obj = await contexts.add_file(path)
    assert obj.meta["replaced_bytes"] == 2
    span = await contexts.read(obj.id)
    assert span.text == "caf\ufffd ol\ufffd\nreal \ufffd kept\n"


async def test_binary_file_is_refused_clearly(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "image.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    with pytest.raises(UsageError, match="binary"):
        await ContextStore(store).add_file(path)
    assert await ContextStore(store).list() == []


async def test_missing_file_and_directory_given_as_file(store: Store, tmp_path: Path) -> None:
    contexts = ContextStore(store)
    with pytest.raises(NotFoundError):
        await contexts.add_file(tmp_path / "nope.txt")
    with pytest.raises(UsageError, match="directory"):
        await contexts.add_file(tmp_path)


async def test_big_file_loads_streaming_in_bounded_chunks(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    line = "the quick brown fox jumps over the lazy dog\n"
    with path.open("w") as out:
        for block in range(3 * BLOCK_BYTES // (len(line) * 1000) + 1):
            out.write(f"block {block}\n" + line * 1000)
        out.write("x" * (3 * CHUNK_CHARS) + "\n")  # one line longer than a chunk
        out.write("needle at the end\n")
    contexts = ContextStore(store)
    obj = await contexts.add_file(path)
    assert obj.chars == path.stat().st_size
    assert obj.lines == path.read_text().count("\n")
    longest = await store.read(lambda db: db.execute("SELECT max(length(text)) FROM context_chunks").fetchone()[0])
    assert longest <= CHUNK_CHARS
    [hit] = await contexts.search("needle", k=1)
    assert hit.line == obj.lines


def test_chunk_stream_reads_blocks_and_yields_batches() -> None:
    text = ("word " * 30 + "\n") * 40_000
    reads: list[int] = []
    source = io.BytesIO(text.encode())

    def read(size: int) -> bytes:
        reads.append(size)
        return source.read(size)

    reader = type("Reader", (), {"read": staticmethod(read)})()
    stream = ChunkStream.from_binary(reader, read(8192), lambda t: len(t) // 4, {})
    batches = []
    while batch := stream.next_batch(max_chars=200_000):
        batches.append(batch)
    assert len(batches) > 5
    assert max(reads) <= BLOCK_BYTES
    assert sum(len(c.text) for b in batches for c in b) == len(text)
    chunks = [c for b in batches for c in b]
    assert all(
        a.end_token == b.start_token and a.end_char == b.start_char for a, b in zip(chunks, chunks[1:], strict=False)
    )
    assert chunks[-1].end_line == 40_000


async def test_add_stream_loads_stdin_like_sources(store: Store) -> None:
    obj = await ContextStore(store).add_stream("stdin", io.BytesIO(b"from a pipe\nsecond\n"))
    assert (obj.id, obj.name, obj.lines) == ("doc:1", "stdin", 2)
    with pytest.raises(UsageError, match="binary"):
        await ContextStore(store).add_stream("stdin", io.BytesIO(b"\x00\x01\x02"))


async def test_directory_loads_recursively_skipping_git_and_binaries(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / "README.md").write_text("# Project\n")
    (root / "src" / "pkg" / "app.py").write_text("def main():\n    pass\n")
    (root / "src" / "data.jsonl").write_text('{"a": 1}\n{"a": 2}\n')
    (root / "src" / "blob.bin").write_bytes(b"\x00\x01binary")
    loaded = await ContextStore(store).add_directory(root)
    names = sorted(o.name for o in loaded.objects)
    assert names == ["project/README.md", "project/src/data.jsonl", "project/src/pkg/app.py"]
    assert [name for name, _ in loaded.skipped] == ["project/src/blob.bin"]
    assert "binary" in loaded.skipped[0][1]
    formats = {o.name: o.meta["format"] for o in loaded.objects}
    assert formats["project/src/pkg/app.py"] == "python"
    assert formats["project/src/data.jsonl"] == "jsonl"


async def test_directory_walk_skips_symlinks_leaving_it(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("password\n")
    (root / "ok.txt").write_text("fine\n")
    os.symlink(secret, root / "link.txt")
    loaded = await ContextStore(store).add_directory(root)
    assert [o.name for o in loaded.objects] == ["project/ok.txt"]
    assert loaded.skipped[0][0] == "project/link.txt"
    assert "outside" in loaded.skipped[0][1]


async def test_roots_refuse_symlink_escape(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("password\n")
    os.symlink(secret, root / "innocent.txt")
    contexts = ContextStore(store, roots=[root])
    with pytest.raises(UsageError, match="symlink.*outside the allowed roots"):
        await contexts.add_file(root / "innocent.txt")


async def test_roots_refuse_dotdot_escape(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("password\n")
    contexts = ContextStore(store, roots=[root])
    with pytest.raises(UsageError, match=r"'\.\.'.*outside the allowed roots"):
        await contexts.add_file(root / ".." / "secret.txt")
    with pytest.raises(UsageError, match="outside the allowed roots"):
        await contexts.add_file("../secret.txt")  # relative paths are taken against the first root
    with pytest.raises(UsageError, match="outside the allowed roots"):
        await contexts.add_directory(tmp_path)
    assert await contexts.list() == []


async def test_roots_allow_files_inside(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "notes.txt").write_text("inside\n")
    contexts = ContextStore(store, roots=[root])
    assert (await contexts.add_file("sub/notes.txt")).name == "notes.txt"
    assert (await contexts.add_file(root / "sub" / ".." / "sub" / "notes.txt")).lines == 1


async def test_unknown_kind_is_a_usage_error(store: Store) -> None:
    with pytest.raises(UsageError, match="unknown context kind"):
        await ContextStore(store).add_text("blob", "x", "text")


async def test_empty_text_is_an_empty_object(store: Store) -> None:
    contexts = ContextStore(store)
    obj = await contexts.add_text("note", "empty", "")
    assert (obj.lines, obj.tokens) == (0, 0)
    with pytest.raises(UsageError, match="empty"):
        await contexts.read(obj.id)


async def test_reloading_an_unchanged_file_reuses_its_object(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("first version\n", encoding="utf-8")
    contexts = ContextStore(store)
    first = await contexts.add_file(path)
    again = await contexts.add_file(path)
    path.write_text("second version, longer\n", encoding="utf-8")
    changed = await contexts.add_file(path)
    assert again.id == first.id
    assert changed.id != first.id and changed.chars > first.chars
    assert len(await contexts.list(["doc"])) == 2
