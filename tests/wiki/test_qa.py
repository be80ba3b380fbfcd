"""Search and answers: k/rerank/n log lines, references, invented refs, LLM path, no-hit."""

from __future__ import annotations

import json
import logging
import re

import pytest

from core.errors import IndexStateError, InputError
from core.wiki_qa import (
    NO_HIT_MESSAGE,
    SYSTEM_PROMPT,
    answer_wiki,
    article_url,
    search_wiki,
)
from tests.conftest import make_settings
from tests.support.openai_server import OpenAIStub

REF_LINE = re.compile(r"^参照: \[\d+\] jawiki:[^#]+#chunk=\d+(, \[\d+\] jawiki:[^#]+#chunk=\d+)*$")
QUESTION = "ガラスの風鈴が広まった時代はいつか"
TITLE = "風鈴"  # the fixture article that answers QUESTION (one chunk)
# Two chunks of the fixture article 灯台 pass the evidence floor: markers [0] and [1] are valid.
SEVERAL = "灯台守は灯台で何をしていたか"


def test_search_logs_k_rerank_n_and_the_fallback(wiki_settings, caplog):
    with caplog.at_level(logging.INFO, logger="core.wiki_qa"):
        found = search_wiki(wiki_settings, QUESTION)
    lines = [r.getMessage() for r in caplog.records]
    assert "Search k=16 -> rerank=False -> topn=5" in lines
    assert any(line.startswith("Rerank fallback:") and "order" in line for line in lines)
    assert len(found.hits) == 5 and found.rerank_fallback
    assert found.hits[0].chunk.title == TITLE
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="core.wiki_qa"):
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


def test_extractive_answer_has_markers_and_the_reference_line(wiki_settings):
    answer = answer_wiki(wiki_settings, QUESTION)
    assert answer.mode == "extractive" and answer.found
    body, _, line = answer.text.rpartition("\n\n")
    assert body == answer.body.strip() and REF_LINE.match(line), answer.text
    assert "[0]" in body and answer.references[0].label == 0
    assert f"[0] jawiki:{TITLE}#chunk={answer.references[0].chunk_number}" in line
    ref = answer.references[0]
    assert ref.url == "https://ja.wikipedia.org/wiki/%E9%A2%A8%E9%88%B4"
    assert ref.ref == f"jawiki:{TITLE}#chunk={ref.chunk_number}"


def test_no_usable_hit_gives_the_message(wiki_settings):
    answer = answer_wiki(wiki_settings, "量子コンピュータによる暗号解読の最新動向")
    assert answer.mode == "no_hit" and not answer.found
    assert answer.text == NO_HIT_MESSAGE
    assert (
        NO_HIT_MESSAGE
        == "該当コンテキストが見つかりませんでした。質問を言い換えるか、より一般的な表現を試してください。"
    )
    assert answer.references == []


def test_llm_answer_uses_the_design_prompts_and_code_appends_references(wiki_settings, caplog):
    with OpenAIStub() as stub:
        stub.queue(content="火の番です [0]。燃料も運んだ [1][7]。\n\n参照: [0] jawiki:嘘#chunk=99")
        settings = wiki_settings.model_copy(
            update={"openai_base_url": stub.base_url, "openai_api_key": "test"}
        )
        with caplog.at_level(logging.INFO, logger="core.wiki_qa"):
            answer = answer_wiki(settings, SEVERAL)
        request = stub.chat_requests()[0]
    system, user = request["messages"][0], request["messages"][1]
    assert system["role"] == "system" and system["content"] == SYSTEM_PROMPT
    assert user["content"].startswith(f"質問: {SEVERAL}")
    assert "[0] 灯台\n" in user["content"]
    for phrase in ("範囲内のみ", "「不明」", "[0]、[1]", "書かないでください"):
        assert phrase in user["content"]
    assert answer.mode == "llm" and answer.llm is not None and answer.llm.prompt_tokens == 120
    # the invented marker [7] and the model's own reference list are removed and logged
    assert answer.removed_refs == ["7"]
    assert "[7]" not in answer.text and "jawiki:嘘" not in answer.text
    assert answer.body == "火の番です [0]。燃料も運んだ [1]。"
    line = answer.text.rpartition("\n\n")[2]
    assert REF_LINE.match(line)
    assert line.startswith("参照: [0] jawiki:灯台#chunk=") and ", [1] jawiki:" in line
    messages = [r.getMessage() for r in caplog.records]
    assert "Removed invented references: [7]" in messages
    assert "Removed a reference list written by the model" in messages


def test_llm_without_markers_lists_every_context(wiki_settings):
    with OpenAIStub(default_content="不明です。") as stub:
        settings = wiki_settings.model_copy(update={"openai_base_url": stub.base_url})
        answer = answer_wiki(settings, QUESTION, topn=3)
    assert answer.body == "不明です。"
    assert [r.label for r in answer.references] == [r.label for r in answer.contexts]


def test_llm_failure_falls_back_to_the_extractive_answer(wiki_settings):
    with OpenAIStub() as stub:
        for _ in range(4):
            stub.queue(status=500)
        settings = wiki_settings.model_copy(
            update={"openai_base_url": stub.base_url, "llm_max_retries": 1}
        )
        answer = answer_wiki(settings, QUESTION)
    assert answer.mode == "extractive" and answer.llm_error and "LLM" in answer.llm_error
    assert REF_LINE.match(answer.text.rpartition("\n\n")[2])


def test_every_question_is_audited(wiki_settings):
    answer_wiki(wiki_settings, QUESTION, session_id="t-1")
    files = sorted(wiki_settings.logs_dir.glob("query_*.jsonl"))
    record = json.loads(files[-1].read_text("utf-8").splitlines()[-1])
    assert record["page"] == "wiki_qa" and record["session_id"] == "t-1"
    assert record["answer_mode"] == "extractive" and record["search_config"]["topk"] == 16
    assert record["search_results"][0]["source"].startswith(f"jawiki:{TITLE}#chunk=")


def test_article_urls_are_quoted():
    assert article_url("Google 検索") == ("https://ja.wikipedia.org/wiki/Google_%E6%A4%9C%E7%B4%A2")
    assert article_url("AC/DC") == "https://ja.wikipedia.org/wiki/AC%2FDC"
