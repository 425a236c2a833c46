"""Every bad input to `digest()` gets a clear error and leaves no job behind; PDFs are read by their text layer."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from loci.memory.engines.sqlite.store import Store
from loci.memory.errors import NotFoundError, UsageError
from loci.memory.records.digest_jobs import DigestJobs
from loci.runtime.digest.run import digest, resume
from loci.runtime.models.base import Request
from loci.runtime.models.scripted import ScriptedModel
from tests.runtime.digest_helpers import write_doc


def pdf(path: Path, pages: list[str | None]) -> Path:
    """A minimal PDF, one page per item: a text layer with that line, or (None) a page with no text."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", ""]
    kids = []
    for text in pages:
        content = "" if text is None else f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET"
        objects.append(f"<< /Length {len(content)} >>\nstream\n{content}\nendstream")
        kids.append(len(objects) + 1)
        resources = "/Resources << /Font << /F1 FONT 0 R >> >>"
        page = f"/Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {len(objects)} 0 R {resources}"
        objects.append(f"<< {page} >>")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    font = len(objects)
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(kids)} >>"
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body.replace('FONT', str(font))}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))
    return path


async def no_jobs(db: Path) -> bool:
    async with await Store.open(db) as store:
        return await DigestJobs(store).list() == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty"),
        (b"  \n\t\n   \n", "only whitespace"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4, "looks binary"),
    ],
)
async def test_a_file_with_nothing_to_read_is_refused(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "input.txt"
    path.write_bytes(content)
    with pytest.raises(UsageError, match=message):
        await digest([path], "Anything?", model=ScriptedModel([]), db=tmp_path / "loci.db")
    assert not (tmp_path / "loci.db").exists() or await no_jobs(tmp_path / "loci.db")


async def test_a_missing_file_and_a_directory_are_refused(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="no such file"):
        await digest([tmp_path / "nope.md"], "Anything?", model=ScriptedModel([]), db=tmp_path / "loci.db")
    with pytest.raises(UsageError, match="is a directory"):
        await digest([tmp_path], "Anything?", model=ScriptedModel([]), db=tmp_path / "loci.db")


@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        ({"chunk_tokens": 63}, "--chunk-tokens must be at least 64"),
        ({"chunk_tokens": 9_000}, "larger than the model's 8,192-token window"),
        ({"memory_tokens": 8_192}, "--memory-tokens 8192 is over the model's 8,192-token window"),
        ({"memory_tokens": 4_000}, "leaves no room for a chunk"),
        ({"chunk_tokens": 6_000, "memory_tokens": 1_024}, "use --chunk-tokens"),
        ({"memory_tokens": 8}, "--memory-tokens must be at least"),
    ],
)
async def test_sizes_that_do_not_fit_the_window_are_refused_before_a_job_exists(
    tmp_path: Path, sizes: dict[str, int], message: str
) -> None:
    doc = write_doc(tmp_path / "log.txt")
    with pytest.raises(UsageError, match=message):
        await digest([doc], "Anything?", model=ScriptedModel([]), db=tmp_path / "loci.db", strategy="stream", **sizes)
    assert not (tmp_path / "loci.db").exists() or await no_jobs(tmp_path / "loci.db")


async def test_an_empty_question_and_an_unknown_strategy_are_refused(tmp_path: Path) -> None:
    doc = write_doc(tmp_path / "log.txt")
    with pytest.raises(UsageError, match="question is empty"):
        await digest([doc], "  ", model=ScriptedModel([]), db=tmp_path / "loci.db")
    with pytest.raises(UsageError, match="unknown strategy 'skim'"):
        await digest([doc], "Code?", model=ScriptedModel([]), db=tmp_path / "loci.db", strategy="skim")


async def test_resume_refuses_an_unknown_job_and_a_file_changed_since(tmp_path: Path) -> None:
    doc, db = write_doc(tmp_path / "log.txt", lines=6), tmp_path / "loci.db"
    with pytest.raises(NotFoundError, match="no digest job 41"):
        await resume(41, model=ScriptedModel([]), db=db)
    model = ScriptedModel(["[1] x"])  # the answer call finds no step: the job fails after its one chunk
    with pytest.raises(Exception, match="ran out of steps"):
        await digest([doc], "Code?", model=model, db=db, strategy="stream", chunk_tokens=64, memory_tokens=64)
    doc.write_text(doc.read_text() + "one more line\n")
    async with await Store.open(db) as store:
        (job,) = await DigestJobs(store).list()
    with pytest.raises(UsageError, match="changed since the job started"):
        await resume(job.id, model=ScriptedModel([]), db=db)
    async with await Store.open(db) as store:
        assert (await DigestJobs(store).get(job.id)).state["chunk"] == 1  # the checkpoint is untouched


async def test_a_pdf_is_read_through_its_text_layer(tmp_path: Path) -> None:
    path = pdf(tmp_path / "report.pdf", ["The harbour gate code is 7316.", "Page two says little."])

    def read(request: Request) -> str:
        text = request.messages[-1]["content"]
        assert "[page 1]" in text and "gate code is 7316" in text and "[page 2]" in text
        return "7316"

    record = await digest([path], "What is the gate code?", model=ScriptedModel([read]), db=tmp_path / "loci.db")
    assert record["answer"] == "7316" and record["evidence"][0]["name"] == "report.pdf"


async def test_a_pdf_without_a_text_layer_says_so(tmp_path: Path) -> None:
    path = pdf(tmp_path / "scan.pdf", [None, None])
    with pytest.raises(UsageError, match="has no text layer"):
        await digest([path], "Anything?", model=ScriptedModel([]), db=tmp_path / "loci.db")


async def test_a_pdf_without_the_pdf_extra_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = pdf(tmp_path / "report.pdf", ["Some text."])
    monkeypatch.setitem(sys.modules, "pypdf", None)  # as if pypdf were not installed
    with pytest.raises(UsageError, match=r"pip install 'loci-agent\[pdf\]'"):
        await digest([path], "Anything?", model=ScriptedModel([]), db=tmp_path / "loci.db")


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("notes.md", "# Harbour\n\nThe gate code is 7316.\n"),
        ("gate.py", "def gate_code() -> int:\n    return 7316  # the gate code\n"),
        ("gate.json", '{"harbour": {"gate code": 7316}}\n'),
        ("gates.jsonl", '{"gate": "north", "code": 1111}\n{"gate": "harbour", "code": 7316}\n'),
    ],
)
async def test_markdown_code_json_and_jsonl_are_read_as_text(tmp_path: Path, name: str, content: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")

    def read(request: Request) -> str:
        assert "7316" in request.messages[-1]["content"]
        return "7316"

    record = await digest([path], "What is the gate code?", model=ScriptedModel([read]), db=tmp_path / "loci.db")
    assert record["answer"] == "7316" and record["evidence"][0]["name"] == name
