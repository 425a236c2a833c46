"""`loci ui`'s gate over real HTTP: token, Host, Origin, body size, bad input, and a refused start."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.runtime.cli_helpers import loci
from tests.servers.ui.conftest import Served, start_ui, stop


def post(served: Served, path: str, body: Any, **headers: str) -> httpx.Response:
    return httpx.post(f"{served.url}{path.lstrip('/')}", json=body, headers=headers, timeout=30)


def get(served: Served, path: str, **headers: str) -> httpx.Response:
    return httpx.get(f"{served.url}{path.lstrip('/')}", headers=headers, timeout=30)


def test_a_wrong_token_gets_401_and_no_feedback_is_written(served: Served) -> None:
    run = served.ids["runs"][0]
    missing = post(served, f"/api/runs/{run}/feedback", {"outcome": "bad"})
    wrong = post(served, f"/api/runs/{run}/feedback", {"outcome": "bad"}, authorization="Bearer not-the-token")
    assert (missing.status_code, wrong.status_code) == (401, 401)
    assert wrong.json() == {"error": "missing or wrong session token"}
    assert get(served, f"/api/runs/{run}").json()["episode"]["outcome"] is None


def test_a_bad_origin_gets_403_and_a_bad_host_421(served: Served) -> None:
    auth = f"Bearer {served.token}"
    run = served.ids["runs"][1]
    other = post(served, f"/api/runs/{run}/feedback", {"outcome": "bad"}, authorization=auth, origin="http://evil.test")
    assert other.status_code == 403 and "another origin" in other.json()["error"]
    rebound = get(served, "/api/runs", host="evil.test:8780")
    assert rebound.status_code == 421
    assert get(served, "/api/runs", origin=served.url.rstrip("/")).status_code == 200


def test_a_body_over_the_limit_gets_413(served: Served) -> None:
    auth = f"Bearer {served.token}"
    note = "x" * 100_000
    big = post(
        served, f"/api/runs/{served.ids['runs'][1]}/feedback", {"outcome": "bad", "note": note}, authorization=auth
    )
    assert big.status_code == 413


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/api/node/mem:99999", 404, "no memory mem:99999"),
        ("/api/node/banana", 404, "not a memory id"),
        ("/api/recall?q=", 400, "the recall query is empty"),
        ("/api/graph?limit=many", 400, "limit must be a whole number"),
        ("/api/runs/77", 404, "no run 77"),
        ("/api/read/doc:1?start=999", 400, "outside"),
        ("/api/outline/doc:99", 400, "doc:99"),
    ],
)
def test_bad_requests_get_a_clear_error(served: Served, path: str, status: int, message: str) -> None:
    response = get(served, path)
    assert response.status_code == status
    assert message in response.json()["error"]


def test_bad_feedback_is_a_clear_400_and_writes_nothing(served: Served) -> None:
    auth = f"Bearer {served.token}"
    run = served.ids["runs"][2]
    so_so = post(served, f"/api/runs/{run}/feedback", {"outcome": "so-so"}, authorization=auth)
    assert so_so.status_code == 400 and "not good, bad or a number" in so_so.json()["error"]
    empty = post(served, f"/api/runs/{run}/feedback", {}, authorization=auth)
    assert empty.status_code == 400 and "needs an outcome" in empty.json()["error"]
    assert get(served, f"/api/runs/{run}").json()["episode"]["feedback"] == "right fee"


def test_only_get_and_post_are_served(served: Served) -> None:
    response = httpx.delete(f"{served.url}api/runs", headers={"authorization": f"Bearer {served.token}"}, timeout=30)
    assert response.status_code == 405


def test_off_loopback_without_a_token_file_refuses_to_start(tmp_path: Path) -> None:
    done = loci("ui", "--host", "0.0.0.0", "--db", str(tmp_path / "loci.db"), home=tmp_path)
    assert done.returncode == 2
    assert "refusing to serve 0.0.0.0 without a token" in done.stderr
    assert not (tmp_path / "loci.db").exists()


def test_an_empty_token_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("")
    done = loci("ui", "--token-file", str(tmp_path / "token"), "--db", str(tmp_path / "loci.db"), home=tmp_path)
    assert done.returncode == 2 and "is empty" in done.stderr


def test_with_a_token_file_every_read_needs_the_token(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("s3cret-token\n")
    process, lines = start_ui("--db", str(tmp_path / "loci.db"), "--port", "0", "--token-file", str(tmp_path / "token"))
    try:
        line = lines.get(timeout=120)
        url = line.split("the page is at ", 1)[1].split("#", 1)[0]
        assert line.strip().endswith("#token=s3cret-token")
        assert httpx.get(f"{url}api/runs", timeout=30).status_code == 401
        assert httpx.get(f"{url}api/runs", headers={"authorization": "Bearer s3cret-token"}, timeout=30).json() == []
        assert httpx.get(url, timeout=30).status_code == 200  # the page itself holds no data
    finally:
        logged = stop(process)
    assert "s3cret-token" not in logged and "authorization" not in logged.lower()  # no access log, no headers
