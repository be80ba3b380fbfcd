"""The runbook chat page through Streamlit's AppTest, over the indexed sample runbooks."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from core.settings import PROJECT_ROOT

PAGE = str(PROJECT_ROOT / "views" / "runbook_chat.py")


@pytest.fixture
def page(monkeypatch, sample_state) -> AppTest:
    monkeypatch.setenv("WB_STATE_DIR", str(sample_state))
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert not at.exception
    return at


def markdown_text(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_page_layout(page):
    assert any("機密情報の入力は禁止されています" in w.value for w in page.warning)
    assert page.sidebar.number_input[0].value == 4
    assert page.sidebar.slider[0].value == 0.6
    assert any("ベクトルの重み: 0.40" in c.value for c in page.sidebar.caption)
    assert any("チャンク" in i.value for i in page.sidebar.info)


def test_ask_shows_answer_and_collapsed_citations(page):
    page.chat_input[0].set_value("ランサムウェアに感染した端末の隔離手順").run()
    assert not page.exception
    assert "[1]" in markdown_text(page)
    labels = [e.label for e in page.expander]
    assert labels and all(
        label.startswith("[") and "引用元: " in label and "スコア: " in label for label in labels
    )
    assert any("ransomware-isolation.md" in label for label in labels)
    assert any("抽出型回答" in c.value for c in page.caption)


def test_dangerous_question_shows_the_red_banner(page):
    page.chat_input[0].set_value("イベントログを削除してもよいですか").run()
    assert any(e.value == "承認・確認が必要" and e.icon == "⚠️" for e in page.error)
    # which phrase fired, and that it came from the question
    assert any(
        c.value.startswith("検知した操作: ")
        and "ログを削除してもよいですか" in c.value
        and "（質問・" in c.value
        for c in page.caption
    )


def test_unrelated_question_is_refused(page):
    page.chat_input[0].set_value("東京から大阪までの新幹線の料金").run()
    assert "該当する手順が見つかりませんでした。" in markdown_text(page)


def test_folder_outside_the_allowed_roots_is_refused(page):
    page.sidebar.text_input[0].set_value("/etc").run()
    assert any("許可された場所の外" in e.value for e in page.sidebar.error)


def test_rebuild_is_incremental(page):
    page.sidebar.button[0].click().run()
    assert not page.exception
    assert any(
        "変更なし" in s.value and "埋め込み 0 チャンク" in s.value for s in page.sidebar.success
    )


def test_full_text_toggle_shows_the_whole_section(page):
    page.chat_input[0].set_value("ランサムウェアに感染した端末の隔離手順").run()
    toggles = [t for t in page.toggle if t.label == "全文を表示"]
    assert toggles
    toggles[0].set_value(True).run()
    assert not page.exception
    captions = [c.value for c in page.caption if "セクション「" in c.value]
    assert captions and "の全文（チャンク" in captions[0]
    inside = [m.value for m in page.expander[0].markdown if "wb-excerpt" in m.value]
    assert len(inside) == 2  # the excerpt, then the section

    def plain(html: str) -> str:
        return re.sub(r"<[^>]+>|\s|…", "", html)

    assert len(plain(inside[1])) >= len(plain(inside[0]))


def test_missing_folder_is_reported_in_the_sidebar_at_once(page):
    missing = PROJECT_ROOT / "data" / "no-such-runbooks"
    page.sidebar.text_input[0].set_value(str(missing)).run()
    assert not page.exception
    assert any("見つかりません" in e.value and str(missing) in e.value for e in page.sidebar.error)
    assert page.sidebar.button[0].disabled  # nothing to rebuild


def test_a_nul_in_the_folder_field_is_a_japanese_message(page):
    page.sidebar.text_input(key="chat_folder").set_value("/tmp/runbooks\x00/x").run()
    assert not page.exception
    assert any("NUL 文字" in e.value for e in page.sidebar.error)
