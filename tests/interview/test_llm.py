"""The LLM path against the local OpenAI-compatible stub: JSON-strict prompts validated with
Pydantic, one retry, then the fallbacks (rule extraction, the domain's default question)."""

from __future__ import annotations

import json

import pytest

from core.interview.domains import get_domain
from core.interview.llm import InterviewLLM, parse_strict
from core.interview.orchestrator import Interviewer
from tests.support.openai_server import OpenAIStub

from .conftest import APPENDIX_G


def stage(body: dict) -> str:
    system = body["messages"][0]["content"]
    return system[1 : system.index("]")]


def good(body: dict) -> str:
    s = stage(body)
    if s == "stage02_extract":
        payload = json.loads(body["messages"][1]["content"])
        targets = [t["name"] for t in payload["target_slots"]]
        answer = payload["answer"]
        values = [{"slot_name": t, "value": answer, "confidence": 0.9} for t in targets]
        return json.dumps(
            {
                "entities": [
                    {"id": "api", "label": "決済API", "type": "System", "confidence": 0.8}
                ],
                "relations": [
                    {"source": "api", "target": "api", "type": "SELF", "confidence": 0.5}
                ],
                "slot_values": values,
            },
            ensure_ascii=False,
        )
    if s == "stage04_slots":
        return json.dumps(
            [{"name": "顧客への連絡", "description": "顧客への告知の内容と時刻"}],
            ensure_ascii=False,
        )
    if s == "stage06_qgen":
        payload = json.loads(body["messages"][1]["content"])
        slot = payload["slots"][0]
        words = "、".join(slot["must_mention"])
        return json.dumps(
            [
                {
                    "slot_name": slot["slot_name"],
                    "text": f"[LLM] {slot['label']}について、{words}を具体的に教えてください。",
                }
            ],
            ensure_ascii=False,
        )
    if s == "stage07_qcheck":
        payload = json.loads(body["messages"][1]["content"])
        q = payload["questions"][0]
        return json.dumps([{**q, "specificity": 0.9, "tacit_power": 0.8}], ensure_ascii=False)
    if s == "journalist_refine":
        draft = json.loads(body["messages"][1]["content"])["draft"]
        return json.dumps({"text": "なるほど。" + draft}, ensure_ascii=False)
    raise AssertionError(s)


def llm_settings(make_settings_factory, stub):
    return make_settings_factory(
        openai_base_url=stub.base_url, openai_api_key="test", llm_max_retries=0, llm_timeout_sec=5
    )


def test_strict_json():
    assert parse_strict('{"a": 1}') == {"a": 1}
    for bad in ('```json\n{"a": 1}\n```', "はい: {}", ""):
        with pytest.raises(ValueError):
            parse_strict(bad)


def test_llm_path_end_to_end(make_settings_factory, clock):
    with OpenAIStub(responder=good) as stub:
        iv = Interviewer(llm_settings(make_settings_factory, stub), clock=clock)
        assert isinstance(iv.llm, InterviewLLM)
        result = iv.start("postmortem", "昨日の決済システムの障害について振り返りたい")
        assert "x_顧客への連絡" in result.session.slots  # Stage04 proposal
        assert result.question.startswith("なるほど。[LLM] 概要について")
        clock.tick()
        result = iv.answer(result.session.session_id, APPENDIX_G["summary"])
        assert result.session.slots["summary"].filled
        assert result.session.questions[-1].source == "llm"
        stages = [stage(b) for b in stub.chat_requests()]
        assert {
            "stage02_extract",
            "stage04_slots",
            "stage06_qgen",
            "stage07_qcheck",
            "journalist_refine",
        } <= set(stages)
        assert all("コードフェンス" in b["messages"][0]["content"] for b in stub.chat_requests())
        iv.close()


def test_invalid_output_is_retried_once_then_the_default_question(make_settings_factory, clock):
    def fenced(body):
        if stage(body) == "stage06_qgen":
            return '```json\n[{"slot_name": "summary", "text": "..."}]\n```'
        if stage(body) == "stage07_qcheck":
            return "not json"
        return good(body)

    with OpenAIStub(responder=fenced) as stub:
        iv = Interviewer(llm_settings(make_settings_factory, stub), clock=clock)
        result = iv.start("postmortem", "昨日の決済システムの障害")
        spec = get_domain("postmortem").slot("summary")
        assert spec.default_question in result.question
        qgen = [b for b in stub.chat_requests() if stage(b) == "stage06_qgen"]
        assert len(qgen) == 2  # the first call and one retry with the validation error
        assert "無効" in qgen[1]["messages"][-1]["content"]
        assert iv.llm.stats["stage06_qgen.fallback"] == 1
        iv.close()


def test_retry_recovers(make_settings_factory):
    with OpenAIStub(responder=good) as stub:
        stub.queue(content="{broken")
        llm = InterviewLLM(llm_settings(make_settings_factory, stub))
        assert llm.refine("検知の方法は？", "") == "なるほど。検知の方法は？"
        assert llm.stats["journalist_refine.invalid"] == 1


def test_server_errors_fall_back_to_rules(make_settings_factory, clock):
    with OpenAIStub(responder=good) as stub:
        iv = Interviewer(llm_settings(make_settings_factory, stub), clock=clock)
        result = iv.start("postmortem", "昨日の決済システムの障害")
        for _ in range(2):
            stub.queue(status=500)
        clock.tick()
        after = iv.answer(result.session.session_id, APPENDIX_G["summary"])
        assert after.session.slots["summary"].filled  # the rules read the answer
        assert any("ルールベース" in w for w in after.warnings)
        iv.close()


def test_a_hung_server_costs_one_turn_budget_and_every_call_is_audited(
    make_settings_factory, clock
):
    import time

    from core.audit import read_records

    with OpenAIStub(responder=good) as stub:
        settings = llm_settings(make_settings_factory, stub).model_copy(
            update={"llm_answer_budget_sec": 1.0}
        )
        iv = Interviewer(settings, clock=clock)
        stub.default.hang = True
        started = time.monotonic()
        result = iv.start("postmortem", "昨日の決済システムの障害")
        seconds = time.monotonic() - started
        spec = get_domain("postmortem").slot("summary")
        assert spec.default_question in result.question  # the rules asked
        assert seconds <= 1.0 + 1.0 + 1.0  # one budget for the turn's stages (plus the rules)
        stub.default.hang = False
        clock.tick()
        after = iv.answer(result.session.session_id, APPENDIX_G["summary"])
        assert after.session.slots["summary"].filled  # the interview goes on
        iv.close()
    records = [
        r
        for path in sorted(settings.logs_dir.glob("query_*.jsonl"))
        for r in read_records(path)[0]
        if r.get("page") == "interview"
    ]
    assert len(records) == 2 and all(r["answer_mode"] == "llm_call" for r in records)
    first, second = (r["llm_calls"] for r in records)
    assert first and all(c["outcome"] == "fallback" and c["failure"] == "timeout" for c in first)
    assert {c["stage"] for c in second} >= {"interview.stage02_extract"}
    assert any(c["outcome"] == "ok" for c in second) and records[1]["token_usage"]["total_tokens"]
