"""`python -m loci.runtime.models.llama.server ARGS...`: llama-cpp-python's OpenAI-compatible server, verdict applied.

It takes exactly the arguments of `python -m llama_cpp.server` (`--model`,
`--port`, `--n_ctx`, `--config_file`, ...). It first decides, as every Loci
load does (`runtime.models.llama.load.process_verdict`), whether llama.cpp's extra
buffer types are safe on this CPU, then runs the server's own `main` with
`use_extra_bufts` set accordingly for every model it loads. On a CPU whose
AMX kernels trap, plain `python -m llama_cpp.server` dies (SIGILL or SIGSEGV) on the
first prompt of more than a few tokens; this one does not.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from loci.memory.errors import UsageError
from loci.runtime.models.llama.load import extra_bufts, process_verdict

__all__ = ["main"]


def _model_argument(args: Sequence[str]) -> Path | None:
    """The value of `--model PATH` or `--model=PATH`, if given."""
    for index, arg in enumerate(args):
        if arg == "--model" and index + 1 < len(args):
            return Path(args[index + 1])
        if arg.startswith("--model="):
            return Path(arg.partition("=")[2])
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        from llama_cpp.server.__main__ import main as server_main
    except ImportError as exc:
        print(
            f"loci: the server needs llama-cpp-python[server]: pip install 'llama-cpp-python[server]' ({exc})",
            file=sys.stderr,
        )
        return 2
    try:
        verdict = process_verdict(_model_argument(args))
    except UsageError as exc:
        print(f"loci: {exc}", file=sys.stderr)
        return 2
    print(f"loci: {verdict.describe()}", file=sys.stderr)
    sys.argv = ["python -m loci.runtime.models.llama.server", *args]
    with extra_bufts(verdict.extra_bufts):
        server_main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
