"""Wikipedia QA against a misbehaving OpenAI-compatible server: every case gives the LLM answer
or the extractive fallback with a Japanese warning, a complete audit record (``llm_calls``), and
the next question is answered normally. Budgets are 1.5 s (first token 1 s) to stay fast."""

from __future__ import annotations

import json

import pytest

from core.wiki.qa import WikiConfig, answer_body, ask
from tests.support.openai_server import OpenAIStub

QUESTION = "ガラスの風鈴が広まった時代はいつか"
GOOD = "ガラスの風鈴は江戸時代に広まりました [0]。"

CASES = {
    "hang": ({"hang": True}, "extractive", "制限時間", "timeout"),
    "stall": ({"delay": 0.3, "content": GOOD}, "llm", None, None),
    "429": ({"status": 429, "retry_after": 30}, "extractive", "HTTP 429", "error"),
    "500": ({"status": 500}, "extractive", "HTTP 500", "error"),
    "truncated": ({"content": GOOD * 3, "truncate_after": 4}, "extractive", "途中で切れ", "error"),
    "empty": ({"content": ""}, "extractive", "空", "error"),
    "huge": ({"content": "長い" * 25_000, "chunk_chars": 1000}, "llm", "打ち切り", None),
    "unsafe": (
        {"content": "答え [0]。[詳細](JaVaScRiPt:alert(1)) <script>alert(1)</script>"},
        "llm",
        "安全でないリンク",
        None,
    ),
}


def last_record(settings) -> dict:
    (path,) = sorted(settings.logs_dir.glob("query_*.jsonl"))[-1:]
    return json.loads(path.read_text("utf-8").splitlines()[-1])


@pytest.mark.parametrize("case", list(CASES))
def test_bad_server_gives_a_message_or_the_fallback_and_the_chat_goes_on(wiki_settings, case):
    reply, mode, warning, failure = CASES[case]
    with OpenAIStub(default_content=GOOD) as stub:
        settings = wiki_settings.model_copy(
            update={
                "openai_base_url": stub.base_url,
                "llm_answer_budget_sec": 1.5,
                "llm_first_token_sec": 1.0,
                "llm_max_retries": 1,
                "llm_max_answer_chars": 2000,
            }
        )
        if case == "500":
            stub.queue(status=500)
        stub.queue(**reply)
        answer = ask(QUESTION, [], WikiConfig(session_id=f"bad-{case}"), settings)
        record = last_record(settings)
        after = ask(QUESTION, [], WikiConfig(), settings)  # the server is healthy again
    assert answer.error is None and answer.answer_mode == mode
    if warning:
        assert any(warning in w for w in answer.warnings), answer.warnings
    assert answer.found and answer.answer.rpartition("\n\n")[2].startswith("参照: [0] jawiki:")
    (call,) = answer.llm_calls
    assert call.latency_ms <= (1.5 + 1.0) * 1000  # the bound: budget + 1 s
    assert call.stage == "wiki_qa" and call.attempts >= 1 and call.latency_ms > 0
    if failure:
        assert call.outcome == "fallback" and call.failure == failure and call.reason
    else:
        assert call.outcome == "ok"
        # a stream stopped at the length limit ends before the server's usage chunk
        assert call.prompt_tokens == (0 if case == "huge" else 120) and call.cut == (case == "huge")
    # the audit record has what the answer had, the warnings too
    assert record["session_id"] == f"bad-{case}" and record["answer_mode"] == mode
    assert record["llm_calls"][0]["outcome"] == call.outcome
    assert record["warnings"] == answer.warnings
    assert "javascript" not in record["answer"].lower() and "<script" not in record["answer"]
    if case == "huge":
        assert len(answer_body(answer)) <= 2000
    assert after.answer_mode == "llm" and answer_body(after) == GOOD


def test_unknown_model_is_named_in_the_message(wiki_settings):
    with OpenAIStub(default_content=GOOD, known_models={"qwen2.5-7b"}) as stub:
        settings = wiki_settings.model_copy(
            update={"openai_base_url": stub.base_url, "chat_model": "gpt-4o-mini"}
        )
        answer = ask(QUESTION, [], WikiConfig(), settings)
        fixed = ask(
            QUESTION, [], WikiConfig(), settings.model_copy(update={"chat_model": "qwen2.5-7b"})
        )
    assert answer.answer_mode == "extractive"
    assert any("gpt-4o-mini" in w and "WB_CHAT_MODEL" in w for w in answer.warnings)
    assert answer.llm_calls[0].attempts == 1
    assert fixed.answer_mode == "llm" and fixed.model == "qwen2.5-7b"
