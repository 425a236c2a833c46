"""`loci ui` over a home with tokens, on a real loopback port: each token reads and writes its projects only.

The page's API is answered for the project of the request's token: a token
of `a` cannot read, search, list or write `b` (another project's ids are not
found there), nor name `b` in `X-Loci-Project` (403); a token of both names
one; a read-only token cannot post feedback; a revoked token is refused on
its next request (`--token-cache 0`); the page's own session token still
reads the server's project. Each test runs over a SQLite home and a
PostgreSQL one (`token_home`).
"""

from __future__ import annotations

import queue
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.servers.tokens_home import TokenHome, revoke
from tests.servers.ui.conftest import STARTUP_S, run_async, start_ui, stop

OPTIONS = "options => options.map(o => o.value)"
HITS = "items => items.map(li => li.textContent).join(' ')"


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


def serving(home: TokenHome) -> Iterator[Page]:
    process, lines = start_ui("--db", home.db, "--port", "0", "--token-cache", "0")
    try:
        line = lines.get(timeout=STARTUP_S)
    except queue.Empty:
        pytest.fail(f"loci ui printed no URL: {stop(process)}")
    url, _, session = line.split("the page is at ", 1)[1].strip().partition("#token=")
    try:
        yield Page(url, session)
    finally:
        stop(process)


@pytest.fixture
def ui(token_home: TokenHome) -> Iterator[Page]:
    yield from serving(token_home)


def test_a_token_of_a_reads_searches_and_lists_a_only(ui: Page, token_home: TokenHome) -> None:
    alice = token_home.tokens["alice"]
    paths = ("/api/graph", "/api/totals", "/api/recall?q=vault+code", "/api/procedures", "/api/jobs")
    shown = [ui.get(path, alice) for path in paths]
    theirs = ui.get(f"/api/node/{token_home.memories['b']}", alice)
    around = ui.get(f"/api/around/{token_home.memories['b']}", alice)
    named = ui.get("/api/graph", alice, project="b")
    assert [r.status_code for r in shown] == [200] * len(paths)
    assert all("bravo" not in r.text for r in shown) and "alpha" in shown[2].text
    assert shown[1].json()["total_nodes"] == 2  # a's memory and its run's episode
    assert (theirs.status_code, around.status_code) == (404, 404)
    assert "bravo" not in theirs.text + around.text
    assert named.status_code == 403 and named.json() == {"error": "this token cannot reach the project 'b'"}


def test_a_token_of_a_reads_the_runs_and_documents_of_a_only(ui: Page, token_home: TokenHome) -> None:
    home, alice = token_home, token_home.tokens["alice"]
    paths = ("/api/documents", "/api/runs", "/api/records", "/api/digests")
    answers = [ui.get(path, alice) for path in paths]
    shown = [r.text for r in answers]
    own = [ui.get(f"/api/runs/{home.runs['a']}", alice), ui.get(f"/api/read/{home.documents['a']}", alice)]
    theirs = [ui.get(f"/api/runs/{home.runs['b']}", alice), ui.get(f"/api/read/{home.documents['b']}", alice)]
    jobs = ui.get("/api/jobs", alice).json()
    assert [r.status_code for r in [*answers, *own]] == [200] * 6
    assert all("bravo" not in text for text in shown) and "alpha" in shown[1]
    assert [d["name"] for d in answers[0].json()["documents"]] == ["a.txt"]
    assert "alpha-4471" in own[0].text and "alpha-4471" in own[1].text
    assert [r.status_code for r in theirs] == [404, 400] and not any("bravo" in r.text for r in theirs)
    assert jobs["counts"]["queued"] == 1 and len(jobs["jobs"]) == 1  # its episode's refinement, not b's


def test_a_token_of_two_projects_lists_them_and_reads_the_one_it_names(ui: Page, token_home: TokenHome) -> None:
    both = token_home.tokens["both"]
    reach = ui.get("/api/projects", both).json()
    first = ui.get("/api/recall?q=vault+code", both).text
    second = ui.get("/api/recall?q=vault+code", both, project="b").text
    assert reach == {"projects": ["a", "b"], "all": False, "read_only": False}
    assert "alpha" in first and "bravo" not in first
    assert "bravo" in second and "alpha" not in second


def test_feedback_is_written_in_the_tokens_project_only_and_never_by_a_reader(ui: Page, token_home: TokenHome) -> None:
    own = ui.post(f"/api/runs/{token_home.runs['a']}/feedback", token_home.tokens["alice"], {"outcome": "good"})
    theirs = ui.post(f"/api/runs/{token_home.runs['b']}/feedback", token_home.tokens["alice"], {"outcome": "bad"})
    reader = ui.post(f"/api/runs/{token_home.runs['a']}/feedback", token_home.tokens["reader"], {"outcome": "bad"})
    assert own.status_code == 200 and theirs.status_code == 404
    assert reader.status_code == 403 and reader.json() == {"error": "this token is read-only"}
    kept = ui.get(f"/api/runs/{token_home.runs['a']}", token_home.tokens["alice"]).json()
    untouched = ui.get(f"/api/runs/{token_home.runs['b']}", token_home.tokens["bob"]).json()
    assert kept["episode"]["outcome"] == 1.0 and untouched["episode"]["outcome"] is None


def test_a_revoked_token_is_refused_on_its_next_request(ui: Page, token_home: TokenHome) -> None:
    before = ui.get("/api/graph", token_home.tokens["bob"])
    run_async(revoke, token_home.db, "bob")
    after = ui.get("/api/graph", token_home.tokens["bob"])
    assert before.status_code == 200 and after.status_code == 401


def test_without_a_token_nothing_is_read_and_the_session_token_reads_its_project(
    ui: Page, token_home: TokenHome
) -> None:
    refused = ui.get("/api/graph", None)
    owner = ui.get("/api/recall?q=vault+code", ui.session)
    assert refused.status_code == 401
    assert owner.status_code == 200 and owner.json()["hits"] == []  # the server's project, `default`, is empty
    assert ui.get("/", None).status_code == 200  # the page itself holds no data


def _recall(page: Any, query: str) -> str:
    page.fill("#q", query)
    page.press("#q", "Enter")
    page.wait_for_function("document.body.dataset.counted === 'recall'")
    return page.eval_on_selector_all("#hits li", HITS)


@pytest.mark.slow
def test_the_page_offers_the_tokens_projects_and_shows_the_one_chosen(
    page: Any, ui: Page, token_home: TokenHome
) -> None:
    page.goto(f"{ui.url}#token={token_home.tokens['both']}")
    page.wait_for_selector("#project:not([hidden])")
    offered = page.eval_on_selector_all("#project option", OPTIONS)
    first = _recall(page, "vault code")
    page.select_option("#project", "b")
    page.wait_for_function("document.body.dataset.graph === 'top'")
    chosen = _recall(page, "vault code")
    assert offered == ["a", "b"]
    assert "alpha" in first and "bravo" not in first
    assert "bravo" in chosen and "alpha" not in chosen


@pytest.mark.slow
def test_a_token_of_one_project_gets_no_choice(page: Any, ui: Page, token_home: TokenHome) -> None:
    page.goto(f"{ui.url}#token={token_home.tokens['alice']}")
    page.wait_for_function("document.body.dataset.graph === 'top'")
    shown = _recall(page, "vault code")
    assert page.is_hidden("#project") and "alpha" in shown and "bravo" not in shown
