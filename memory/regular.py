"""Reading only regular files, and only so much of them.

A FIFO blocks its reader until someone writes into it, `/dev/zero` never
ends, a socket cannot be opened at all: a path a person or a client names
(an import file, a hook's `transcript_path`, a file to load, `--db`) may be
any of them. Everything Loci opens for reading by name goes through here:
`check_regular` says what the path is when it is not a regular file, before
anything opens it; `open_regular` opens without blocking (`O_NONBLOCK`, so
even a FIFO swapped in after the check cannot hold the open) and checks the
open descriptor itself, so what is read is what was checked; `read_regular`
reads at most `limit` bytes and refuses a longer file rather than cut it.
"""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path
from typing import BinaryIO

from loci.memory.errors import NotFoundError, UsageError

__all__ = ["check_regular", "describe_mode", "open_regular", "read_regular"]

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def describe_mode(mode: int) -> str:
    """What a file of `mode` is, as a person says it ("a FIFO (named pipe)"); "" for a regular file."""
    if stat.S_ISREG(mode):
        return ""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _refuse(path: str | os.PathLike[str], mode: int) -> UsageError:
    return UsageError(f"{path} is {describe_mode(mode)}, not a regular file; Loci reads regular files only")


def check_regular(path: str | os.PathLike[str]) -> os.stat_result:
    """The `stat` of `path` (symlinks followed) when it is a regular file; else a `UsageError` naming what it is."""
    try:
        found = os.stat(path)
    except FileNotFoundError as exc:
        raise NotFoundError(f"no file at {path}") from exc
    if not stat.S_ISREG(found.st_mode):
        raise _refuse(path, found.st_mode)
    return found


def open_regular(path: str | os.PathLike[str], limit: int | None = None) -> BinaryIO:
    """`path` open for reading in binary, when it is a regular file of at most `limit` bytes.

    Raises `UsageError` for anything else, `NotFoundError` when it is missing, and `OSError` when it cannot
    be opened (permissions)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError as exc:
        raise NotFoundError(f"no file at {path}") from exc
    except IsADirectoryError as exc:
        raise UsageError(f"{path} is a directory, not a regular file; Loci reads regular files only") from exc
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise _refuse(path, found.st_mode)
        if limit is not None and found.st_size > limit:
            raise UsageError(f"{path} has {found.st_size:,} bytes, over the limit of {limit:,}")
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str] | Path, limit: int) -> bytes:
    """The bytes of the regular file `path`; a file over `limit` bytes (even one growing as it is read) is refused."""
    with open_regular(path, limit) as source:
        data = source.read(limit + 1)
    if len(data) > limit:
        raise UsageError(f"{path} has more than {limit:,} bytes, over the limit")
    return data
