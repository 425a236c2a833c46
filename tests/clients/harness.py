"""A machine of the tests' own for the real clients: a temporary HOME, this tree's Loci, the stub model, no network.

`Machine(root, stub)` holds a HOME under `root` with its own Loci home
(`LOCI_HOME`), Claude Code's folder and Codex's (`CODEX_HOME`, whose
`config.toml` names the stub as the model provider over the Responses API),
and a project folder the clients run in. `env` is the only environment the
clients and Loci get: PATH holds Node 22 and the clients from .ci/.tools
(.ci/clients installs them), a `loci` executable that runs this tree's CLI
(`loci_bin`, as `pip install` puts one in a venv) and the system's own
folders, never another Loci; PYTHONPATH is this tree too, so every hook and
server is this tree's code (Codex starts an MCP server with a few variables
only, PYTHONPATH not among them: the `loci` executable carries its own).
Nothing reaches the network: each client's telemetry, error reports,
update checks and other non-essential traffic are off by their own
variables and settings, every proxy variable points at a closed port of
127.0.0.1 (`NO_PROXY` lets the stub through), and the model is the stub.
Every run is bounded (`TIMEOUT_S`).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.clients.stub_model import StubModel

__all__ = ["CLIENT_BIN", "ROOT", "TIMEOUT_S", "Machine", "missing_clients"]

ROOT = Path(__file__).resolve().parents[2]
CLIENT_BIN = ROOT / ".ci" / ".tools" / "node_modules" / ".bin"
TIMEOUT_S = 120
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens there
QUIET_CLAUDE = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_BUG_COMMAND": "1",
    "DISABLE_NON_ESSENTIAL_MODEL_CALLS": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
    "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
    "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
}
CODEX_CONFIG = """model = "stub-model"
model_provider = "stub"
check_for_update_on_startup = false
approval_policy = "never"

[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false
apps = false
shell_snapshot = false

[model_providers.stub]
name = "stub"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "STUB_API_KEY"
request_max_retries = 0
stream_max_retries = 0
"""


def missing_clients() -> str | None:
    """Why the clients cannot run here, or None."""
    absent = [name for name in ("node", "claude", "codex") if not (CLIENT_BIN / name).exists()]
    return f"{', '.join(absent)} not in {CLIENT_BIN}: run `bash .ci/clients`" if absent else None


@dataclass
class Machine:
    """A HOME, a Loci home and a project folder for the clients, with the stub as their model."""

    root: Path
    stub: StubModel

    def __post_init__(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.project.mkdir(parents=True, exist_ok=True)
        self.codex_home.mkdir(parents=True, exist_ok=True)
        (self.codex_home / "config.toml").write_text(CODEX_CONFIG.format(url=self.stub.url), encoding="utf-8")
        python, tree = shlex.quote(sys.executable), shlex.quote(str(ROOT))
        self.loci_bin.parent.mkdir(parents=True, exist_ok=True)
        self.loci_bin.write_text(f'#!/bin/sh\nPYTHONPATH={tree} exec {python} -m loci.runtime.cli.main "$@"\n', "utf-8")
        self.loci_bin.chmod(0o755)

    @property
    def loci_bin(self) -> Path:
        """This tree's `loci` executable."""
        return self.root / "venv-bin" / "loci"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def project(self) -> Path:
        return self.root / "work" / "harbor"

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    @property
    def db(self) -> Path:
        return self.home / ".loci" / "loci.db"

    @property
    def env(self) -> dict[str, str]:
        proxies = {name: CLOSED for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy")}
        return {
            "HOME": str(self.home),
            "PATH": f"{CLIENT_BIN}:{self.loci_bin.parent}:/usr/local/bin:/usr/bin:/bin",
            "PYTHONPATH": str(ROOT),
            "LANG": "C.UTF-8",
            "LOCI_HOME": str(self.db.parent),
            "CODEX_HOME": str(self.codex_home),
            "ANTHROPIC_BASE_URL": self.stub.url,
            "ANTHROPIC_API_KEY": "sk-stub",
            "STUB_API_KEY": "sk-stub",
            **QUIET_CLAUDE,
            "MCP_CONNECTION_NONBLOCKING": "0",  # `claude -p` waits for its MCP servers before the first request
            **proxies,
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }

    def run(self, argv: list[str], stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
        """`argv` in the project folder with the machine's environment (plus `env`), bounded by `TIMEOUT_S`."""
        return subprocess.run(
            argv,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            cwd=self.project,
            env={**self.env, **env},
        )

    def loci(self, *args: str) -> subprocess.CompletedProcess[str]:
        """This tree's `loci` (the script runs the same `main`)."""
        done = self.run([sys.executable, "-m", "loci.runtime.cli.main", *args])
        assert done.returncode == 0, done.stderr
        return done

    def claude(self, prompt: str, *args: str, **env: str) -> dict:
        """`claude -p PROMPT` headless; its JSON result."""
        done = self.run([str(CLIENT_BIN / "claude"), "-p", prompt, "--output-format", "json", *args], **env)
        assert done.returncode == 0, f"claude exited {done.returncode}: {done.stderr[-2000:]}{done.stdout[-2000:]}"
        return json.loads(done.stdout)

    def claude_events(self, prompt: str, *args: str, **env: str) -> list[dict]:
        """`claude -p PROMPT --output-format stream-json --verbose`: every event it printed, the hooks' among them."""
        argv = [str(CLIENT_BIN / "claude"), "-p", prompt, "--output-format", "stream-json", "--verbose", *args]
        done = self.run(argv, **env)
        assert done.returncode == 0, f"claude exited {done.returncode}: {done.stderr[-2000:]}"
        return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]

    def codex(self, prompt: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        """`codex exec PROMPT` headless (stdin closed), in the project folder, which is no git repository."""
        argv = [str(CLIENT_BIN / "codex"), "exec", "--skip-git-repo-check", *args, prompt]
        done = self.run(argv, **env)
        assert done.returncode == 0, f"codex exited {done.returncode}: {done.stderr[-3000:]}"
        return done

    def times_in_each_request(self, text: str) -> list[int]:
        """How many times `text` was sent to the model, request by request."""
        return [json.dumps(body, ensure_ascii=False).count(text) for body in self.stub.requests]

    def sent(self) -> str:
        """Everything the clients sent the model, as one JSON text (each request body on its line)."""
        return "\n".join(json.dumps(body, ensure_ascii=False) for body in self.stub.requests)
