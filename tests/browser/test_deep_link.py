"""A bookmarked page on a freshly started server looks like the page reached from home: the
workbench's tab title, the wide layout and the Japanese menu, even when nobody opened ``/`` yet.

Streamlit's older multipage mechanism discovers a folder named ``pages/`` beside the entry script
until ``st.navigation`` has run once; the page scripts live in ``views/`` so that it never does.
Each page's screenshot is kept under tests/artifacts/screenshots/."""

from __future__ import annotations

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.browser.conftest import running_app, save_screenshot
from ui.navigation import PAGES

pytestmark = pytest.mark.browser

VIEWPORT = {"width": 1440, "height": 900}
CENTERED_MAX_WIDTH = 736  # Streamlit's "centered" layout


def url_path(page_path: str) -> str:
    return page_path.rsplit("/", 1)[-1].removesuffix(".py")


def open_page(browser, url: str):
    """A new page at ``url``; one more try with a new page when the first load stalls."""
    for attempt in (1, 2):
        page = browser.new_page(viewport=VIEWPORT)
        try:
            page.goto(url, wait_until="domcontentloaded", timeout=45_000)
            return page
        except PlaywrightTimeoutError:
            page.close()
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def check_page(browser, url: str, info) -> None:
    page = open_page(browser, url)
    try:
        nav = page.locator('[data-testid="stSidebarNav"]')
        nav.wait_for(timeout=60_000)
        labels = nav.inner_text()
        for other in PAGES:
            assert other.title in labels, labels
        assert "interview" not in labels and "runbook chat" not in labels, labels
        main = page.locator('[data-testid="stMainBlockContainer"]')
        main.wait_for(timeout=30_000)
        page.wait_for_function(
            "t => document.title.includes(t)", arg="SOC ワークベンチ", timeout=30_000
        )
        assert ".py" not in page.title() and "interview" not in page.title(), page.title()
        assert main.bounding_box()["width"] > CENTERED_MAX_WIDTH + 100
        # the screenshot shows the page once its script has finished running
        page.wait_for_timeout(1000)
        page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=60_000)
        page.wait_for_timeout(500)
        save_screenshot(page, url_path(info.path) or "home")
    finally:
        page.close()


def test_deep_link_on_a_fresh_server(browser, tmp_path):
    by_name = {url_path(p.path): p for p in PAGES}
    with running_app(tmp_path / "state") as url:
        # The very first request to this server is a deep link.
        check_page(browser, url + "/interview", by_name["interview"])
        for name, info in by_name.items():
            if name != "interview":
                check_page(browser, url + ("/" if info.default else f"/{name}"), info)
