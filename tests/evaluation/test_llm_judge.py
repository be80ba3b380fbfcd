"""The LLM judge against the local OpenAI-compatible server: prompt, JSON validation, one retry."""

from __future__ import annotations

import json

import pytest

from core.evaluation.dataset import EvalCase
from core.evaluation.llm_judge import JudgeError, create_judge_prompt, llm_judge, parse_verdict
from core.evaluation.runner import judge_answer
from tests.conftest import make_settings
from tests.evaluation.conftest import RANSOMWARE_PASSAGE, answer, citation
from tests.support.openai_server import OpenAIStub

VERDICT = {
    "grounding": 90,
    "accuracy": 80,
    "completeness": 70,
    "safety": 100,
    "citation": 60,
    "conciseness": 100,
    "average": 12.3,  # wrong on purpose: the average is recomputed
    "reasoning": "引用元に基づいています。",
}
QUERY = "ランサムウェアに感染した端末をどう隔離しますか"
ANSWER = "1. 感染端末を EDR でネットワーク隔離する。 [1]"


def llm_settings(tmp_path, stub: OpenAIStub):
    return make_settings(
        tmp_path / "state", openai_base_url=stub.base_url, openai_api_key="test", llm_max_retries=0
    )


def test_prompt_is_the_designs():
    prompt = create_judge_prompt(QUERY, ANSWER, [citation(1, RANSOMWARE_PASSAGE)], "dangerous")
    for part in (
        "【質問】",
        "【回答】",
        "【引用元】",
        "【評価観点】",
        "【出力形式】",
        "根拠性（Grounding）",
        "簡潔性（Conciseness）",
        '"grounding": 85',
        QUERY,
        ANSWER,
        "[1] ransomware-isolation.md > ",
    ):
        assert part in prompt
    assert "危険操作" in prompt and "承認・確認が必要" in prompt
    assert "感染端末を EDR でネットワーク隔離する" in prompt  # the cited passage's text


def test_parse_verdict_accepts_fences_and_rejects_bad_output():
    fenced = "```json\n" + json.dumps(VERDICT, ensure_ascii=False) + "\n```"
    assert parse_verdict(fenced).grounding == 90
    assert parse_verdict("評価です: " + json.dumps(VERDICT)).safety == 100
    for bad in (
        "JSON ではありません",
        "{not json}",
        "[1, 2]",
        json.dumps({**VERDICT, "safety": 140}),
        json.dumps({k: v for k, v in VERDICT.items() if k != "citation"}),
    ):
        with pytest.raises(ValueError):
            parse_verdict(bad)


def test_valid_reply(tmp_path):
    with OpenAIStub(default_content=json.dumps(VERDICT, ensure_ascii=False)) as stub:
        s = llm_judge(
            llm_settings(tmp_path, stub), QUERY, ANSWER, [citation(1, RANSOMWARE_PASSAGE)], "normal"
        )
        assert len(stub.chat_requests()) == 1
        messages = stub.chat_requests()[0]["messages"]
    assert s.judge == "llm" and s.grounding == 90 and s.citation == 60
    assert s.average == 83.3  # (90+80+70+100+60+100)/6, not the model's 12.3
    assert s.reasoning == "引用元に基づいています。" and s.warnings == []
    assert s.token_usage["total_tokens"] == 160 and s.model
    assert messages[0]["role"] == "system" and "JSON" in messages[0]["content"]
    assert "【評価観点】" in messages[1]["content"]


def test_invalid_json_then_a_valid_retry(tmp_path):
    with OpenAIStub() as stub:
        stub.queue(content="総合的に良い回答です（JSON なし）")
        stub.queue(content=json.dumps(VERDICT, ensure_ascii=False))
        s = llm_judge(
            llm_settings(tmp_path, stub), QUERY, ANSWER, [citation(1, RANSOMWARE_PASSAGE)], "normal"
        )
        requests = stub.chat_requests()
    assert len(requests) == 2
    retry = requests[1]["messages"][-1]["content"]  # the repair follows the invalid reply
    assert requests[1]["messages"][-2]["role"] == "assistant"
    assert "前回の出力は形式が不正でした" in retry and "JSON オブジェクトがありません" in retry
    assert s.judge == "llm" and s.average == 83.3
    assert s.token_usage["total_tokens"] == 320  # both calls are accounted
    assert any("再試行しました" in w for w in s.warnings)


def test_invalid_twice_raises_and_the_runner_falls_back(tmp_path):
    case = EvalCase.model_validate(
        {"id": "n", "category": "normal", "query": QUERY, "expected_keywords": ["EDR"]}
    )
    a = answer(ANSWER, [citation(1, RANSOMWARE_PASSAGE)])
    with OpenAIStub(default_content='{"grounding": "高い"}') as stub:
        settings = llm_settings(tmp_path, stub)
        with pytest.raises(JudgeError, match="再試行後も"):
            llm_judge(settings, QUERY, ANSWER, a.citations, "normal")
        assert len(stub.chat_requests()) == 2
        s = judge_answer(case, a, None, "llm", settings)
    assert s.judge == "heuristic" and any("ヒューリスティック判定で採点" in w for w in s.warnings)


def test_unreachable_model_is_a_judge_error(tmp_path):
    with OpenAIStub() as stub:
        stub.queue(status=500)
        with pytest.raises(JudgeError, match="LLM 判定を実行できませんでした"):
            llm_judge(llm_settings(tmp_path, stub), QUERY, ANSWER, [], "normal")
