"""A stdio server's ends: pipes and sockets read and written on the loop, the rest by threads, lines intact."""

from __future__ import annotations

import fcntl
import os
import socket
from pathlib import Path

import anyio

from loci.servers.transports.pipes import Pipe, Socket, TextLines, TextWriter, Threaded, open_pipe

BIG = b"x" * (1 << 20)  # past a pipe's and a socket's buffer: the writer must wait for room, the reader join pieces


async def _exchange(source: object, sink: object, reader_file: object, writer_file: object) -> list[bytes]:
    """Write lines through `sink` into the far end while `source` reads what the far end is sent."""
    got: list[bytes] = []
    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:

            async def read_far() -> None:
                out = b""
                while len(out) < len(BIG) + 1:
                    out += await anyio.to_thread.run_sync(reader_file.read, 1 << 16)
                got.append(out)

            group.start_soon(read_far)
            await sink.put(BIG + b"\n")
            await anyio.to_thread.run_sync(lambda: (writer_file.write(b'{"a": 1}\n{"b"'), writer_file.flush()))
            await anyio.to_thread.run_sync(lambda: (writer_file.write(b": 2}\nlast"), writer_file.close()))
            async for line in source.lines():
                got.append(line)
    return got


async def test_a_pipe_is_read_and_written_on_the_loop_and_its_own_descriptor_stays_blocking() -> None:
    down_r, down_w = os.pipe()  # client -> server
    up_r, up_w = os.pipe()  # server -> client
    with open(down_r, "rb", buffering=0) as given_in, open(up_w, "wb", buffering=0) as given_out:
        source, sink = open_pipe(given_in, write=False), open_pipe(given_out, write=True)
        assert isinstance(source, Pipe) and isinstance(sink, Pipe)
        with open(down_w, "wb", buffering=0) as client_out, open(up_r, "rb", buffering=0) as client_in:
            got = await _exchange(source, sink, client_in, client_out)
        for fd in (given_in.fileno(), given_out.fileno()):
            assert not fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK
        source.close()
        sink.close()
    assert sorted(got) == sorted([BIG + b"\n", b'{"a": 1}\n', b'{"b": 2}\n', b"last"])


async def test_a_socket_is_read_and_written_on_the_loop_and_stays_blocking() -> None:
    server, client = socket.socketpair()
    with server, client, server.makefile("rwb", buffering=0) as given:
        source, sink = open_pipe(given, write=False), open_pipe(given, write=True)
        assert isinstance(source, Socket) and isinstance(sink, Socket)
        got: list[bytes] = []
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:

                async def read_far() -> None:
                    out = b""
                    while len(out) < len(BIG) + 1:
                        out += await anyio.to_thread.run_sync(client.recv, 1 << 16)
                    got.append(out)

                group.start_soon(read_far)
                await sink.put(BIG + b"\n")
                await anyio.to_thread.run_sync(client.sendall, b'{"a": 1}\nlast')
                client.shutdown(socket.SHUT_WR)
                async for line in source.lines():
                    got.append(line)
        assert server.getblocking()
        source.close()
        sink.close()
        assert server.fileno() != -1  # the given socket is not closed with the ends
    assert sorted(got) == sorted([BIG + b"\n", b'{"a": 1}\n', b"last"])


async def test_a_regular_file_is_read_by_a_thread_and_decoded_as_text_lines(tmp_path: Path) -> None:
    path = tmp_path / "lines"
    path.write_bytes(b'{"\xc3\xa9": 1}\n\xff\n')
    with path.open("rb") as given, (tmp_path / "out").open("wb") as out:
        source = open_pipe(given, write=False)
        assert isinstance(source, Threaded)
        with anyio.fail_after(30):
            lines = [line async for line in TextLines(source)]
            await TextWriter(open_pipe(out, write=True)).write("answer\n")
    assert lines == ['{"é": 1}\n', "\ufffd\n"]
    assert (tmp_path / "out").read_bytes() == b"answer\n"


async def test_a_line_longer_than_a_read_comes_whole() -> None:
    server, client = socket.socketpair()
    with server, client, server.makefile("rb", buffering=0) as given:
        source = open_pipe(given, write=False)
        got: list[bytes] = []
        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:

                async def send_far() -> None:
                    await anyio.to_thread.run_sync(client.sendall, b"short\n" + BIG + b"\nrest")
                    client.shutdown(socket.SHUT_WR)

                group.start_soon(send_far)
                got = [line async for line in source.lines()]
        source.close()
    assert got == [b"short\n", BIG + b"\n", b"rest"]
