"""Signing in for real: the app, a real OpenID Connect provider on 127.0.0.1 (oidc-provider-mock)
and Chromium. Two users of different groups each see only their pages; a page outside the role
opened by its URL is refused; sign-out brings back the sign-in screen."""

from __future__ import annotations

from datetime import date

import pytest

from core.audit import log_path, read_records
from tests.browser.conftest import free_port, running_app, save_screenshot
from tests.support.oidc import OPERATOR, REVIEWER, ROLE_MAP, oidc_provider, secrets_toml

pytestmark = pytest.mark.browser

LOAD = 90_000  # a fresh server's first render on a busy machine
WAIT = 60_000
QUESTION = "VPN に接続できないときの確認手順（ブラウザのサインイン試験）"


@pytest.fixture(scope="module")
def signed_app(tmp_path_factory, sample_state):
    secrets = tmp_path_factory.mktemp("auth") / "secrets.toml"
    port = free_port()
    with oidc_provider() as issuer:
        secrets.write_text(secrets_toml(issuer, f"http://127.0.0.1:{port}/oauth2callback"), "utf-8")
        env = {
            "WB_SECRETS_PATH": str(secrets),
            "WB_ROLE_MAP": ROLE_MAP,
            "FORWARDED_ALLOW_IPS": "",  # as `python -m core serve` starts it
        }
        with running_app(
            sample_state, env, port=port, extra_args=("--secrets.files", str(secrets))
        ) as url:
            yield url


def sign_in(browser, url: str, subject: str):
    """A fresh browser context (its own cookies) signed in as ``subject`` on the provider's form."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(url, wait_until="domcontentloaded", timeout=LOAD)
    page.get_by_role("button", name="サインイン").click(timeout=LOAD)
    # the provider's authorization form: the predefined user's button
    page.get_by_role("button", name=subject).click(timeout=WAIT)
    page.get_by_text("サインイン中").wait_for(timeout=WAIT)
    return context, page


def menu(page) -> str:
    nav = page.locator('[data-testid="stSidebarNav"]')
    nav.wait_for(timeout=WAIT)
    return nav.inner_text()


def test_two_users_see_their_pages_and_sign_out(browser, signed_app, sample_state):
    # before signing in: the sign-in screen, no menu, no page
    first = browser.new_page()
    first.goto(signed_app, wait_until="domcontentloaded", timeout=LOAD)
    first.get_by_role("button", name="サインイン").wait_for(timeout=LOAD)
    assert first.locator('[data-testid="stSidebarNav"]').count() == 0
    assert first.get_by_text("インデックスの状態").count() == 0
    save_screenshot(first, "sign-in")
    first.close()

    # the operator: runbook chat, Wikipedia QA, interview; no dashboard, no question sets
    op_context, op = sign_in(browser, signed_app, OPERATOR.sub)
    op.get_by_text("操作 一郎").first.wait_for(timeout=WAIT)
    labels = menu(op)
    assert "手順書チャット" in labels and "インタビュー" in labels, labels
    assert "ダッシュボード" not in labels and "質問セット" not in labels, labels
    save_screenshot(op, "signed-in-operator")
    # the dashboard by its URL: refused with a Japanese message, not the page
    op.goto(signed_app + "/dashboard", wait_until="domcontentloaded", timeout=LOAD)
    op.get_by_text("この画面を開く権限がありません").wait_for(timeout=WAIT)
    assert op.get_by_text("📊 ダッシュボード").count() == 0
    save_screenshot(op, "operator-refused-dashboard")
    # a question asked as the operator is in the audit log under their name, role and address
    op.goto(signed_app + "/runbook_chat", wait_until="domcontentloaded", timeout=LOAD)
    box = op.get_by_placeholder("手順書について質問してください", exact=False)
    box.fill(QUESTION, timeout=WAIT)
    box.press("Enter")
    op.get_by_text("引用元", exact=False).first.wait_for(timeout=WAIT)
    assert op.get_by_label("手順書フォルダ").count() == 0  # the administrator's setting
    records, _ = read_records(log_path(sample_state / "logs", date.today()))
    (mine,) = [r for r in records if r.get("user") == OPERATOR.sub and r["query"] == QUESTION]
    assert (mine["user_name"], mine["role"], mine["client"]) == (
        "操作 一郎",
        "operator",
        "127.0.0.1",
    )

    # the reviewer, at the same time in another browser context: the dashboard opens
    rev_context, rev = sign_in(browser, signed_app, REVIEWER.sub)
    rev.get_by_text("査閲 花子").first.wait_for(timeout=WAIT)
    labels = menu(rev)
    assert "ダッシュボード" in labels and "質問セット" in labels, labels
    rev.goto(signed_app + "/dashboard", wait_until="domcontentloaded", timeout=LOAD)
    rev.get_by_text("📊 ダッシュボード").wait_for(timeout=WAIT)
    assert rev.get_by_text("この画面を開く権限がありません").count() == 0
    rev_context.close()

    # sign-out: the provider's end-session page, then the sign-in screen again
    op.goto(signed_app, wait_until="domcontentloaded", timeout=LOAD)
    op.get_by_role("button", name="サインアウト").click(timeout=WAIT)
    op.get_by_role("button", name="End session").click(timeout=WAIT)
    op.get_by_role("button", name="サインイン").wait_for(timeout=LOAD)
    assert op.get_by_text("サインイン中").count() == 0
    op.goto(signed_app + "/runbook_chat", wait_until="domcontentloaded", timeout=LOAD)
    op.get_by_role("button", name="サインイン").wait_for(timeout=LOAD)
    assert op.get_by_text("📘 手順書チャット").count() == 0
    op_context.close()
