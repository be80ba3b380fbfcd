"""The LLM port against the local OpenAI-compatible server misbehaving on purpose: time budget,
retries inside it, Retry-After, errors, truncated streams, empty and oversized replies, JSON repair.

Budgets are 1-2 s so that these stay fast; no timing is asserted beyond the budget's own bound
(the fallback must come within the budget plus 1 s, the issue's requirement)."""

from __future__ import annotations

import time

import pytest
from pydantic import BaseModel

from core.generation.llm import Budget, LLMCallError, LLMPort, LLMReply, OpenAIPort, llm_port
from tests.conftest import make_settings
from tests.support.openai_server import OpenAIStub


class Verdict(BaseModel):
    score: int
    reason: str


@pytest.fixture
def stub():
    with OpenAIStub() as server:
        yield server


def port_for(tmp_path, stub, **extra) -> OpenAIPort:
    settings = make_settings(
        tmp_path / "state",
        openai_base_url=stub.base_url,
        openai_api_key="test",
        **{"llm_answer_budget_sec": 1.5, "llm_first_token_sec": 1.0, **extra},
    )
    port = OpenAIPort(settings)
    port.warm()
    return port


def failure(fn) -> tuple[LLMCallError, float]:
    started = time.monotonic()
    with pytest.raises(LLMCallError) as info:
        fn()
    return info.value, time.monotonic() - started


def test_a_reply_carries_its_call_record(tmp_path, stub):
    port = port_for(tmp_path, stub)
    assert isinstance(port, LLMPort)
    reply = port.complete("sys", "質問", stage="runbook_chat")
    call = reply.call
    assert (
        reply.text == "テスト応答です。" and call.outcome == "ok" and call.stage == "runbook_chat"
    )
    assert (call.prompt_tokens, call.completion_tokens, call.attempts, call.retries) == (
        120,
        40,
        1,
        0,
    )
    assert call.cost_usd == pytest.approx((120 * 0.15 + 40 * 0.60) / 1e6)
    body = stub.chat_requests()[0]
    assert body["max_completion_tokens"] == 1024 and body["messages"][0]["role"] == "system"
    assert llm_port(port.settings) is llm_port(port.settings)  # built once per configuration


def test_stream_yields_deltas_then_the_reply_with_usage(tmp_path, stub):
    stub.queue(content="隔離します [1]。報告します [2]。", tokens_per_sec=100)
    items = list(port_for(tmp_path, stub).stream("sys", "質問", stage="wiki_qa"))
    *deltas, reply = items
    assert len(deltas) > 3 and all(isinstance(d, str) for d in deltas)
    assert isinstance(reply, LLMReply) and "".join(deltas) == reply.text
    assert reply.call.streamed and reply.call.first_token_ms is not None
    assert reply.call.prompt_tokens == 120 and stub.chat_requests()[0]["stream"] is True


def test_a_hung_server_times_out_within_the_budget(tmp_path, stub):
    stub.default.hang = True
    port = port_for(tmp_path, stub, llm_max_retries=3)
    error, seconds = failure(lambda: port.complete("s", "u", stage="t"))
    assert error.timed_out and "制限時間" in error.user_message
    assert seconds <= 1.5 + 1.0
    assert error.call.outcome == "timeout" and error.call.latency_ms >= 1000
    error, seconds = failure(lambda: list(port.stream("s", "u", stage="t")))
    assert error.timed_out and seconds <= 1.0 + 1.0  # the first-token deadline
    assert "first token" in error.call.reason


def test_a_stall_within_the_budget_is_waited_beyond_it_is_not(tmp_path, stub):
    port = port_for(tmp_path, stub)
    stub.queue(delay=0.3)
    assert port.complete("s", "u", stage="t").call.latency_ms >= 300
    stub.queue(delay=5)
    error, seconds = failure(lambda: port.complete("s", "u", stage="t"))
    assert error.timed_out and seconds <= 2.5


def test_retries_live_inside_the_budget_and_are_recorded(tmp_path, stub):
    port = port_for(tmp_path, stub, llm_max_retries=3, llm_answer_budget_sec=5)
    stub.queue(status=500)
    stub.queue(status=500)
    reply = port.complete("s", "u", stage="t")
    assert reply.call.attempts == 3 and reply.call.retries == 2 and reply.call.outcome == "ok"
    for _ in range(4):
        stub.queue(status=500)
    error, _ = failure(lambda: port.complete("s", "u", stage="t"))
    assert "HTTP 500" in error.user_message and error.call.attempts == 4
    # backoff 0.25 + 0.5 + 1 s: in a 1.5 s budget the fourth attempt does not fit
    short = port_for(tmp_path, stub, llm_max_retries=3)
    for _ in range(4):
        stub.queue(status=500)
    error, seconds = failure(lambda: short.complete("s", "u", stage="t"))
    assert error.call.attempts == 3 and seconds <= 1.5 + 1.0


