"""The probe child: `python -m loci.runtime.models.llama.probe GGUF` loads a GGUF, llama.cpp's extra buffer types on.

It evaluates a prompt of `PROBE_TOKENS` tokens in one batch (a batched
matmul is what reaches the AMX and repacked kernels; a one-token prompt
does not), then a few single tokens, as generation does. It exits 0 when
all of that ran; a CPU that cannot run those kernels kills it with a signal,
which `runtime.models.llama.verdict` reads from its exit status. Core dumps are
turned off first: a crash here is the expected answer, not a bug to keep.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

__all__ = ["PROBE_TOKENS", "main"]

PROBE_TOKENS = 64
GENERATED_TOKENS = 4
PROBE_TEXT = (
    "The harbor office keeps a ledger of every plot, every berth and every fee. A plot costs what the "
    "council last set, and the clerk writes each sale in the ledger with the buyer, the date and the price. "
)


def _no_core_dumps() -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, ValueError, OSError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m loci.runtime.models.llama.probe MODEL.gguf", file=sys.stderr)
        return 2
    _no_core_dumps()
    from llama_cpp import Llama

    from loci.runtime.models.llama.load import extra_bufts

    with extra_bufts(True):
        llm = Llama(model_path=args[0], n_ctx=256, n_batch=128, n_threads=os.cpu_count() or 2, verbose=False)
    tokens = llm.tokenize((PROBE_TEXT * 8).encode(), add_bos=True)[:PROBE_TOKENS]
    llm.eval(tokens)
    for _ in range(GENERATED_TOKENS):
        llm.eval([tokens[-1]])
    print(f"evaluated {len(tokens)} prompt tokens and {GENERATED_TOKENS} single tokens with extra buffer types on")
    return 0


if __name__ == "__main__":
    sys.exit(main())
