"""`loci models`: the default model, where its file is, and the spec forms."""

from __future__ import annotations

import argparse

from memory.errors import NotFoundError
from runtime.llama_backend import default_model_path
from runtime.specs import DEFAULT_SPEC

__all__ = ["register"]

SPECS = """model specs:
  llama:default                          the bundled GGUF
  llama:/path/model.gguf                 any GGUF file
  openai:MODEL                           api.openai.com (key: LOCI_API_KEY or OPENAI_API_KEY)
  openai:MODEL@http://127.0.0.1:8080/v1  any OpenAI-compatible server
  scripted:FILE.json                     deterministic replies"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("models", help="show the default model and the model specs")
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    try:
        path = default_model_path()
        size = path.stat().st_size / 1e6
        print(f"default: {DEFAULT_SPEC} -> {path} ({size:.0f} MB)")
        status = 0
    except NotFoundError as exc:
        print(f"default: {DEFAULT_SPEC} -> not installed ({exc})")
        status = 1
    print(SPECS)
    return status
