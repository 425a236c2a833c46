"""Whether llama.cpp's extra CPU buffer types are safe on this machine: override, cached verdict, or probe.

llama.cpp moves weights into "extra" CPU buffer types (repacked layouts and,
on CPUs that advertise AMX, AMX tiles) for faster matrix kernels. On some
machines those kernels die (SIGILL, or SIGSEGV at `ldtilecfg`) although the
CPU flags promise them (a VM that advertises AMX whose tile instructions
trap). A signal cannot be caught in-process, so the question is asked once
per machine, in a child:

1. `LOCI_LLAMA_EXTRA_BUFTS=0|1` wins, always.
2. Else a verdict cached in the Loci home (`llama-verdict.json`), valid only
   for the same llama-cpp-python version and the same CPU flags (the `key`).
3. Else a probe: `python -m loci.runtime.models.llama.probe GGUF` loads the GGUF with the
   extra buffer types on and evaluates a few dozen tokens (a batched matmul,
   which is what traps). Exit 0: on. Killed by a crash signal (SIGILL,
   SIGSEGV, SIGBUS, SIGFPE, SIGABRT): off, cached, and one line on stderr
   says so. Any other failure (timeout, import error, a model it cannot
   evaluate, a kill from outside): off for this process only, not cached,
   also said on stderr.

A corrupt cache file or an entry for another key is ignored and the probe
reruns. The file is replaced atomically, so concurrent first runs at worst
probe twice. `runtime.models.llama.load` applies the verdict to every GGUF load.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from loci.memory.engines.sqlite.store import default_db_path
from loci.memory.errors import UsageError

__all__ = ["ENV", "Verdict", "cpu_flags", "decide", "machine_key", "verdict_path"]

ENV = "LOCI_LLAMA_EXTRA_BUFTS"
CACHE_FILE = "llama-verdict.json"
PROBE_SECONDS = 300.0
CRASH_SIGNALS = frozenset({signal.SIGILL, signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGABRT})
# The CPU features that decide which ggml kernels run: x86 `flags` and Arm `Features` in /proc/cpuinfo.
FLAG_PREFIXES = {
    "flags": ("avx", "amx", "f16c", "fma", "sse", "ssse3", "bmi"),
    "Features": ("asimd", "sve", "sme", "i8mm", "fphp", "bf16"),
}


@dataclass(frozen=True)
class Verdict:
    """Extra buffer types on or off, and why (`source`: override, cache, probe or probe-failed)."""

    extra_bufts: bool
    source: str
    detail: str
    path: Path
    decided: str = ""

    @property
    def mode(self) -> str:
        return "on" if self.extra_bufts else "off"

    def describe(self) -> str:
        """One line for `loci models` and `loci doctor`."""
        if self.source == "override":
            why = f"forced by {ENV}={int(self.extra_bufts)}"
        elif self.source == "cache":
            why = f"cached verdict of a probe on {self.decided[:10]}: {self.detail}; {self.path}"
        elif self.source == "probe":
            why = f"probed now: {self.detail}; cached in {self.path}"
        else:
            why = f"probe failed now: {self.detail}; not cached"
        return f"llama.cpp extra buffer types {self.mode} ({why})"


def verdict_path(home: Path | None = None) -> Path:
    """`$LOCI_HOME/llama-verdict.json` (the home defaults to `~/.loci`)."""
    return (home or default_db_path().parent) / CACHE_FILE


def cpu_flags() -> list[str]:
    """The CPU flags that matter to ggml, from /proc/cpuinfo; the platform's names where there is none."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        prefixes = FLAG_PREFIXES.get(name.strip())
        if sep and prefixes:
            return sorted({flag for flag in value.split() if flag.startswith(prefixes)})
    return [f"machine={platform.machine()}", f"processor={platform.processor()}"]


def _llama_cpp_python_version() -> str:
    try:
        return version("llama_cpp_python")
    except PackageNotFoundError:
        return "none"


