"""End-to-end tests that drive the real Claude Code and Codex against a stub model (tests/clients/harness.py)."""

__all__: list[str] = []