def test_a_server_error_is_named_even_when_the_deadline_ran_out_while_retrying_it(tmp_path, stub):
    # the first-token deadline (0.3 s) passes during the 0.25 s backoff after a 500: the operator
    # is told the server failed (HTTP 500), not that it was silent; a hang still reads as timeout
    port = port_for(tmp_path, stub, llm_first_token_sec=0.3, llm_max_retries=3)
    stub.queue(status=500)  # one attempt: 0.25 s of backoff leaves < 0.05 s of the 0.3 s
    error, seconds = failure(lambda: list(port.stream("s", "u", stage="t")))
    assert "HTTP 500" in error.user_message and not error.timed_out, error.user_message
    assert error.call.failure == "error" and "deadline passed" in error.call.reason
    assert seconds <= 1.5 + 1.0
    stub.queue(hang=True)
    error, _ = failure(lambda: list(port.stream("s", "u", stage="t")))
    assert error.timed_out and "制限時間" in error.user_message


def test_retry_after_is_honoured_only_when_it_fits(tmp_path, stub):
    port = port_for(tmp_path, stub)
    stub.queue(status=429, retry_after=0.2)
    reply = port.complete("s", "u", stage="t")
    assert reply.call.retries == 1 and reply.call.latency_ms >= 200
    stub.queue(status=429, retry_after=30)
    error, seconds = failure(lambda: port.complete("s", "u", stage="t"))
    assert "HTTP 429" in error.user_message and seconds < 1.0  # not waited out
    assert "Retry-After 30" in error.call.reason and error.call.attempts == 1


def test_truncated_stream_empty_reply_and_unknown_model(tmp_path, stub):
    port = port_for(tmp_path, stub)
    stub.queue(content="これは途中で切れる回答です。", truncate_after=3)
    error, _ = failure(lambda: list(port.stream("s", "u", stage="t")))
    assert "途中で切れました" in error.user_message and error.call.outcome == "error"
    stub.queue(content="")
    error, _ = failure(lambda: port.complete("s", "u", stage="t"))
    assert "空" in error.user_message
    stub.queue(content="")
    error, _ = failure(lambda: list(port.stream("s", "u", stage="t")))
    assert "空" in error.user_message
    stub.known_models = {"qwen2.5"}
    error, _ = failure(lambda: port.complete("s", "u", stage="t"))
    assert "gpt-4o-mini" in error.user_message and "WB_CHAT_MODEL" in error.user_message
    assert error.call.attempts == 1  # a 404 is not retried


def test_an_oversized_reply_is_cut_at_the_limit(tmp_path, stub):
    port = port_for(tmp_path, stub, llm_max_answer_chars=1000)
    stub.default.content = "長" * 50_000
    reply = port.complete("s", "u", stage="t")
    assert len(reply.text) == 1000 and reply.cut and reply.call.cut
    stub.default.chunk_chars = 500
    *deltas, reply = list(port.stream("s", "u", stage="t"))
    assert len("".join(deltas)) == 1000 and reply.cut


def test_complete_json_repairs_once_then_fails_with_the_usage_of_both(tmp_path, stub):
    port = port_for(tmp_path, stub)
    stub.queue(content="```json\n{}\n```")
    stub.queue(content='{"score": 3, "reason": "根拠あり"}')
    got = port.complete_json("s", "u", Verdict, stage="t")
    assert got.value == Verdict(score=3, reason="根拠あり") and got.repaired
    repair = stub.chat_requests()[1]["messages"]
    assert repair[-2]["role"] == "assistant" and "無効" in repair[-1]["content"]
    assert got.reply.call.prompt_tokens == 240 and got.reply.call.attempts == 2
    stub.default.content = '{"score": "高い"}'
    error, _ = failure(lambda: port.complete_json("s", "u", Verdict, stage="t"))
    assert "JSON" in error.user_message and error.call.reason.startswith("invalid JSON")
    assert error.call.completion_tokens == 80


def test_budget_is_shared_by_the_calls_given_it(tmp_path, stub):
    port = port_for(tmp_path, stub)
    budget = Budget(1.0)
    stub.queue(delay=0.7)
    port.complete("s", "u", stage="t", budget=budget)
    stub.queue(delay=0.7)
    error, _ = failure(lambda: port.complete("s", "u", stage="t", budget=budget))
    assert error.timed_out