def machine_key() -> str:
    """The llama-cpp-python version and a hash of the CPU flags: a verdict holds only for its key."""
    flags = hashlib.sha256(" ".join([platform.machine(), *cpu_flags()]).encode()).hexdigest()[:16]
    return f"llama-cpp-python {_llama_cpp_python_version()}; cpu {flags}"


def decide(
    probe_model: Path | None,
    *,
    home: Path | None = None,
    command: Sequence[str] | None = None,
    timeout: float = PROBE_SECONDS,
) -> Verdict:
    """The verdict for this machine: the override, else the cache, else a probe of `probe_model`.

    `command` replaces the probe child (tests simulate a crash with it); it gets the GGUF path appended.
    """
    path = verdict_path(home)
    forced = _override()
    if forced is not None:
        return Verdict(forced, "override", f"{ENV}={int(forced)}", path)
    key = machine_key()
    cached = _read(path, key)
    if cached is not None:
        return cached
    if probe_model is None:
        return _failed("no GGUF to probe with", path)
    argv = [*(command or [sys.executable, "-m", "loci.runtime.models.llama.probe"]), str(probe_model)]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        return _failed(f"timed out after {timeout:.0f} s", path)
    except OSError as exc:
        return _failed(f"could not start: {exc}", path)
    if done.returncode == 0:
        return _write(path, key, True, "passed")
    if -done.returncode in CRASH_SIGNALS:
        verdict = _write(path, key, False, f"killed by {signal.Signals(-done.returncode).name}")
        print(
            f"loci: llama.cpp's extra buffer types (AMX and repacked kernels) crashed a probe on this CPU "
            f"({verdict.detail}); Loci loads GGUFs without them from now on (verdict cached in {path}; "
            f"{ENV}=1 forces them on)",
            file=sys.stderr,
        )
        return verdict
    return _failed(_exit_reason(done), path)


def _override() -> bool | None:
    value = os.environ.get(ENV, "").strip()
    if not value:
        return None
    if value not in ("0", "1"):
        raise UsageError(f"{ENV} must be 0 or 1, not {value!r}")
    return value == "1"


def _exit_reason(done: subprocess.CompletedProcess[bytes]) -> str:
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    last = f": {lines[-1][:160]}" if lines else ""
    if done.returncode < 0:
        return f"killed by {signal.Signals(-done.returncode).name}{last}"
    return f"exited with {done.returncode}{last}"


def _failed(detail: str, path: Path) -> Verdict:
    print(
        f"loci: could not probe llama.cpp's extra buffer types ({detail}); running without them in this "
        f"process, nothing cached ({ENV}=0|1 decides)",
        file=sys.stderr,
    )
    return Verdict(False, "probe-failed", detail, path)


def _read(path: Path, key: str) -> Verdict | None:
    """The cached verdict for `key`; None when the file is missing, corrupt or for another key."""
    try:
        entry = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != key or not isinstance(entry.get("extra_bufts"), bool):
        return None
    return Verdict(entry["extra_bufts"], "cache", str(entry.get("detail", "")), path, str(entry.get("decided", "")))


def _write(path: Path, key: str, extra_bufts: bool, detail: str) -> Verdict:
    decided = datetime.now(UTC).isoformat(timespec="seconds")
    entry = {"key": key, "extra_bufts": extra_bufts, "detail": detail, "decided": decided, "cpu_flags": cpu_flags()}
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".llama-verdict.", delete=False) as handle:
            temporary = Path(handle.name)
            json.dump(entry, handle, indent=1)
        os.replace(temporary, path)
    except OSError as exc:
        if temporary is not None:
            temporary.unlink(missing_ok=True)
        print(f"loci: cannot cache the llama.cpp verdict in {path}: {exc}", file=sys.stderr)
    return Verdict(extra_bufts, "probe", detail, path, decided)
