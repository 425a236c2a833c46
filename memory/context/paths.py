"""Which files the context store may read: an allow-list of roots.

When Loci is served, the agent may only read what the user loaded plus the
roots given on the command line. A path is checked after it is fully
resolved (symlinks followed, `..` folded), so a symlink or a `..` that leads
out of every root is refused, whatever the path looks like. Without roots
(the command line, where the user names the files) any path is allowed, but
a directory walk still treats the directory as its root: a symlink inside a
project that points at `/etc` is skipped, not followed.

Only regular files and directories pass: a FIFO, a device or a socket is
refused before anything opens it (a FIFO blocks its reader until someone
writes into it, `/dev/zero` never ends), and a directory walk skips them.

Relative paths are taken against the first root when there are roots (the
server's working directory means nothing to a client), else against the
current directory.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from loci.memory.errors import NotFoundError, UsageError
from loci.memory.regular import describe_mode

__all__ = ["SKIP_DIRS", "Roots", "inside", "walk"]


def inside(path: Path, root: Path) -> bool:
    """Whether resolved `path` is `root` or below it."""
    return path == root or path.is_relative_to(root)


class Roots:
    """The allow-list. `Roots(None)` allows everything."""

    def __init__(self, roots: Iterable[str | os.PathLike[str]] | None = None) -> None:
        self.roots: list[Path] | None = None
        if roots is not None:
            self.roots = []
            for root in roots:
                path = Path(root).expanduser()
                if not path.is_dir():
                    raise UsageError(f"the root {path} is not a directory")
                self.roots.append(path.resolve())

    def __bool__(self) -> bool:
        return self.roots is not None

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """The real path of `path`, or a `UsageError` saying why it may not be read."""
        given = Path(path).expanduser()
        if not given.is_absolute():
            base = self.roots[0] if self.roots else Path.cwd()
            given = base / given
        if not os.path.lexists(given):
            raise NotFoundError(f"file not found: {path}")
        try:
            real = given.resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            raise UsageError(f"cannot resolve {path}: {exc} (a broken or looping symlink?)") from exc
        if self.roots is not None and not any(inside(real, root) for root in self.roots):
            raise UsageError(self._refusal(path, given, real))
        what = describe_mode(real.stat().st_mode)
        if what and what != "a directory":  # a FIFO would block its reader, a device never end
            raise UsageError(f"refused to read {path}: it is {what}, not a regular file")
        return real

    def _refusal(self, path: str | os.PathLike[str], given: Path, real: Path) -> str:
        allowed = ", ".join(str(root) for root in self.roots or [])
        lexical = Path(os.path.normpath(given))
        if any(inside(lexical, root) for root in self.roots or []):
            how = f"it is, or passes through, a symlink to {real}"
        elif ".." in Path(path).parts:
            how = f"its '..' leads to {real}"
        else:
            how = f"it is {real}"
        return f"refused to read {path}: {how}, outside the allowed roots ({allowed})"


SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__"})


def walk(directory: Path) -> Iterator[tuple[Path, Path | None, str | None]]:
    """`(path, real path, None)` for each file under `directory`, or `(path, None, reason)` to skip it.

    Files come in a stable (sorted) order; `.git` and the like are not
    entered, symlinked directories are not followed, and a symlinked file is
    kept only if it resolves inside `directory` (already resolved).
    """
    for folder, dirs, files in os.walk(directory, onerror=None, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            path = Path(folder) / name
            try:
                real = path.resolve(strict=True)
            except (OSError, RuntimeError):
                yield path, None, "a broken or looping symlink"
                continue
            if not inside(real, directory):
                yield path, None, f"a symlink to {real}, outside {directory}"
            elif not real.is_file():
                yield path, None, "not a regular file"
            else:
                yield path, real, None
