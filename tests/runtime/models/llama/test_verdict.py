"""The extra-buffer-types verdict: override, cache and probe, with simulated probe children.

A simulated child is a real subprocess (`python -c ...`) that exits the way
the real probe would: it kills itself with SIGILL as an AMX machine does,
exits 0 as a healthy one does, fails to import, or hangs. Each one appends a
line to a counter file, so a test can tell whether the probe ran again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from loci.memory.errors import UsageError
from loci.runtime.models.llama.verdict import ENV, decide, machine_key, verdict_path

GGUF = Path("/models/probe.gguf")


def _child(tmp_path: Path, body: str) -> list[str]:
    counter = tmp_path / "probes.txt"
    script = f"open({str(counter)!r}, 'a').write('probe\\n')\n{body}"
    return [sys.executable, "-c", script]


def _probes(tmp_path: Path) -> int:
    counter = tmp_path / "probes.txt"
    return len(counter.read_text().splitlines()) if counter.exists() else 0


SIGILL = (
    "import os, resource, signal\nresource.setrlimit(resource.RLIMIT_CORE, (0, 0))\nos.kill(os.getpid(), signal.SIGILL)"
)
PASS = "pass"


@pytest.fixture(autouse=True)
def no_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)


def test_a_probe_killed_by_sigill_turns_extra_bufts_off_and_caches_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    verdict = decide(GGUF, home=home, command=_child(tmp_path, SIGILL))
    assert (verdict.extra_bufts, verdict.source, verdict.detail) == (False, "probe", "killed by SIGILL")
    cached = json.loads(verdict_path(home).read_text())
    assert cached["extra_bufts"] is False and cached["key"] == machine_key()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert "killed by SIGILL" in lines[0] and str(verdict_path(home)) in lines[0] and f"{ENV}=1" in lines[0]

    again = decide(GGUF, home=home, command=_child(tmp_path, SIGILL))
    assert (again.extra_bufts, again.source, again.decided) == (False, "cache", verdict.decided)
    assert _probes(tmp_path) == 1
    assert capsys.readouterr().err == ""
    assert "extra buffer types off" in again.describe() and "killed by SIGILL" in again.describe()


def test_the_override_beats_the_cached_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    decide(GGUF, home=home, command=_child(tmp_path, SIGILL))
    monkeypatch.setenv(ENV, "1")
    forced = decide(GGUF, home=home, command=_child(tmp_path, SIGILL))
    assert (forced.extra_bufts, forced.source) == (True, "override")
    assert f"forced by {ENV}=1" in forced.describe()
    monkeypatch.setenv(ENV, "0")
    assert decide(None, home=home).extra_bufts is False
    assert _probes(tmp_path) == 1


def test_a_bad_override_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "yes")
    with pytest.raises(UsageError, match=f"{ENV} must be 0 or 1"):
        decide(GGUF, home=tmp_path, command=_child(tmp_path, PASS))
    assert _probes(tmp_path) == 0


def test_a_passing_probe_keeps_extra_bufts_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    verdict = decide(GGUF, home=tmp_path, command=_child(tmp_path, PASS))
    assert (verdict.extra_bufts, verdict.source) == (True, "probe")
    assert decide(GGUF, home=tmp_path, command=_child(tmp_path, PASS)).source == "cache"
    assert _probes(tmp_path) == 1
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("content", ["{not json", "[]", '{"key": 3}', "", '{"extra_bufts": "no"}'])
def test_a_corrupt_cache_is_ignored_and_the_probe_reruns(tmp_path: Path, content: str) -> None:
    verdict_path(tmp_path).write_text(content)
    verdict = decide(GGUF, home=tmp_path, command=_child(tmp_path, PASS))
    assert (verdict.extra_bufts, verdict.source) == (True, "probe")
    assert _probes(tmp_path) == 1
    assert json.loads(verdict_path(tmp_path).read_text())["key"] == machine_key()


def test_a_verdict_for_another_version_or_cpu_is_stale(tmp_path: Path) -> None:
    stale = {"key": "llama-cpp-python 0.0.1; cpu 0000", "extra_bufts": False, "detail": "old", "decided": "2020-01-01"}
    verdict_path(tmp_path).write_text(json.dumps(stale))
    verdict = decide(GGUF, home=tmp_path, command=_child(tmp_path, PASS))
    assert (verdict.extra_bufts, verdict.source) == (True, "probe")
    assert _probes(tmp_path) == 1


@pytest.mark.parametrize(
    ("body", "timeout", "detail"),
    [
        ("import no_such_module_for_the_probe", 60.0, "exited with 1: ModuleNotFoundError"),
        ("import threading\nthreading.Event().wait()", 0.5, "timed out after"),
    ],
)
def test_a_probe_that_fails_otherwise_decides_off_for_this_process_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, timeout: float, detail: str
) -> None:
    verdict = decide(GGUF, home=tmp_path, command=_child(tmp_path, body), timeout=timeout)
    assert (verdict.extra_bufts, verdict.source) == (False, "probe-failed")
    assert detail in verdict.detail
    assert not verdict_path(tmp_path).exists()
    err = capsys.readouterr().err
    assert "could not probe" in err and "nothing cached" in err
    decide(GGUF, home=tmp_path, command=_child(tmp_path, PASS))
    assert _probes(tmp_path) == 2


def test_without_a_gguf_to_probe_nothing_is_cached(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    verdict = decide(None, home=tmp_path)
    assert (verdict.extra_bufts, verdict.source, verdict.detail) == (False, "probe-failed", "no GGUF to probe with")
    assert not verdict_path(tmp_path).exists()
    assert "no GGUF to probe with" in capsys.readouterr().err
