"""Sign-in, roles and page guards through Streamlit's AppTest (the browser test signs in for real).

``AppTest.user`` stands for what Streamlit's OpenID Connect cookie gives ``st.user``; the secrets
file names a real provider on 127.0.0.1 (oidc-provider-mock) or a closed port (provider down).
"""

from __future__ import annotations

import contextlib
import os
import tomllib
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.settings import PROJECT_ROOT, get_settings
from tests.support.oidc import ROLE_MAP, closed_port, oidc_provider, secrets_toml

APP = str(PROJECT_ROOT / "app.py")
VIEWS = PROJECT_ROOT / "views"

OPERATOR = {"is_logged_in": True, "sub": "u-op", "name": "操作 一郎", "groups": ["soc-operators"]}
REVIEWER = {**OPERATOR, "sub": "u-rev", "name": "査閲 花子", "groups": ["soc-reviewers"]}
ADMIN = {**OPERATOR, "sub": "u-adm", "name": "管理 次郎", "groups": ["soc-admins", "x"]}


@pytest.fixture(scope="module")
def issuer():
    with oidc_provider() as url:
        yield url


@pytest.fixture
def signin(monkeypatch, tmp_path, issuer):
    """Sign-in configured (the real provider), roles mapped; returns the secrets file."""
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(secrets_toml(issuer, "http://127.0.0.1:8501/oauth2callback"), "utf-8")
    monkeypatch.setenv("WB_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("WB_SECRETS_PATH", str(secrets))
    monkeypatch.setenv("WB_ROLE_MAP", ROLE_MAP)
    get_settings.cache_clear()
    yield secrets
    get_settings.cache_clear()


def run(
    path: str, user: dict | None = None, page: str | None = None, streamlit_sees: bool = True
) -> AppTest:
    at = AppTest.from_file(path, default_timeout=60)
    secrets = Path(os.environ.get("WB_SECRETS_PATH", "/nonexistent"))
    if streamlit_sees and secrets.exists():  # what `--secrets.files` gives Streamlit
        with contextlib.suppress(tomllib.TOMLDecodeError, KeyError):  # a broken file: none
            at.secrets["auth"] = tomllib.loads(secrets.read_text("utf-8"))["auth"]
    if user is not None:
        at.user = user
    if page is not None:
        at.switch_page(page)
    return at.run()


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def test_signed_out_sees_only_the_sign_in_screen(signin):
    at = run(APP, {"is_logged_in": False})
    assert not at.exception
    assert "サインイン" in texts(at.subheader)
    (button,) = at.button
    assert button.label == "サインイン" and not button.disabled
    assert "インデックスの状態" not in texts(at.subheader)  # no page ran
    # a page's URL while signed out: the same screen, not the page
    at = run(APP, {"is_logged_in": False}, page="views/dashboard.py")
    assert "サインイン" in texts(at.subheader) and "ダッシュボード" not in texts(at.title)


def test_streamlit_not_given_the_secrets_file_is_explained(signin):
    at = run(APP, {"is_logged_in": False}, streamlit_sees=False)
    assert not at.exception
    assert "Streamlit が読み込んでいません" in texts(at.error) and "--secrets.files" in texts(
        at.error
    )
    assert at.button[0].disabled


def test_named_provider_gets_its_own_button(signin, issuer):
    signin.write_text(secrets_toml(issuer, "http://127.0.0.1:8501/oauth2callback", "okta"), "utf-8")
    at = run(APP, {"is_logged_in": False})
    assert [b.label for b in at.button] == ["okta でサインイン"]


def test_identity_provider_down_gets_a_japanese_message(signin):
    down = f"http://127.0.0.1:{closed_port()}"
    signin.write_text(secrets_toml(down, "http://127.0.0.1:8501/oauth2callback"), "utf-8")
    at = run(APP, {"is_logged_in": False})
    assert not at.exception
    assert "ID プロバイダー（127.0.0.1:" in texts(at.error) and "接続できません" in texts(at.error)
    assert at.button[0].disabled


def test_malformed_secrets_show_a_message_and_no_page(signin):
    signin.write_text("[auth\nredirect_uri = ", "utf-8")
    at = run(APP, {"is_logged_in": True, "sub": "u-op", "groups": ["soc-admins"]})
    assert not at.exception
    assert "サインインの設定を読み込めない" in texts(at.error)
    assert "TOML の形式が不正" in texts(at.error)
    assert "インデックスの状態" not in texts(at.subheader)


def test_operator_sees_their_name_sign_out_and_only_their_pages(signin):
    at = run(APP, OPERATOR)
    assert not at.exception
    assert "サインイン中: **操作 一郎**（オペレーター）" in texts(at.sidebar.caption)
    assert [b.label for b in at.sidebar.button] == ["サインアウト"]
    links = [link.label for link in at.get("page_link")]
    assert any("手順書チャット" in label for label in links)
    assert not any("ダッシュボード" in label or "質問セット" in label for label in links)
    assert "状態フォルダ" not in texts(at.caption)  # the administrator's information


@pytest.mark.parametrize("page", ["views/dashboard.py", "views/question_sets.py"])
def test_a_page_outside_the_role_is_refused_by_url(signin, page):
    at = run(APP, OPERATOR, page=page)
    assert not at.exception
    assert "この画面を開く権限がありません" in texts(at.error)
    assert "レビュアー以上" in texts(at.error) and "オペレーター" in texts(at.error)
    assert not at.title or all(t.value == "🛡️ SOC ワークベンチ" for t in at.title)
    # the page script itself refuses too (whatever started it)
    direct = run(str(PROJECT_ROOT / page), OPERATOR)
    assert "この画面を開く権限がありません" in texts(direct.error) and not direct.title


def test_reviewer_opens_the_dashboard(signin):
    at = run(APP, REVIEWER, page="views/dashboard.py")
    assert not at.exception and "📊 ダッシュボード" in texts(at.title)
    assert "この画面を開く権限がありません" not in texts(at.error)


def test_no_groups_claim_or_no_mapped_group_is_refused(signin):
    for user in (
        {"is_logged_in": True, "sub": "u-x", "email": "x@example.jp"},
        {"is_logged_in": True, "sub": "u-y", "groups": ["marketing"]},
    ):
        at = run(APP, user)
        assert not at.exception
        assert "権限がありません" in texts(at.error) and "管理者に連絡" in texts(at.error)
        assert [b.label for b in at.button] == ["サインアウト"]
        assert "インデックスの状態" not in texts(at.subheader)


def test_admin_actions_are_hidden_from_lower_roles(signin):
    chat = str(VIEWS / "runbook_chat.py")
    operator = run(chat, OPERATOR)
    assert not operator.exception
    assert not operator.sidebar.text_input  # the data folder
    assert "インデックス再構築" not in [b.label for b in operator.sidebar.button]
    admin = run(chat, ADMIN)
    assert [t.label for t in admin.sidebar.text_input] == ["手順書フォルダ"]
    assert "インデックス再構築" in [b.label for b in admin.sidebar.button]

    wiki = str(VIEWS / "wiki_qa.py")
    assert "インデックスの構築" not in texts(run(wiki, REVIEWER).subheader)
    assert "インデックスの構築" in texts(run(wiki, ADMIN).subheader)


def test_without_sign_in_the_local_user_is_admin(monkeypatch, tmp_path):
    monkeypatch.setenv("WB_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("WB_SECRETS_PATH", str(tmp_path / "missing.toml"))
    at = run(APP)
    assert not at.exception and not at.sidebar.button  # no sign-out: nobody signed in
    assert "状態フォルダ" in texts(at.caption)
    links = [link.label for link in at.get("page_link")]
    assert any("ダッシュボード" in label for label in links)


def test_an_operator_cannot_open_someone_elses_interview_by_url(signin):
    from core.interview.orchestrator import Interviewer
    from core.settings import Settings

    iv = Interviewer(Settings(_env_file=None), durable_wal=False)
    try:
        theirs = iv.start("postmortem", "決済障害の振り返り", user_id="u-rev").session.session_id
        mine = iv.start("postmortem", "VPN 障害の振り返り", user_id="u-op").session.session_id
    finally:
        iv.close()
    page = str(VIEWS / "interview.py")
    at = AppTest.from_file(page, default_timeout=60)
    at.user = OPERATOR
    at.query_params["session"] = theirs
    at.run()
    assert not at.exception
    assert "このインタビューを開く権限がありません" in texts(at.error)
    assert "決済障害" not in texts(at.markdown) + texts(at.text)
    # their own opens, and the list offers only their own sessions
    at = AppTest.from_file(page, default_timeout=60)
    at.user = OPERATOR
    at.query_params["session"] = mine
    at.run()
    assert not at.exception and "権限がありません" not in texts(at.error)
    (picker,) = [s for s in at.sidebar.selectbox if s.label == "保存されたセッション"]
    assert len(picker.options) == 1 and "VPN" in picker.options[0]
