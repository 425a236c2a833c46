"""`loci tokens` as a user runs it: the token printed once, a list without it, revocation, bad input exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runtime.cli_helpers import loci


def test_add_prints_the_token_once_and_list_never_shows_it(tmp_path: Path) -> None:
    added = loci("tokens", "add", "alice", "--project", "app", "--project", "docs", home=tmp_path)
    token = added.stdout.strip()
    listed = loci("tokens", "list", home=tmp_path)
    as_json = loci("tokens", "list", "--json", home=tmp_path)
    assert added.returncode == 0 and len(token) == 43 and "shown once" in added.stderr
    assert listed.returncode == 0 and "alice" in listed.stdout and "app, docs" in listed.stdout
    assert token not in listed.stdout + as_json.stdout
    assert json.loads(as_json.stdout)[0] | {"created": 0} == {
        "name": "alice",
        "projects": ["app", "docs"],
        "read_only": False,
        "created": 0,
        "last_used": None,
    }


def test_revoke_takes_the_token_out_of_the_list(tmp_path: Path) -> None:
    loci("tokens", "add", "ci", "--project", "app", "--read-only", home=tmp_path)
    revoked = loci("tokens", "revoke", "ci", home=tmp_path)
    again = loci("tokens", "revoke", "ci", home=tmp_path)
    assert revoked.returncode == 0 and "revoked ci" in revoked.stdout
    assert loci("tokens", "list", "--json", home=tmp_path).stdout.strip() == "[]"
    assert again.returncode == 2 and again.stderr.strip() == "loci: no token named 'ci'; loci tokens list shows them"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["add", "two words", "--project", "app"], "is not a token name"),
        (["add", "alice", "--project", "../etc"], "is not a project name"),
        (["add", "alice"], "a token needs at least one project"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    done = loci("tokens", *args, home=tmp_path)
    assert done.returncode == 2 and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "loci.db").exists()  # refused before the home was opened


def test_a_second_token_of_one_name_is_refused(tmp_path: Path) -> None:
    first = loci("tokens", "add", "alice", "--project", "app", home=tmp_path)
    second = loci("tokens", "add", "alice", "--project", "app", home=tmp_path)
    assert first.returncode == 0 and second.returncode == 2 and "exists" in second.stderr
    assert second.stdout == ""


def test_tokens_are_added_listed_and_revoked_in_a_postgresql_home(tmp_path: Path, postgres_url: str) -> None:
    added = loci("tokens", "add", "alice", "--project", "app", "--db", postgres_url, home=tmp_path)
    listed = loci("tokens", "list", "--json", "--db", postgres_url, home=tmp_path)
    revoked = loci("tokens", "revoke", "alice", "--db", postgres_url, home=tmp_path)
    again = loci("tokens", "revoke", "alice", "--db", postgres_url, home=tmp_path)
    assert added.returncode == 0 and len(added.stdout.strip()) == 43
    assert [r["name"] for r in json.loads(listed.stdout)] == ["alice"] and added.stdout.strip() not in listed.stdout
    assert revoked.returncode == 0 and again.returncode == 2 and "no token named 'alice'" in again.stderr
    assert list(tmp_path.iterdir()) == []  # nothing was made in the SQLite home
