"""`loci digest` and `loci jobs` as a person runs them: real processes, a real kill -9, a real resume."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from loci.runtime.cli.main import main
from loci.runtime.digest.progress import ProgressBar, progress_wanted
from loci.runtime.digest.run import Progress
from tests.runtime.digest_helpers import write_doc

ROOT = Path(__file__).resolve().parents[3]

CHILD = """
import sys, anyio
from loci.runtime.digest.run import digest
from loci.runtime.models.scripted import ScriptedModel
from tests.runtime.digest_helpers import WHOLE, memory_step

def block(request):
    print("blocked", flush=True)
    sys.stdin.read()  # the parent never writes: this waits until the process is killed

model = ScriptedModel([memory_step, memory_step, block])
anyio.run(lambda: digest([sys.argv[1]], WHOLE, model=model, db=sys.argv[2],
                         strategy="stream", chunk_tokens=64, memory_tokens=64))
"""


def loci(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "loci.runtime.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def script(path: Path, replies: list[str]) -> str:
    path.write_text(json.dumps(replies), encoding="utf-8")
    return f"scripted:{path}"


def test_kill_9_then_resume_reads_only_the_chunks_not_yet_read(tmp_path: Path, home: str) -> None:
    doc, db = write_doc(tmp_path / "log.txt"), home
    command = [sys.executable, "-c", CHILD, str(doc), str(db)]
    with subprocess.Popen(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as child:
        try:
            ready, _, _ = select.select([child.stdout], [], [], 60)
            assert ready and child.stdout.readline().strip() == "blocked"  # inside the model call for chunk 3
            os.kill(child.pid, signal.SIGKILL)
            assert child.wait(timeout=30) == -signal.SIGKILL
        finally:
            if child.poll() is None:
                child.kill()
    listed = loci("jobs", "--db", str(db), "--json")
    (job,) = json.loads(listed.stdout)
    assert (
        job["status"] == "interrupted"
        and job["chunks"] == 2
        and (job["tokens_read"], job["tokens_total"]) == (120, 300)
    )

    # Exactly the replies for chunks 3, 4 and 5 and the answer: redoing a chunk would run out of steps.
    model = script(tmp_path / "rest.json", ["[3] gate code 7316"] * 3 + ["7316"])
    resumed = loci("digest", "--resume", str(job["id"]), "--db", str(db), "--model", model, "--json")
    assert resumed.returncode == 0, resumed.stderr
    record = json.loads(resumed.stdout)
    assert record["answer"] == "7316" and record["job_id"] == job["id"] and record["model_calls"] == 2 + 4
    assert record["evidence"] == [{"id": "doc:1", "name": "log.txt", "start": 13, "end": 18}]
    assert record["tokens_read"] == 300
    (job,) = json.loads(loci("jobs", "--db", str(db), "--json").stdout)
    assert job["status"] == "done"


def test_digest_prints_the_record_as_json_and_no_progress_bar_into_a_pipe(tmp_path: Path, home: str) -> None:
    doc, db = write_doc(tmp_path / "log.txt"), home
    done = loci(
        "digest", str(doc), "-q", "Code?", "--db", str(db), "--model", script(tmp_path / "r.json", ["7316"]), "--json"
    )
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert set(record) >= {"answer", "evidence", "strategy", "tokens_read", "model_calls", "wall_s", "status", "job_id"}
    assert record["strategy"] == "direct" and done.stderr == ""
    text = loci("jobs", "--db", str(db))
    assert "done" in text.stdout and "Code?" in text.stdout


def test_digest_as_text_prints_the_answer_its_evidence_and_a_summary(tmp_path: Path) -> None:
    doc, db = write_doc(tmp_path / "log.txt"), tmp_path / "loci.db"
    done = loci("digest", str(doc), "-q", "Code?", "--db", str(db), "--model", script(tmp_path / "r.json", ["7316"]))
    assert done.stdout.splitlines() == ["7316", "--- doc:1 log.txt lines 1-30"]
    assert "job 1: direct" in done.stderr and "1 model calls" in done.stderr


def test_a_streamed_lookup_prints_the_found_line_quoted(tmp_path: Path) -> None:
    doc, db = write_doc(tmp_path / "log.txt"), tmp_path / "loci.db"
    model = script(tmp_path / "r.json", ["[3] gate code 7316", "7316"])
    done = loci(
        "digest", str(doc), "-q", "What is the gate code?", "--strategy", "stream", "--chunk-tokens", "64",
        "--memory-tokens", "64", "--db", str(db), "--model", model,
    )  # fmt: skip
    assert done.stdout.splitlines() == [
        "7316",
        '--- doc:1 log.txt line 17: "the harbour gate code is 7316 and nothing else here"',
        "--- doc:1 log.txt lines 13-18",
    ]
    assert "2 model calls" in done.stderr  # the chunk that holds line 17, and the answer


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["digest", "-q", "Code?"], "give the files to digest"),
        (["digest", "a.md"], "give the question"),
        (["digest", "--resume", "3", "a.md"], "--resume takes the job's own files"),
        (["digest", "--jobs", "jobs.jsonl"], "--jobs needs --out"),
        (["digest", "a.md", "-q", "x", "--out", "r.jsonl"], "--out goes with --jobs"),
    ],
)
def test_bad_command_lines_exit_2_with_a_clear_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_batch_jobs_stream_results_and_a_failed_job_does_not_stop_the_others(tmp_path: Path) -> None:
    write_doc(tmp_path / "a.txt")
    write_doc(tmp_path / "b.txt", lines=12, needle_at=4)
    (tmp_path / "blank.txt").write_text("  \n\n", encoding="utf-8")  # found by the check, refused when its job runs
    jobs = tmp_path / "jobs.jsonl"
    lines = [
        {"paths": ["a.txt"], "question": "Code?"},
        {"paths": "blank.txt", "question": "Code?"},
        {"paths": ["b.txt"], "question": "Code?", "strategy": "direct"},
    ]
    jobs.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    out, model = tmp_path / "results.jsonl", script(tmp_path / "r.json", ["7316", "7316 too"])
    done = loci(
        "digest",
        "--jobs",
        str(jobs),
        "--out",
        str(out),
        "--db",
        str(tmp_path / "loci.db"),
        "--model",
        model,
        "--concurrency",
        "3",
    )
    assert done.returncode == 1 and "failed: lines 2" in done.stderr
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["line"], r["status"]) for r in results] == [(1, "done"), (2, "failed"), (3, "done")]
    assert results[0]["answer"] == "7316" and results[2]["answer"] == "7316 too"
    assert "only whitespace" in results[1]["error"]


def test_a_bad_jobs_file_is_refused_before_any_job_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_doc(tmp_path / "a.txt")
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text('{"paths": ["a.txt"], "question": "Code?"}\n{"paths": ["a.txt"], "question": \n', encoding="utf-8")
    out = tmp_path / "results.jsonl"
    assert main(["digest", "--jobs", str(jobs), "--out", str(out), "--model", "scripted:none.json"]) == 2
    assert "line 2 is not JSON" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ({"paths": ["a.txt", "missing.txt"], "question": "Code?"}, "missing.txt: no such file"),
        ({"paths": ".", "question": "Code?"}, "is not a file"),
    ],
)
def test_a_jobs_file_naming_a_missing_file_is_refused_before_job_1_runs(
    tmp_path: Path, second: dict[str, Any], message: str
) -> None:
    write_doc(tmp_path / "a.txt")
    jobs, out, db = tmp_path / "jobs.jsonl", tmp_path / "results.jsonl", tmp_path / "loci.db"
    lines = [{"paths": ["a.txt"], "question": "Code?"}, second]
    jobs.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    done = loci(
        "digest",
        "--jobs",
        str(jobs),
        "--out",
        str(out),
        "--db",
        str(db),
        "--model",
        script(tmp_path / "r.json", ["7316"]),
    )
    assert done.returncode == 2 and "jobs.jsonl line 2: " in done.stderr and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not out.exists() and not db.exists()  # job 1 never ran: no result, no home, no job row


def test_the_progress_bar_shows_tokens_chunks_calls_and_an_eta() -> None:
    sink = io.StringIO()
    console = Console(file=sink, force_terminal=True, width=160)
    with ProgressBar(console=console) as bar:
        bar.update(
            Progress(7, "stream", "reading", tokens_read=120, tokens_total=300, chunks=2, chunks_total=5, model_calls=2)
        )
    shown = sink.getvalue()
    assert (
        "job 7 stream" in shown
        and "120/300" in shown
        and "chunk 2/5" in shown
        and "2 calls" in shown
        and "ETA" in shown
    )


def test_the_eta_is_estimated_from_the_chunks_done_even_when_a_chunk_takes_minutes() -> None:
    # A small model spends about a minute a chunk: rich's own estimate, from the samples of its last
    # 30 seconds, had never more than one and showed -:--:-- for the whole job.
    now = [100.0]
    sink = io.StringIO()
    console = Console(file=sink, force_terminal=True, width=200, color_system=None)
    with ProgressBar(console=console, clock=lambda: now[0]) as bar:
        for chunk in range(4):
            bar.update(
                Progress(
                    3, "stream", "reading", tokens_read=chunk * 100, tokens_total=1000, chunks=chunk, chunks_total=10
                )
            )
            now[0] += 60.0
    last = sink.getvalue().rsplit("job 3 stream", 1)[1]
    assert "chunk 3/10" in last and "ETA 0:07:00" in last  # 3 chunks in 180 s, 7 left


def test_the_progress_bar_is_off_when_quiet_or_when_stderr_is_not_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert (
        progress_wanted(False, Tty()) and not progress_wanted(True, Tty()) and not progress_wanted(False, io.StringIO())
    )


def test_the_progress_line_fits_a_narrow_terminal() -> None:
    # 612,368 tokens of 2.2 MB in an 80-column terminal read `612368… tokens • … 0:00:…`.
    for width in (80, 60, 48):
        sink = io.StringIO()
        console = Console(file=sink, force_terminal=True, width=width, color_system=None)
        with ProgressBar(console=console, clock=lambda: 100.0) as bar:
            big = Progress(12, "stream", "reading", tokens_read=204_000, tokens_total=612_368, chunks=9, chunks_total=9)
            bar.update(big)
            bar.update(dataclasses.replace(big, chunks_total=27))
        lines = [line for line in sink.getvalue().replace("\r", "\n").splitlines() if "job 12" in line]
        shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", lines[-1])
        assert len(shown) <= width and "…" not in shown
        assert "204k/612k tokens" in shown and "ETA" in shown
