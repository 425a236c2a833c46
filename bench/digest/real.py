"""`loci bench digest --real`: one-line facts planted in real documents past the window.

The needle set (`bench.digest.needles`) is ours: shuffled manual paragraphs with
invented rooms. This set takes documents no one here wrote, as a user would
bring them: two stdlib modules of the running Python (`_pydecimal.py`,
`argparse.py`) and a manual (Node.js's `process.md`, where Debian ships it),
each cut to at most `MAX_CHARS` (about 45,000 tokens on the bundled
tokenizer). Into each, the three `FACTS` go on lines of their own (the first at line
2,500 when the document is that long, as the issue that asked for this set
did; the others at a fifth and four fifths of it), and each is asked back.

Every question is asked three ways on the same model, each with a fresh
home: `loci digest --strategy stream`, `loci digest` (`auto`), and `loci run
--file` (the agent with the context tools, as a user would try first).
Scored by containment of the answer in the reply (normalised), with the
seconds each took, whether the digest's status said `done`, and whether its
evidence quotes the planted line. The keys are flat: `real_n`,
`real_<method>_hit`, `real_<method>_s_median`, `real_<method>_done`,
`real_stream_evidence_hit`; `real_rows` has every answer.
"""

from __future__ import annotations

import argparse
import statistics
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from loci.bench.digest.needles import score
from loci.runtime.cli.doctor import cpu_name
from loci.runtime.digest.run import digest
from loci.runtime.loop.records import Limits, RunConfig
from loci.runtime.models.base import Model
from loci.runtime.session.session import open_session

__all__ = ["FACTS", "real_documents", "run_real"]

MAX_CHARS = 186_000
FIRST_LINE = 2_500
FACTS = [
    ("The vault access code is 7341.", "What is the vault access code?", "7341"),
    ("Marta Okafor keeps the spare key to the boathouse.", "Who keeps the spare key to the boathouse?", "Marta Okafor"),
    (
        "The night ferry to Lindholm leaves from pier 47.",
        "Which pier does the night ferry to Lindholm leave from?",
        "47",
    ),
]
METHODS = ("stream", "auto", "run")


def real_documents() -> list[Path]:
    """The real documents this machine has: two stdlib modules and a manual."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    found = [stdlib / "_pydecimal.py", stdlib / "argparse.py", Path("/usr/share/doc/nodejs/api/process.md")]
    return [path for path in found if path.is_file()]


def plant(source: Path, target: Path) -> list[int]:
    """`source` cut to `MAX_CHARS`, written to `target` with each fact on a line of its own; their line numbers."""
    lines = source.read_text(encoding="utf-8", errors="replace")[:MAX_CHARS].splitlines()
    size = len(lines)
    at = [FIRST_LINE if size > FIRST_LINE + 100 else size * 2 // 5, size // 5, size * 4 // 5]
    for number, fact in sorted(zip(at, [fact for fact, _, _ in FACTS], strict=True)):
        lines.insert(number - 1, fact)  # in ascending order, so each number is its fact's line in the file
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return at


async def run_real(model: Model, args: argparse.Namespace) -> dict[str, Any]:
    paths = [Path(p) for p in args.docs.split(",")] if args.docs else real_documents()
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    rows = []
    with tempfile.TemporaryDirectory(prefix="loci-bench-real-") as tmp:
        for index, source in enumerate(paths):
            doc = Path(tmp) / f"{index}-{source.name}"
            lines = plant(source, doc)
            for line, (_, question, answer) in zip(lines, FACTS, strict=True):
                for method in methods:
                    home = Path(tmp) / f"home-{len(rows)}.db"
                    row = await _ask(model, method, doc, home, question, args.max_turns)
                    rows.append({"doc": source.name, "line": line, "method": method, "expected": answer, **row})
                    rows[-1]["hit"] = score(row["answer"], answer)["contains"]
                    rows[-1]["evidence_hit"] = any(e["start"] <= line <= e["end"] for e in row["evidence"])
                    rows[-1]["answer"] = row["answer"][:160]
                    rows[-1].pop("evidence")
    report: dict[str, Any] = {
        "bench": "digest-real",
        "cpu": cpu_name(),
        "model": model.name,
        "context_window": model.context_window,
        "documents": [p.name for p in paths],
        "real_n": len(rows) // max(1, len(methods)),
    }
    for method in methods:
        mine = [r for r in rows if r["method"] == method]
        report[f"real_{method}_hit"] = round(sum(r["hit"] for r in mine) / max(1, len(mine)), 3)
        report[f"real_{method}_s_median"] = round(statistics.median(r["s"] for r in mine), 1) if mine else None
        report[f"real_{method}_done"] = sum(r["status"] == "done" for r in mine)
        report[f"real_{method}_evidence_hit"] = round(sum(r["evidence_hit"] for r in mine) / max(1, len(mine)), 3)
    report["real_rows"] = rows
    return report


async def _ask(model: Model, method: str, doc: Path, home: Path, question: str, max_turns: int) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        if method == "run":
            config = RunConfig(limits=Limits(max_turns=max_turns))
            async with open_session(model, home, config, files=[doc]) as session:
                _, result = await session.run(question, objects=list(session.loaded))
            evidence = [{"start": c.start, "end": c.end} for c in result.evidence]
            found = {"answer": result.answer, "status": result.status, "reason": result.reason, "evidence": evidence}
        else:
            record = await digest([doc], question, model=model, db=home, strategy=method, max_turns=max_turns)
            found = {k: record[k] for k in ("answer", "status", "reason", "evidence", "strategy")}
    except Exception as exc:  # noqa: BLE001 - a method that breaks scores zero on the question, the bench goes on
        found = {"answer": f"(failed: {exc})", "status": "failed", "reason": str(exc), "evidence": []}
    return {**found, "s": round(time.perf_counter() - started, 1)}
