"""`loci ui` over a home with tokens, on a real loopback port: each token reads and writes its projects only.

The page's API is answered for the project of the request's token: a token
of `a` cannot read, search, list or write `b` (another project's ids are not
found there), nor name `b` in `X-Loci-Project` (403); a token of both names
one; a read-only token cannot post feedback; a revoked token is refused on
its next request (`--token-cache 0`); the page's own session token still
reads the server's project.
"""

from __future__ import annotations

import queue
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from memory.records.tokens import Tokens
from memory.store import Store
from tests.servers.tokens_home import TokenHome
from tests.servers.ui.conftest import STARTUP_S, start_ui, stop


@dataclass(frozen=True)
class Page:
    url: str
    session: str

    def get(self, path: str, token: str | None, project: str | None = None) -> httpx.Response:
        return httpx.get(self.url + path.lstrip("/"), headers=_headers(token, project), timeout=30)

    def post(self, path: str, token: str | None, body: object) -> httpx.Response:
        return httpx.post(self.url + path.lstrip("/"), json=body, headers=_headers(token, None), timeout=30)


def _headers(token: str | None, project: str | None) -> dict[str, str]:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return headers | ({"x-loci-project": project} if project else {})


@pytest.fixture
def page(token_home: TokenHome) -> Iterator[Page]:
    process, lines = start_ui("--db", str(token_home.db), "--port", "0", "--token-cache", "0")
    try:
        line = lines.get(timeout=STARTUP_S)
    except queue.Empty:
        pytest.fail(f"loci ui printed no URL: {stop(process)}")
    url, _, session = line.split("the page is at ", 1)[1].strip().partition("#token=")
    try:
        yield Page(url, session)
    finally:
        stop(process)


async def test_a_token_of_a_reads_searches_and_lists_a_only(page: Page, token_home: TokenHome) -> None:
    alice = token_home.tokens["alice"]
    shown = [
        page.get(path, alice).text
        for path in ("/api/graph", "/api/recall?q=vault+code", "/api/documents", "/api/runs", "/api/records")
    ]
    theirs = [
        page.get(f"/api/node/{token_home.memories['b']}", alice),
        page.get(f"/api/runs/{token_home.runs['b']}", alice),
        page.get(f"/api/read/{token_home.documents['b']}", alice),
    ]
    named = page.get("/api/graph", alice, project="b")
    assert all("bravo" not in text for text in shown) and "alpha" in shown[1] and "alpha" in shown[3]
    assert [r.status_code for r in theirs] == [404, 404, 400] and not any("bravo" in r.text for r in theirs)
    assert named.status_code == 403 and named.json() == {"error": "this token cannot reach the project 'b'"}


async def test_a_token_of_two_projects_lists_them_and_reads_the_one_it_names(page: Page, token_home: TokenHome) -> None:
    both = token_home.tokens["both"]
    reach = page.get("/api/projects", both).json()
    first = page.get("/api/recall?q=vault+code", both).text
    second = page.get("/api/recall?q=vault+code", both, project="b").text
    assert reach == {"projects": ["a", "b"], "all": False, "read_only": False}
    assert "alpha" in first and "bravo" not in first
    assert "bravo" in second and "alpha" not in second


async def test_feedback_is_written_in_the_tokens_project_only_and_never_by_a_reader(
    page: Page, token_home: TokenHome
) -> None:
    own = page.post(f"/api/runs/{token_home.runs['a']}/feedback", token_home.tokens["alice"], {"outcome": "good"})
    theirs = page.post(f"/api/runs/{token_home.runs['b']}/feedback", token_home.tokens["alice"], {"outcome": "bad"})
    reader = page.post(f"/api/runs/{token_home.runs['a']}/feedback", token_home.tokens["reader"], {"outcome": "bad"})
    assert own.status_code == 200 and theirs.status_code == 404
    assert reader.status_code == 403 and reader.json() == {"error": "this token is read-only"}
    kept = page.get(f"/api/runs/{token_home.runs['a']}", token_home.tokens["alice"]).json()
    untouched = page.get(f"/api/runs/{token_home.runs['b']}", token_home.tokens["bob"]).json()
    assert kept["episode"]["outcome"] == 1.0 and untouched["episode"]["outcome"] is None


async def test_a_revoked_token_is_refused_on_its_next_request(page: Page, token_home: TokenHome) -> None:
    before = page.get("/api/runs", token_home.tokens["bob"])
    async with await Store.open(token_home.db) as store:
        await Tokens(store).revoke("bob")
    after = page.get("/api/runs", token_home.tokens["bob"])
    assert before.status_code == 200 and after.status_code == 401


async def test_without_a_token_nothing_is_read_and_the_session_token_reads_its_project(
    page: Page, token_home: TokenHome
) -> None:
    refused = page.get("/api/runs", None)
    owner = page.get("/api/recall?q=vault+code", page.session)
    assert refused.status_code == 401
    assert owner.status_code == 200 and owner.json()["hits"] == []  # the server's project, `default`, is empty
    assert page.get("/", None).status_code == 200  # the page itself holds no data
