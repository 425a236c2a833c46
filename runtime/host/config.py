"""The `mcpServers` file: which external MCP servers the agent may use, and how to reach them.

The format MCP clients already use, with Loci's few additions:

    {"mcpServers": {
        "files":  {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"],
                   "env": {"DEBUG": "0"}, "cwd": "/srv", "deny": ["write_file"]},
        "search": {"url": "http://127.0.0.1:9000/mcp", "headers": {"Authorization": "Bearer ${SEARCH_KEY}"},
                   "allow": ["search"], "timeout": 30}}}

`command`, `args`, `env` and `cwd` start a stdio server; `url` and `headers`
reach a streamable-HTTP one. `${NAME}` in `env`, `headers` and `args` is
taken from Loci's own environment, so keys stay out of the file. `allow`
(only these tools) and `deny` (never these) filter the server's tools by
their own names; `timeout` (seconds) overrides the per-call timeout.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

from loci.memory.errors import UsageError
from loci.memory.json_input import loads

__all__ = ["ServerSpec", "load_server_config"]

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class ServerSpec:
    """One entry of the file: a stdio command or a URL, and the filters on its tools."""

    name: str
    stdio: StdioServerParameters | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    allow: frozenset[str] | None = None
    deny: frozenset[str] = frozenset()
    timeout: float | None = None

    def permits(self, tool: str) -> bool:
        return (self.allow is None or tool in self.allow) and tool not in self.deny

    @property
    def target(self) -> StdioServerParameters | str:
        return self.stdio if self.stdio is not None else str(self.url)


def load_server_config(path: str | Path) -> dict[str, ServerSpec]:
    """Read an `mcpServers` file; a clear `UsageError` for anything malformed."""
    path = Path(path)
    try:
        data = loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read the MCP server file {path}: {exc.strerror}") from exc
    except ValueError as exc:
        raise UsageError(f"{path} is not valid JSON: {exc}") from exc
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise UsageError(f"{path} must hold an object with an `mcpServers` object")
    return {name: _spec(name, entry, path) for name, entry in servers.items()}


def _spec(name: str, entry: Any, path: Path) -> ServerSpec:
    where = f"the MCP server {name!r} in {path}"
    if not isinstance(entry, dict):
        raise UsageError(f"{where} must be an object with a `command` or a `url`")
    filters = {
        "allow": frozenset(_strings(entry, "allow", where)) if "allow" in entry else None,
        "deny": frozenset(_strings(entry, "deny", where)),
        "timeout": _timeout(entry.get("timeout"), where),
    }
    if isinstance(entry.get("url"), str):
        headers = {k: _expand(v) for k, v in _mapping(entry, "headers", where).items()}
        return ServerSpec(name, url=entry["url"], headers=headers, **filters)
    if isinstance(entry.get("command"), str):
        env = {k: _expand(v) for k, v in _mapping(entry, "env", where).items()}
        cwd = entry.get("cwd")
        if cwd is not None and not (isinstance(cwd, str) and Path(cwd).is_dir()):
            raise UsageError(f"{where}: `cwd` {cwd!r} is not a directory")
        args = [_expand(a) for a in _strings(entry, "args", where)]
        stdio = StdioServerParameters(command=entry["command"], args=args, env=env or None, cwd=cwd)
        return ServerSpec(name, stdio=stdio, **filters)
    raise UsageError(f"{where} needs a `command` or a `url`")


def _strings(entry: dict[str, Any], key: str, where: str) -> list[str]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{where}: `{key}` must be a list of strings")
    return value


def _mapping(entry: dict[str, Any], key: str, where: str) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise UsageError(f"{where}: `{key}` must be an object of strings")
    return value


def _timeout(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 3600:
        raise UsageError(f"{where}: `timeout` is a number of seconds, above 0 and at most 3600")
    return float(value)


def _expand(text: str) -> str:
    return _VARIABLE.sub(lambda m: os.environ.get(m.group(1), ""), text)
