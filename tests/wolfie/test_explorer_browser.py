"""The Pack explorer in a real browser (issue 44): Debian's headless Chromium driven by
Playwright against a live ``wolfie api``, one server and one browser for the module."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from packs import Pack
from tests.support.api_server import api_server
from tests.support.chromium import CHROMIUM, CHROMIUM_FLAGS

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="Debian chromium (scripts/test.sh installs it)"
    ),
]

TOKEN = "explorer-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SCRIPT = "<script>window.__pwned = 1</script> how do I pay the invoice"
IMAGE = '<img src="x" onerror="window.__pwned = 2"> where is the invoice template'
QUESTION = "how do I rotate the signing keys"
MEMORIES = [
    (QUESTION, "run keys rotate --all"),
    ("where are the deploy logs", "in /var/log/deploy"),
    ("how do I restart the worker", "systemctl restart worker"),
    ("which port does the cache use", "6379"),
    (SCRIPT, "by bank transfer"),
    (IMAGE, "in the finance drive"),
]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("explorer")
    with Pack.open("desk", root) as pack:
        for intent, response in MEMORIES:
            pack.remember(intent, response)
        episode = pack.recall(QUESTION)
        pack.feedback(episode.episode_id or "", 1.0)
        pack.remember("bob's secret plan", "a bob only memory", metadata={"scope": "bob"})
        pack.remember("alice's reminder", "an alice memory", metadata={"scope": "alice"})
    return root


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def served(root: Path) -> Iterator[str]:
    with api_server(root, "desk", token=TOKEN) as url:
        yield url


@pytest.fixture
def page(browser: Any, served: str) -> Iterator[Any]:
    context = browser.new_context(
        base_url=served, extra_http_headers=AUTH, viewport={"width": 1280, "height": 800}
    )
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    yield page
    context.close()


def _find(page: Any, text: str) -> None:
    page.goto("/ui/p/desk/memories")
    page.get_by_label("Text").fill(text)
    page.get_by_role("button", name="Filter").click()


def test_the_packs_page_shows_the_pack_its_size_and_stage(page: Any):
    response = page.goto("/ui/")
    assert response.status == 200
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    row = page.locator("tr", has_text="desk")
    assert row.locator("td.stage").inner_text() in {"cold", "warming", "warm"}
    page.get_by_role("link", name="desk").click()
    assert page.locator("table.memories tbody tr").count() >= len(MEMORIES)


def test_find_a_memory_open_it_and_see_its_history(page: Any):
    _find(page, "deploy logs")
    rows = page.locator("table.memories tbody tr")
    assert rows.count() == 1
    rows.get_by_role("link").click()
    assert page.locator("p.memory-text").inner_text() == "where are the deploy logs"
    assert page.locator("ol.timeline .event").first.inner_text() == "remember"


def test_ask_shows_the_ranked_items_and_why(page: Any):
    page.goto("/ui/p/desk/ask")
    page.get_by_label("Question").fill(QUESTION)
    page.get_by_role("button", name="Ask").click()
    first = page.locator("li.item").first
    assert first.locator(".item-text").inner_text() == QUESTION
    assert "Phase A: similarity" in first.inner_text()
    assert first.locator("table.terms tr", has_text="utility").count() == 1
    assert QUESTION in first.locator("ul.evidence").inner_text()  # the rewarded past question


def test_stored_markup_is_shown_as_text_and_runs_nothing(page: Any):
    for text in (SCRIPT, IMAGE):
        _find(page, "invoice")
        assert page.get_by_text(text, exact=True).count() == 1  # the markup, as text
        page.get_by_text(text, exact=True).click()
        assert page.locator("p.memory-text").inner_text() == text
        assert page.evaluate("window.__pwned") is None
    page.goto("/ui/p/desk/ask?q=invoice")
    assert page.locator("li.item").count() >= 2
    assert page.evaluate("window.__pwned") is None


def test_forget_a_memory_and_see_it_gone(page: Any):
    _find(page, "restart the worker")
    page.locator("table.memories tbody tr").get_by_role("link").click()
    page.get_by_role("link", name="Forget").click()
    page.get_by_role("button", name="Yes, forget").click()
    page.wait_for_url(re.compile(r"/ui/p/desk/memories\?forgot=1$"))
    _find(page, "restart the worker")
    assert page.locator("table.memories tbody tr").count() == 0


def test_a_post_without_the_csrf_token_is_refused(served: str, root: Path):
    with Pack.open("desk", root, read_only=True) as pack:
        memory_id = pack.search("which port does the cache use").ids[0]
    url = f"{served}/ui/p/desk/m/{memory_id}/forget"
    refused = httpx.post(url, headers=AUTH, data={"csrf": "wrong"}, timeout=30)
    assert refused.status_code == 403 and "CSRF" in refused.text
    with Pack.open("desk", root, read_only=True) as pack:
        assert memory_id in pack.search("which port does the cache use").ids


def test_without_the_token_nothing_is_shown(browser: Any, served: str):
    context = browser.new_context(base_url=served)
    page = context.new_page()
    for path in ("/ui/", "/ui/p/desk/memories", "/ui/p/desk/ask?q=keys"):
        response = page.goto(path)
        assert response.status == 401
        assert "deploy" not in page.content() and "desk" not in page.content()
    context.close()


def test_a_scope_pinned_server_shows_nothing_of_another_scope(browser: Any, root: Path):
    with api_server(root, "desk", token=TOKEN, args=("--scope", "alice")) as url:
        context = browser.new_context(base_url=url, extra_http_headers=AUTH)
        page = context.new_page()
        page.goto("/ui/p/desk/memories")
        listed = page.locator("table.memories").inner_text()
        assert "alice's reminder" in listed and "bob" not in listed
        page.goto("/ui/p/desk/ask?q=bob%27s%20secret%20plan")
        assert page.locator("li.item").count() >= 1
        assert page.locator("li.item .item-text", has_text="bob").count() == 0
        with Pack.open("desk", root, read_only=True) as pack:
            bobs = pack.query("items", {"intent_text": "bob's secret plan"}, ["id"])["id"][0]
        response = page.goto(f"/ui/p/desk/m/{bobs}")
        assert response.status == 404 and "secret plan" not in page.content()
        context.close()
