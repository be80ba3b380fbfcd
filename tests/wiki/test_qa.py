"""Search and answers: k/rerank/n log lines, references, invented refs, LLM path, no-hit."""

from __future__ import annotations

import json
import logging
import re

import pytest

from core.errors import IndexStateError, InputError
from core.wiki.index import article_url
from core.wiki.qa import NO_HIT_MESSAGE, SYSTEM_PROMPT, WikiConfig, answer_body, ask
from core.wiki.search import search_wiki
from tests.conftest import make_settings
from tests.support.openai_server import OpenAIStub

REF_LINE = re.compile(r"^参照: \[\d+\] jawiki:[^#]+#chunk=\d+(, \[\d+\] jawiki:[^#]+#chunk=\d+)*$")
QUESTION = "ガラスの風鈴が広まった時代はいつか"
TITLE = "風鈴"  # the fixture article that answers QUESTION (one chunk)
# Several chunks of the fixture article 灯台 pass the evidence floor: markers [0] and [1] are
# valid.
SEVERAL = "灯台のレンズと光について"


def test_search_logs_k_rerank_n_and_the_fallback(wiki_settings, caplog):
    with caplog.at_level(logging.INFO, logger="core.wiki"):
        found = search_wiki(wiki_settings, QUESTION)
    lines = [r.getMessage() for r in caplog.records]
    assert "Search k=16 -> rerank=False -> topn=5" in lines
    assert any(line.startswith("Rerank fallback:") and "order" in line for line in lines)
    assert len(found.hits) == 5 and found.rerank_fallback
    assert found.hits[0].chunk.title == TITLE
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="core.wiki"):
        dense = search_wiki(wiki_settings, QUESTION, topn=3, rerank=False, mode="dense")
    assert "Search k=16 -> rerank=False -> topn=3" in [r.getMessage() for r in caplog.records]
    assert not any("fallback" in r.getMessage() for r in caplog.records)
    assert len(dense.hits) == 3 and all(h.raw["bm25"] == 0 for h in dense.hits)


def test_bad_search_input(wiki_settings, tmp_path):
    with pytest.raises(InputError, match="質問を入力"):
        search_wiki(wiki_settings, "   ")
    with pytest.raises(InputError, match="topn"):
        search_wiki(wiki_settings, QUESTION, topk=4, topn=5)
    with pytest.raises(IndexStateError, match="未構築"):
        search_wiki(make_settings(tmp_path / "empty"), QUESTION)


def wiki_ask(settings, question, **config):
    return ask(question, [], WikiConfig(**config), settings)


def test_extractive_answer_has_markers_and_the_reference_line(wiki_settings):
    answer = wiki_ask(wiki_settings, QUESTION)
    assert answer.answer_mode == "extractive" and answer.found and answer.page == "wiki_qa"
    body, _, line = answer.answer.rpartition("\n\n")
    assert body == answer_body(answer).strip() and REF_LINE.match(line), answer.answer
    cited = [c for c in answer.citations if c.cited]
    assert "[0]" in body and cited[0].n == 0
    ref = cited[0]
    assert f"[0] jawiki:{TITLE}#chunk=" in line and ref.ref in line
    assert ref.url == "https://ja.wikipedia.org/wiki/%E9%A2%A8%E9%88%B4"
    assert ref.ref.startswith(f"jawiki:{TITLE}#chunk=") and ref.file == f"jawiki:{TITLE}"
    assert not answer.flags.insufficient_evidence and answer.error is None


def test_no_usable_hit_gives_the_message(wiki_settings):
    answer = wiki_ask(wiki_settings, "量子コンピュータによる暗号解読の最新動向")
    assert answer.answer_mode == "template" and not answer.found
    assert answer.flags.insufficient_evidence and answer.error is None
    assert answer.answer == NO_HIT_MESSAGE
    assert (
        NO_HIT_MESSAGE
        == "該当コンテキストが見つかりませんでした。質問を言い換えるか、より一般的な表現を試してください。"
    )
    assert not any(c.cited for c in answer.citations)


