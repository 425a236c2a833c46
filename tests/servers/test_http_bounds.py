"""`loci serve --http` bounds what a client holds before its token is checked: time, header bytes, connections;
and a client that resets its connection costs one log line."""

from __future__ import annotations

import re
import resource
import select
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.runtime.cli.test_serve_http import ACCEPT, INIT, TOKEN, Served, stop

HEADER = 64 * 1024 * 1024


def _start(tmp_path: Path, *extra: str, descriptors: int | None = None) -> Served:
    """`loci serve --http` with a token on a free port (at most `descriptors` open files), once it serves."""
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n", encoding="utf-8")
    db = tmp_path / "h.db"
    command = [sys.executable, "-m", "loci.runtime.cli.main", "serve", "--http", "--port", "0", "--db", str(db)]
    command += ["--token-file", str(token), *extra]

    def limit() -> None:
        if descriptors is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, descriptors))

    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, bufsize=0, preexec_fn=limit)
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    while (left := deadline - time.monotonic()) > 0 and select.select([process.stderr], [], [], left)[0]:
        line = process.stderr.readline().decode()
        if not line:
            pytest.fail(f"loci serve exited with {process.wait()} before it served")
        if match := re.search(r"serving MCP on (\S+)", line):
            return Served(match.group(1), db, process)
    stop(process)
    pytest.fail("loci serve --http did not say where it serves within 60 s")


def _address(served: Served) -> tuple[str, int]:
    parts = urlsplit(served.url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


def _rss(process: subprocess.Popen[bytes]) -> int:
    status = Path(f"/proc/{process.pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) * 1024  # type: ignore[union-attr]


def _answer(sock: socket.socket) -> bytes:
    """Everything the server sends before it closes the connection (at most 30 s)."""
    sock.settimeout(30)
    parts = []
    while chunk := sock.recv(65536):
        parts.append(chunk)
    return b"".join(parts)


def test_a_client_whose_headers_never_end_is_dropped(tmp_path: Path) -> None:
    served = _start(tmp_path, "--header-timeout", "2")
    try:
        with socket.create_connection(_address(served)) as slow, socket.create_connection(_address(served)) as idle:
            slow.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
            assert _answer(slow).startswith(b"HTTP/1.1 408 ")
            assert _answer(idle).startswith(b"HTTP/1.1 408 ")
        answered = httpx.post(served.url, json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {TOKEN}"}, timeout=30)
        assert answered.status_code == 200
    finally:
        stop(served.process)
        served.process.stderr.close()  # type: ignore[union-attr]


def test_a_huge_header_is_refused_without_being_buffered(tmp_path: Path) -> None:
    served = _start(tmp_path)
    try:
        # one real call first, so the server has loaded what it serves with: only the header may grow it after
        warm = httpx.post(served.url, json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {TOKEN}"}, timeout=30)
        assert warm.status_code == 200
        before, sent = _rss(served.process), 0
        with socket.create_connection(_address(served)) as sock:
            sock.settimeout(30)
            try:
                sock.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
                while sent < HEADER:
                    sock.sendall(b"a" * (1 << 20))
                    sent += 1 << 20
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server closed the connection: what it answered may be lost in the reset
        grown = _rss(served.process) - before
    finally:
        stop(served.process)
        served.process.stderr.close()  # type: ignore[union-attr]
    assert sent < HEADER // 4, f"the server read {sent} bytes of one header"
    assert grown < 32 * 1024 * 1024, f"the server grew by {grown} bytes"


def test_idle_connections_do_not_keep_a_client_out(tmp_path: Path) -> None:
    served = _start(tmp_path, "--header-timeout", "300", descriptors=256)
    idle: list[socket.socket] = []
    try:
        for _ in range(300):
            idle.append(socket.create_connection(_address(served), timeout=30))
        answered = httpx.post(served.url, json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {TOKEN}"}, timeout=30)
        assert answered.status_code == 200
        assert served.process.poll() is None
    finally:
        for sock in idle:
            sock.close()
        stop(served.process)
        served.process.stderr.close()  # type: ignore[union-attr]


def test_a_reset_connection_is_one_line_in_the_log(tmp_path: Path) -> None:
    served = _start(tmp_path)
    assert served.process.stderr is not None
    try:
        host, port = _address(served)
        head = f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {TOKEN}\r\nExpect: 100-continue\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in ACCEPT.items()) + "Content-Length: 100000\r\n\r\n"
        with socket.create_connection((host, port), timeout=30) as sock:
            sock.sendall(head.encode())
            assert sock.recv(100).startswith(b"HTTP/1.1 100 ")  # the app reads the body: then the client goes
            sock.sendall(b'{"jsonrpc": ')
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
        log, deadline = [], time.monotonic() + 30
        while "ClientDisconnect" not in "".join(log):
            assert select.select([served.process.stderr], [], [], max(0.0, deadline - time.monotonic()))[0]
            log.append(served.process.stderr.readline().decode())
    finally:
        stop(served.process)
        served.process.stderr.close()
    assert "Traceback" not in "".join(log), "".join(log)
    assert len(log) == 1 and "closed its connection" in log[0]
