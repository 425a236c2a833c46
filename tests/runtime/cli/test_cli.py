"""`loci` as a user runs it: real subprocesses, real files, clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runtime.cli_helpers import loci, script

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "harbor.md"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-turns", "0"], "--max-turns must be at least 1"),
        (["--file", "/no/such/file.md"], "no such file"),
        (["--file", "/tmp"], "is a directory"),
        (["--model", "llama:/no/such/model.gguf"], "model file not found"),
        (["--model", "bogus:thing"], "bad model spec"),
        (["--model", "openai:m@notaurl"], "is not a URL Loci can call"),
    ],
)
def test_bad_input_exits_2_with_one_clear_line(tmp_path: Path, args: list[str], message: str) -> None:
    done = loci("run", "a task", *args, home=tmp_path)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"PK\x03\x04 not a model")
    done = loci("run", "a task", "--model", f"llama:{fake}", home=tmp_path)
    assert done.returncode == 2
    assert "is not a GGUF model file" in done.stderr


def test_an_unreachable_endpoint_fails_after_retries(tmp_path: Path) -> None:
    done = loci("run", "a task", "--model", "openai:local@http://127.0.0.1:9/v1", home=tmp_path)
    assert done.returncode == 1
    assert "cannot reach http://127.0.0.1:9/v1" in done.stderr
    assert "Traceback" not in done.stderr


def test_non_utf8_file_is_read_with_replacement_and_said_so(tmp_path: Path) -> None:
    latin = tmp_path / "latin.txt"
    latin.write_bytes("caf\xe9 cr\xe8me 42\n".encode("latin-1"))
    model = script(
        tmp_path,
        [
            {"state": "", "tool": "context_read", "arguments": {"id": "doc:1"}},
            {"state": "", "answer": "42", "evidence": [{"id": "doc:1"}]},
        ],
    )
    done = loci("run", "read it", "--file", str(latin), "--model", model, "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "not valid UTF-8; 2 bytes were replaced" in done.stderr
    out = json.loads(done.stdout)
    assert out["status"] == "done" and "caf\ufffd" in out["evidence"][0]["text"]


def test_trace_prints_each_turn_with_region_tokens(tmp_path: Path) -> None:
    evidence = [{"id": "doc:1", "start": 10, "end": 10}]
    model = script(
        tmp_path,
        [{"state": "", "tool": "context_list", "arguments": {}}, {"state": "", "answer": "done", "evidence": evidence}],
    )
    done = loci("run", "list", "--file", str(EXAMPLE), "--model", model, "--trace", home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "[run] mode=whole" in done.stderr and "every tool: parameters unknown" in done.stderr
    assert "[turn 1] context_list({})" in done.stderr
    assert "system=" in done.stderr and "observation=" in done.stderr
    assert done.stdout.split("\n")[0] == "done" and "35 euros" in done.stdout


def test_version_and_models(tmp_path: Path) -> None:
    assert loci("--version", home=tmp_path).stdout.startswith("loci ")
    models = loci("models", home=tmp_path)
    assert models.returncode == 0
    assert "SmolLM2-135M-Instruct.Q4_1.gguf" in models.stdout


@pytest.mark.model
def test_readme_command_one_answers_with_its_evidence_on_the_bundled_model(tmp_path: Path) -> None:
    done = loci(
        "run", "How much does a plot cost?", "--file", str(EXAMPLE), "--json", "--trace", home=tmp_path, timeout=900
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert "35 euros" in out["answer"] and out["status"] == "done"
    assert [(e["id"], e["start"]) for e in out["evidence"]] == [("doc:1", 10)]
    assert out["mode"] == "whole" and "[run] mode=whole" in done.stderr


@pytest.mark.model
def test_run_on_the_bundled_model_calls_a_tool_and_answers(tmp_path: Path) -> None:
    # The context tools alone, the first turn forced to a tool: the documents would fit whole.
    args = ["--max-turns", "3", "--tools", "context", "--tool-choice", "context_search", "--json", "--trace"]
    done = loci("run", "How much does a plot cost?", "--file", str(EXAMPLE), *args, home=tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["tool_calls"] >= 1
    assert out["answer"]
    assert "[turn 1] context_" in done.stderr


@pytest.mark.server
def test_run_against_a_real_openai_compatible_server(tmp_path: Path, llama_server: str) -> None:
    spec = f"openai:local@{llama_server}"
    done = loci(
        "run",
        "How much does a plot cost?",
        "--file",
        str(EXAMPLE),
        "--model",
        spec,
        "--max-turns",
        "3",
        "--tools",
        "context",
        "--tool-choice",
        "context_search",
        "--context-window",
        "2048",
        "--json",
        home=tmp_path,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["tool_calls"] >= 1 and out["answer"]


def test_directories_load_recursively_and_stdin_is_a_document(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "a.md").write_text("alpha fact\n", encoding="utf-8")
    (tree / "sub" / "b.bin").write_bytes(b"x\0y")
    model = script(
        tmp_path,
        [
            {"state": "", "tool": "context_list", "arguments": {}},
            {"state": "", "answer": "ok", "evidence": [{"id": "doc:1"}]},
        ],
    )
    env = {**os.environ, "LOCI_HOME": str(tmp_path)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "loci.runtime.cli.main",
            "run",
            "t",
            "--file",
            "-",
            "--dir",
            str(tree),
            "--model",
            model,
            "--json",
        ],
        input="from stdin\n",
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "skipped" in done.stderr and "b.bin" in done.stderr
    assert json.loads(done.stdout)["evidence"][0]["text"] == "from stdin\n"


@pytest.mark.model
def test_bundled_model_navigates_with_search_then_read(tmp_path: Path) -> None:
    """The protocol on the real model: grammar-constrained arguments reach both tools through MCP."""
    done = loci(
        "run",
        "How much does a plot cost?",
        "--file",
        str(EXAMPLE),
        "--tools",
        "context",
        "--max-turns",
        "3",
        "--tool-choice",
        "context_search,context_read",
        "--json",
        "--trace",
        home=tmp_path,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    assert "[turn 1] context_search(" in done.stderr
    assert "[turn 2] context_read(" in done.stderr
    assert json.loads(done.stdout)["tool_calls"] == 2


def test_output_into_a_closed_pipe_ends_quietly_and_keeps_what_was_written(tmp_path: Path) -> None:
    """`loci memory add ... | head -0`: the reader is gone before loci prints; the memory is still stored."""
    read, write = os.pipe()
    os.close(read)  # a reader that has already gone
    command = [sys.executable, "-m", "loci.runtime.cli.main", "memory", "add", "The staging port is 7070."]
    env = {**os.environ, "LOCI_HOME": str(tmp_path)}
    try:
        done = subprocess.run(command, stdout=write, stderr=subprocess.PIPE, text=True, timeout=120, env=env)
    finally:
        os.close(write)
    assert done.returncode == 141 and "Traceback" not in done.stderr, done.stderr
    found = loci("memory", "search", "staging port", home=tmp_path)
    assert found.returncode == 0 and "7070" in found.stdout