def test_bad_input_is_an_answer_with_the_error(wiki_settings, tmp_path):
    answer = wiki_ask(wiki_settings, "   ")
    assert answer.error and "質問を入力" in answer.error and answer.answer == answer.error
    missing = wiki_ask(make_settings(tmp_path / "empty"), QUESTION)
    assert missing.error and "未構築" in missing.error and not missing.found


def test_llm_answer_uses_the_design_prompts_and_code_appends_references(wiki_settings, caplog):
    with OpenAIStub() as stub:
        stub.queue(
            content="光を点滅させます [0]。レンズが回る [1][7]。\n\n参照: [0] jawiki:嘘#chunk=99"
        )
        settings = wiki_settings.model_copy(
            update={"openai_base_url": stub.base_url, "openai_api_key": "test"}
        )
        with caplog.at_level(logging.INFO, logger="core.wiki"):
            answer = wiki_ask(settings, SEVERAL)
        request = stub.chat_requests()[0]
    system, user = request["messages"][0], request["messages"][1]
    assert system["role"] == "system" and system["content"] == SYSTEM_PROMPT
    assert user["content"].startswith(f"質問: {SEVERAL}")
    assert '<<<CONTEXT 0 source="灯台">>>\n' in user["content"]
    for phrase in ("範囲内のみ", "「不明」", "[0]、[1]", "書かないでください"):
        assert phrase in user["content"]
    assert (
        answer.answer_mode == "llm" and answer.model and answer.token_usage["prompt_tokens"] == 120
    )
    # the invented marker [7] and the model's own reference list are removed and told; the
    # sentence that cited [7] is marked unsupported (not left looking cited)
    assert answer.removed_refs == ["7"]
    assert any("[7]" in w for w in answer.warnings)
    assert "[7]" not in answer.answer and "jawiki:嘘" not in answer.answer
    assert answer_body(answer) == "光を点滅させます [0]。レンズが回る [1]。 ［根拠なし］"
    assert [(s.supported, s.reason) for s in answer.sentences] == [
        (True, "supported"),
        (False, "invented_marker"),
    ]
    line = answer.answer.rpartition("\n\n")[2]
    assert REF_LINE.match(line)
    assert line.startswith("参照: [0] jawiki:灯台#chunk=") and ", [1] jawiki:" in line
    messages = [r.getMessage() for r in caplog.records]
    assert "Removed a reference list written by the model" in messages


def test_llm_without_markers_lists_every_context(wiki_settings):
    with OpenAIStub(default_content="不明です。") as stub:
        settings = wiki_settings.model_copy(update={"openai_base_url": stub.base_url})
        answer = wiki_ask(settings, QUESTION, topn=3)
    assert answer_body(answer) == "不明です。"
    assert answer.citations and all(c.cited for c in answer.citations)


def test_llm_failure_falls_back_to_the_extractive_answer(wiki_settings):
    with OpenAIStub() as stub:
        for _ in range(4):
            stub.queue(status=500)
        settings = wiki_settings.model_copy(
            update={"openai_base_url": stub.base_url, "llm_max_retries": 1}
        )
        answer = wiki_ask(settings, QUESTION)
    assert answer.answer_mode == "extractive"
    assert any("LLM" in w and "抽出型" in w for w in answer.warnings)
    assert REF_LINE.match(answer.answer.rpartition("\n\n")[2])


def test_every_question_is_audited(wiki_settings):
    wiki_ask(wiki_settings, QUESTION, session_id="t-1")
    files = sorted(wiki_settings.logs_dir.glob("query_*.jsonl"))
    record = json.loads(files[-1].read_text("utf-8").splitlines()[-1])
    assert record["page"] == "wiki_qa" and record["session_id"] == "t-1"
    assert record["schema_version"] == 2
    assert record["answer_mode"] == "extractive" and record["search_config"]["topk"] == 16
    assert record["search_results"][0]["ref"].startswith(f"jawiki:{TITLE}#chunk=")


def test_article_urls_are_quoted():
    assert article_url("Google 検索") == ("https://ja.wikipedia.org/wiki/Google_%E6%A4%9C%E7%B4%A2")
    assert article_url("AC/DC") == "https://ja.wikipedia.org/wiki/AC%2FDC"
