"""The facts of `loci bench qa --files`: real files of Python and Debian, each fact asked in several phrasings.

`bench/data/qa_files.json` holds facts, each a span of one line of a file
no one wrote for Loci, and the questions that ask it, written as different
people would ask: `name` (by the name the file gives it: "What is
DEFAULT_ENTROPY?"), `plain` (in plain words, avoiding the file's words where
they can: "How many bytes of randomness does the secrets module use by
default?") and `casual` (a quick "what's the…"), with any further ones in
`more`. A fact's `file` is one of:

- `{stdlib}/NAME.py`: a module where this Python keeps its standard library
  (`sysconfig.get_paths()["stdlib"]`);
- `man:NAME`: the page `man -P cat NAME` renders (80 columns, UTF-8), written
  to a file of the run's folder;
- a path ending in `.gz`: the file gzip unpacks, written there too;
- any other path, read where it is.

The kind of a fact's file (`module`, `copyright`, `licence`, `man`, `doc`)
follows from its path. A fact whose file is missing, or whose page `man`
cannot render, is skipped, and the reason is kept.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from loci.memory.errors import UsageError

__all__ = ["FILES", "KINDS", "STYLES", "FileQuestion", "file_set", "kind_of", "spread"]

FILES = Path(__file__).parents[1] / "data" / "qa_files.json"
STYLES = ("name", "plain", "casual")
KINDS = ("module", "copyright", "licence", "man", "doc")
MAN_SECONDS = 60.0
_MAN_ENV = {"MANWIDTH": "80", "LC_ALL": "C.UTF-8", "MANPAGER": "cat", "PAGER": "cat"}


@dataclass(frozen=True)
class FileQuestion:
    """One phrasing of one fact: `fact` numbers the fact (-1: the question is a fact of its own)."""

    file: Path
    question: str
    answer: str
    fact: int = -1
    style: str = "asked"
    kind: str = "file"

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(self.file.read_text(encoding="utf-8", errors="replace").splitlines())


def kind_of(spec: str) -> str:
    """The kind of file a fact's `file` names."""
    if spec.startswith("{stdlib}"):
        return "module"
    if spec.startswith("man:"):
        return "man"
    if "/common-licenses/" in spec:
        return "licence"
    return "copyright" if spec.endswith("/copyright") else "doc"


def file_set(path: Path = FILES, out: Path | None = None) -> tuple[list[FileQuestion], list[str]]:
    """Every phrasing of every fact whose file is here (man pages and gzip'd files written to `out`), and a
    reason for each fact skipped. Without `out`, facts that need a file written are skipped."""
    try:
        rows = json.loads(Path(path).read_text(encoding="utf-8"))["facts"]
        facts = [(str(row["file"]), str(row["answer"]), _phrasings(row)) for row in rows]
    except FileNotFoundError as exc:
        raise UsageError(f"no question file at {path}") from exc
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"{path} is not a fact file (a JSON object with `facts`): {exc}") from exc
    found: list[FileQuestion] = []
    skipped: list[str] = []
    made: dict[str, Path | str] = {}
    for number, (spec, answer, phrasings) in enumerate(facts):
        if spec not in made:
            made[spec] = _materialise(spec, out)
        file = made[spec]
        if isinstance(file, str):
            skipped.append(f"{answer!r} ({spec}): {file}")
            continue
        kind = kind_of(spec)
        found += [FileQuestion(file, text, answer, number, style, kind) for style, text in phrasings]
    return found, skipped


def _phrasings(row: dict) -> list[tuple[str, str]]:
    asked = [(style, str(row[style])) for style in STYLES if row.get(style)]
    asked += [("more", str(text)) for text in row.get("more") or []]
    if not asked:
        raise ValueError(f"the fact {row.get('answer')!r} is asked in no phrasing")
    return asked


def _materialise(spec: str, out: Path | None) -> Path | str:
    """The file a fact's `file` names, or why it is not here."""
    if spec.startswith("man:"):
        return _render_man(spec[4:], out) if out is not None else "man pages are rendered only into a folder"
    file = Path(spec.replace("{stdlib}", sysconfig.get_paths()["stdlib"]))
    if not file.is_file():
        return f"{file} is not on this machine"
    if file.suffix != ".gz":
        return file
    if out is None:
        return "gzip'd files are unpacked only into a folder"
    target = out / _safe(f"{file.parent.name}-{file.stem}")
    try:
        target.write_bytes(gzip.decompress(file.read_bytes()))
    except (OSError, EOFError) as exc:
        return f"{file} does not unpack: {exc}"
    return target


def _render_man(name: str, out: Path) -> Path | str:
    """`man -P cat NAME` into `out/man-NAME.txt`, or why it cannot be."""
    env = {**os.environ, **_MAN_ENV}
    try:
        done = subprocess.run(
            ["man", "-P", "cat", name], capture_output=True, env=env, timeout=MAN_SECONDS, check=False
        )
    except FileNotFoundError:
        return "`man` is not installed"
    except subprocess.TimeoutExpired:
        return f"`man -P cat {name}` took more than {MAN_SECONDS:.0f} s"
    text = done.stdout.decode("utf-8", errors="replace")
    if done.returncode != 0 or not text.strip():
        reason = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        return f"`man -P cat {name}` gave no page ({reason[0] if reason else f'exit {done.returncode}'})"
    target = out / _safe(f"man-{name}.txt")
    target.write_text(text, encoding="utf-8")
    return target


def _safe(name: str) -> str:
    return re.sub(r"[^\w.+-]", "_", name)


def spread(questions: list[FileQuestion], facts: int) -> list[FileQuestion]:
    """The phrasings of `facts` facts taken in turn from each kind of file (in the set's order): a subset
    that keeps every kind."""
    by_kind: dict[str, list[int]] = {}
    for q in questions:
        numbers = by_kind.setdefault(q.kind, [])
        if q.fact not in numbers:
            numbers.append(q.fact)
    chosen: list[int] = []
    while len(chosen) < facts and any(by_kind.values()):
        for numbers in by_kind.values():
            if numbers and len(chosen) < facts:
                chosen.append(numbers.pop(0))
    keep = set(chosen)
    return [q for q in questions if q.fact in keep]
