"""/docs of a real `gpuprices api` server, opened in headless Chromium (Debian's, through
Playwright): Swagger UI renders every endpoint from the server's own files, with no request
leaving 127.0.0.1 (the machine may have no internet)."""

from __future__ import annotations

import pytest
from playwright.sync_api import sync_playwright

from tests.api_server import ApiServer
from tests.bundled_warehouse import GROUP, bundled_settings
from tests.conftest import BROWSER, needs_chromium

pytestmark = GROUP  # one bundled warehouse per run (tests/bundled_warehouse.py)

ENDPOINTS = ["/healthz", "/offers/now", "/offers/cheapest", "/offers/{offer}/history",
             "/changes", "/index", "/stale", "/rank"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ApiServer(bundled_settings(tmp_path_factory).data_dir)
    yield s
    s.stop()


@needs_chromium
def test_docs_page_renders_the_endpoints_offline(server):
    outside = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=BROWSER, headless=True,
                                     args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.on("request", lambda r: None if r.url.startswith(server.url)
                    else outside.append(r.url))
            page.goto(server.url + "/docs")
            page.wait_for_selector(".opblock-summary-path", timeout=60_000)
            paths = page.locator(".opblock-summary-path").all_inner_texts()
            title = page.locator(".title").first.inner_text()
        finally:
            browser.close()
    # Swagger UI groups them by tag (offers, history, service, sizing): every one, once.
    assert sorted(p.replace("\u200b", "") for p in paths) == sorted(ENDPOINTS)
    assert "gpuprices API" in title
    assert outside == []
