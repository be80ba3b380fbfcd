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
    # the citations' expanders (the sentence checks' start with ✅ / ⚠️)
    labels = [e.label for e in page.expander if e.label.startswith("[")]
    assert labels and all("引用元: " in label and "スコア: " in label for label in labels)
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


def test_llm_answer_streams_and_unsafe_markup_is_made_inert(monkeypatch, sample_state):
    from tests.support.openai_server import OpenAIStub

    reply = "1. EDR で端末を隔離する [1]\n2. [詳細](javascript:alert(1)) を確認 <script>x</script>"
    with OpenAIStub(default_content=reply) as stub:
        stub.default.tokens_per_sec = 200
        monkeypatch.setenv("WB_STATE_DIR", str(sample_state))
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        at = AppTest.from_file(PAGE, default_timeout=120).run()
        at.chat_input[0].set_value("ランサムウェアに感染した端末の隔離手順").run()
        requests = stub.chat_requests()
    assert not at.exception
    assert requests and requests[-1]["stream"] is True  # the page asked for a stream
    shown = markdown_text(at)
    assert "EDR で端末を隔離する [1]" in shown
    assert "javascript" not in shown.lower() and "<script" not in shown
    assert "&lt;script" in shown  # shown as text
    assert any("LLM 回答" in c.value for c in at.caption)
    assert any("安全でないリンク" in w.value for w in at.warning)


def test_a_hung_model_gives_the_extractive_answer_within_the_budget(monkeypatch, sample_state):
    from tests.support.openai_server import OpenAIStub

    with OpenAIStub() as stub:
        stub.default.hang = True
        monkeypatch.setenv("WB_STATE_DIR", str(sample_state))
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("WB_LLM_ANSWER_BUDGET_SEC", "1.5")
        at = AppTest.from_file(PAGE, default_timeout=120).run()
        at.chat_input[0].set_value("ランサムウェアに感染した端末の隔離手順").run()
    assert not at.exception
    assert any("制限時間" in w.value and "抽出型回答" in w.value for w in at.warning)
    assert any("抽出型回答" in c.value for c in at.caption)
    assert "[1]" in markdown_text(at)


def test_a_nul_in_the_folder_field_is_a_japanese_message(page):
    page.sidebar.text_input(key="chat_folder").set_value("/tmp/runbooks\x00/x").run()
    assert not page.exception
    assert any("NUL 文字" in e.value for e in page.sidebar.error)


def test_a_reviewer_opens_a_sentence_and_sees_its_span_highlighted(page):
    page.chat_input[0].set_value("ランサムウェアに感染した端末の隔離手順").run()
    assert not page.exception
    assert any(m.value.startswith("**🔎 根拠を確認**") for m in page.markdown)
    sentences = [e for e in page.expander if e.label.startswith(("✅", "⚠️"))]
    assert sentences and all("スコア" in e.label for e in sentences)
    first = sentences[0]
    spans = [m.value for m in first.markdown if "wb-span" in m.value]
    assert spans and spans[0].count("<mark>") == 1
    marked = spans[0].split("<mark>", 1)[1].split("</mark>", 1)[0]
    label_text = first.label.split(": ", 1)[1].split(" ／ ", 1)[0].replace("\\", "")
    # the highlighted span holds the sentence the reviewer opened
    assert label_text.rstrip("…")[:10] in marked
    assert any("chunk_id:" in c.value and "範囲:" in c.value for c in first.caption)


def test_the_index_status_follows_the_first_question_that_builds_it(monkeypatch, tmp_path):
    """The first question builds the index; the sidebar then says so instead of 未構築."""
    import json

    folder = tmp_path / "runbooks"
    folder.mkdir()
    (folder / "vpn.md").write_text(
        "# VPN 障害対応\n\n## 初動\n\n1. VPN ゲートウェイの死活監視を確認する。\n"
        "2. 認証サーバーのログで失敗の急増を確認する。\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("WB_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("WB_RUNBOOKS_DIR", str(folder))
    monkeypatch.setenv("WB_ALLOWED_ROOTS", json.dumps([str(tmp_path)]))
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    assert any("未構築" in i.value for i in at.sidebar.info)
    at.chat_input[0].set_value("VPN がつながらないときの初動は？").run()
    assert not at.exception
    assert not any("未構築" in i.value for i in at.sidebar.info)
    assert any("文書 1 件" in i.value for i in at.sidebar.info)
    assert "[1]" in markdown_text(at)  # the answer is still on the page after the redraw
    # what the build did stays with the answer that waited for it (the bar is gone)
    assert any("インデックスを構築しました: 追加 1件" in c.value for c in at.caption)
    at.chat_input[0].set_value("認証サーバーのログは？").run()
    built = [c.value for c in at.caption if "インデックスを構築しました" in c.value]
    assert len(built) == 1
