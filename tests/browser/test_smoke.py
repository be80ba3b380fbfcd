"""The running app in a real browser: the home page renders the index status."""

import pytest

pytestmark = pytest.mark.browser


def test_home_page_in_chromium(browser, app_url):
    page = browser.new_page()
    page.goto(app_url, wait_until="domcontentloaded", timeout=90_000)
    page.get_by_text("SOC ワークベンチ").first.wait_for(timeout=30_000)
    page.get_by_text("インデックスの状態").wait_for(timeout=30_000)
    page.get_by_text("チャンク", exact=False).first.wait_for(timeout=30_000)
    page.close()
