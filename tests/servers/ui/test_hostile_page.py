"""The page under its own Content Security Policy: it loads, draws and posts with nothing refused."""

from __future__ import annotations

from typing import Any

import pytest

from tests.servers.ui.conftest import Served

pytestmark = pytest.mark.slow


def test_the_page_works_under_its_csp_and_nothing_it_does_is_refused(browser: Any, served: Served) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 900})  # CSP enforced, as for a person
    page = context.new_page()
    page.set_default_timeout(30_000)
    said: list[str] = []
    page.on("console", lambda message: said.append(message.text))
    page.on("pageerror", lambda error: said.append(str(error)))
    try:
        response = page.goto(served.with_token)
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
        page.wait_for_selector("body[data-graph='top']", state="attached")
        page.click("button[data-view=runs]")
        page.wait_for_selector("#runs tbody tr")
    finally:
        context.close()
    refused = [line for line in said if "Content Security Policy" in line or "Refused" in line]
    assert refused == []
