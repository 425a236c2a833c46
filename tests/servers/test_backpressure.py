"""A stdio client that sends and never reads: `loci serve` stops reading, and answers everything once it reads."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

MODERN = {
    PROTOCOL_VERSION_META_KEY: "2026-07-28",
    CLIENT_INFO_META_KEY: {"name": "t", "version": "1"},
    CLIENT_CAPABILITIES_META_KEY: {},
}
SENT = 20_000
STALLED_S = 10.0  # no room in the server's input for this long: it has stopped reading


def _line(ident: int) -> bytes:
    """A modern call of a hot tool (the thin path) or a ping (the SDK's path), in turn."""
    if ident % 2:
        params = {"name": "memory_recall", "arguments": {"query": "lantern"}, "_meta": MODERN}
        message = {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}
    else:
        message = {"jsonrpc": "2.0", "id": ident, "method": "ping", "params": {"_meta": MODERN}}
    return json.dumps(message).encode() + b"\n"  # under PIPE_BUF: a pipe takes it whole or not at all


def _send_until_stalled(fd: int) -> int:
    """Write lines to `fd` (non-blocking) until `SENT` are written or the reader stalls; how many were written."""
    sent = 0
    while sent < SENT:
        try:
            os.write(fd, _line(sent))
            sent += 1
        except BlockingIOError:
            if not select.select([], [fd], [], STALLED_S)[1]:
                break
    return sent


def test_a_client_that_never_reads_stops_the_reading_and_is_answered_once_it_reads(tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "loci.runtime.cli.main",
        "serve",
        "--tools",
        "memory",
        "--db",
        str(tmp_path / "h.db"),
    ]
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        os.set_blocking(process.stdin.fileno(), False)
        sent = _send_until_stalled(process.stdin.fileno())
        assert sent < SENT // 4, f"the server read {sent} requests while none of their answers was read"
        unanswered, pending, deadline = set(range(sent)), b"", time.monotonic() + 300
        while unanswered and select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))[0]:
            chunk = os.read(process.stdout.fileno(), 1 << 16)
            assert chunk, "the server ended before answering"
            *lines, pending = (pending + chunk).split(b"\n")
            unanswered -= {json.loads(line)["id"] for line in lines}
        assert not unanswered, f"{len(unanswered)} of {sent} requests never answered"
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=60)
        finally:
            process.kill()
            process.wait()
            process.stdout.close()
