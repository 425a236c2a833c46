"""`loci models`: the default model, where its file is, the llama.cpp mode in use, and the spec forms.

The mode is whether llama.cpp's extra buffer types (AMX and repacked
kernels) are on, and why: the override, a cached verdict, or a probe run
now (`runtime.models.llama.verdict`). It is the mode every GGUF load uses.
"""

from __future__ import annotations

import argparse
import importlib.util

import anyio.to_thread

from loci.memory.errors import NotFoundError
from loci.runtime.models.llama.load import default_model_path, process_verdict
from loci.runtime.models.specs import DEFAULT_SPEC

__all__ = ["register"]

SPECS = """model specs:
  llama:default                          the bundled GGUF
  llama:/path/model.gguf                 any GGUF file
  openai:MODEL                           api.openai.com (key: LOCI_API_KEY or OPENAI_API_KEY)
  openai:MODEL@http://127.0.0.1:8080/v1  any OpenAI-compatible server
  scripted:FILE.json                     deterministic replies"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("models", help="show the default model, the llama.cpp mode in use and the model specs")
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    try:
        path = default_model_path()
        size = path.stat().st_size / 1e6
        print(f"default: {DEFAULT_SPEC} -> {path} ({size:.0f} MB)")
        status = 0
    except NotFoundError as exc:
        print(f"default: {DEFAULT_SPEC} -> not installed ({exc})")
        path, status = None, 1
    if importlib.util.find_spec("llama_cpp") is None:
        print("llama.cpp: llama-cpp-python is not installed")
    else:
        verdict = await anyio.to_thread.run_sync(process_verdict, path)
        print(f"llama.cpp: {verdict.describe()}")
    print(SPECS)
    return status
