"""The interview page through Streamlit's AppTest."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.settings import PROJECT_ROOT

from .conftest import APPENDIX_G

PAGE = str(PROJECT_ROOT / "views" / "interview.py")


@pytest.fixture
def app(tmp_path, monkeypatch):
    monkeypatch.setenv("WB_STATE_DIR", str(tmp_path / "state"))
    return AppTest.from_file(PAGE, default_timeout=60)


def texts(at) -> list[str]:
    return [t.value for t in at.text]


def test_interview_page_runs_a_session_to_the_document(app):
    at = app.run()
    assert not at.exception
    assert "インタビュー" in at.title[0].value
    assert any("開始" in i.value for i in at.info)
    at.sidebar.selectbox(key="iv_domain").set_value("postmortem")
    at.sidebar.text_input(key="iv_topic").set_value("昨日の決済システムの障害について振り返りたい")
    at.sidebar.button(key="iv_start").click().run()
    assert not at.exception
    assert any(t.startswith("了解しました。まず、事象の概要") for t in texts(at))
    assert any(m.label == "選んだ行動の VoI" for m in at.metric)
    assert any("VoI" in c.value and "概要" in c.value for c in at.caption)
    assert len(at.get("progress")) == 9  # one fill bar per postmortem slot
    assert any("回答可能性 0.60" in c.value for c in at.caption)  # the adapted P, at its prior
    assert any(c.value.startswith("質問コスト 1.00・検索コスト 0.50") for c in at.caption)
    order = ["summary", "impact", "detection", "capa", "timeline", "root_cause"]
    for slot in order:
        at.chat_input(key="iv_answer").set_value(APPENDIX_G[slot]).run()
        assert not at.exception
    assert any("終了" in s.value for s in at.success)
    assert any("まだ埋まっていない項目" in w.value for w in at.warning)
    assert at.get("download_button")
    assert any("ポストモーテム: 昨日の決済システム" in m.value for m in at.markdown)


def test_sessions_list_resumes_at_the_same_question(app):
    at = app.run()
    at.sidebar.selectbox(key="iv_domain").set_value("recipe")
    at.sidebar.text_input(key="iv_topic").set_value("肉じゃが")
    at.sidebar.button(key="iv_start").click().run()
    question = next(t for t in texts(at) if t.startswith("了解しました"))
    # a fresh browser session (no session_state): pick the stored session and resume
    fresh = AppTest.from_file(PAGE, default_timeout=60).run()
    assert "肉じゃが" in fresh.sidebar.selectbox(key="iv_pick").options[0]
    fresh.sidebar.button(key="iv_resume").click().run()
    assert not fresh.exception
    assert question in texts(fresh)


def test_empty_topic_shows_a_japanese_error(app):
    at = app.run()
    at.sidebar.button(key="iv_start").click().run()
    assert not at.exception
    assert any("テーマ" in e.value for e in at.sidebar.error)


def _start(at, domain: str, topic: str):
    at.sidebar.selectbox(key="iv_domain").set_value(domain)
    at.sidebar.text_input(key="iv_topic").set_value(topic)
    return at.sidebar.button(key="iv_start").click().run()


def test_after_the_document_no_answer_box_only_the_end_actions(app):
    at = _start(app.run(), "postmortem", "昨日の決済システムの障害について振り返りたい")
    for slot in ["summary", "impact", "detection", "capa", "timeline", "root_cause"]:
        if not at.get("chat_input"):
            break
        at.chat_input(key="iv_answer").set_value(APPENDIX_G.get(slot, "わからない")).run()
        assert not at.exception
    # the run that wrote the document shows no answer box: nothing typed can be lost
    assert any(m.value.startswith("# ポストモーテム") for m in at.markdown)
    assert not at.get("chat_input")
    assert not [b for b in at.button if b.key == "iv_abort"]
    assert at.get("download_button")
    assert any("開き直せます" in c.value for c in at.caption)
    sid = at.query_params["session"]
    at.button(key="iv_new").click().run()
    assert not at.exception
    assert "session" not in at.query_params
    assert any("開始" in i.value for i in at.info)
    # the finished session can be reopened from the list
    assert sid
    assert "昨日の決済システム" in at.sidebar.selectbox(key="iv_pick").options[0]


def test_a_reload_comes_back_to_the_same_session(app, tmp_path):
    at = _start(app.run(), "recipe", "肉じゃが")
    first = at.query_params["session"]
    at.chat_input(key="iv_answer").set_value("4人分で、じゃがいも3個と牛肉200gを使います").run()
    question = texts(at)[-1]  # the pending question closes the chat
    assert question.endswith(("？", "。", "?"))
    at = _start(at, "sop", "EDR で端末を隔離する手順")
    second = at.query_params["session"]
    assert second != first
    # the list points at the session just started, newest first
    pick = at.sidebar.selectbox(key="iv_pick")
    assert "EDR" in pick.options[0] and "肉じゃが" in pick.options[1]
    assert pick.value == second
    # a reload: a new browser session whose URL carries the first session's id
    reload = AppTest.from_file(PAGE, default_timeout=60)
    reload.query_params["session"] = first
    reload.run()
    assert not reload.exception
    assert not any("開始」を押す" in i.value for i in reload.info)
    assert question in texts(reload)
    assert reload.sidebar.selectbox(key="iv_pick").value == first
    assert "肉じゃが" in reload.sidebar.selectbox(key="iv_pick").options[1]
    assert reload.query_params["session"] == first


def test_an_unknown_session_in_the_url_falls_back_to_the_start_screen(app):
    app.query_params["session"] = "0" * 32
    at = app.run()
    assert not at.exception
    assert any("見つかりません" in w.value for w in at.warning)
    assert any("開始" in i.value for i in at.info)
