"""Issue 45: ``/docs`` was blank offline. FastAPI's pages load Swagger UI and ReDoc from a
CDN; the pages now load every script, style sheet and icon from the server itself
(wolfie/api/docs_pages.py). Checked on a live ``wolfie api``: the HTML names no other
host, and headless Chromium (Debian's, driven by playwright, which never downloads a
browser here) renders Swagger UI with every non-loopback request blocked."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from tests.support.api_server import api_server
from tests.support.chromium import CHROMIUM, CHROMIUM_FLAGS

LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
REFERENCE = re.compile(r"""(?:src|href|url)\s*[:=]\s*['"]([^'"]+)['"]""")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    with api_server(tmp_path_factory.mktemp("api"), "desk", token="docs-token") as url:
        yield url


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_docs_pages_reference_no_other_host(server: str, page: str):
    html = httpx.get(f"{server}{page}", timeout=30).text
    references = REFERENCE.findall(html)
    assert len(references) >= 2, html  # the script and the icon at least
    for reference in references:
        target = urlsplit(urljoin(f"{server}{page}", reference))
        assert target.netloc == urlsplit(server).netloc, reference
        if target.path.endswith((".js", ".css", ".png")):
            assert httpx.get(urljoin(server, target.path), timeout=30).status_code == 200
    assert "cdn" not in html.lower() and "fonts.googleapis" not in html


@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian chromium")
def test_swagger_ui_renders_in_chromium_with_the_network_blocked(server: str, tmp_path: Path):
    sync_api = pytest.importorskip("playwright.sync_api")
    blocked: list[str] = []

    def only_loopback(route) -> None:  # type: ignore[no-untyped-def]
        if urlsplit(route.request.url).hostname in LOOPBACK:
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS
        )
        try:
            page = browser.new_page()
            page.route("**/*", only_loopback)
            page.goto(f"{server}/docs", wait_until="load", timeout=60_000)
            page.wait_for_selector(".swagger-ui .opblock", timeout=60_000)
            title = page.inner_text(".swagger-ui .info .title")
            operations = page.locator(".swagger-ui .opblock").count()
        finally:
            browser.close()
    assert title.startswith("Wolfie"), title
    assert operations >= 10  # one block per route of the schema
    assert blocked == []  # the page asked for nothing outside the server
