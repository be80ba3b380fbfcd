"""LLM calls outside the pipelines (interview turns, judgements) are audit records whose tokens
and cost the dashboard counts, without counting them as questions."""

from __future__ import annotations

from core.audit import AuditRecord, append_record, keyring_for, record_llm_calls
from core.audit_verify import verify_file
from core.evaluation.audit_stats import daily, overview
from core.evaluation.logs import load_audit_log
from core.schemas.answer import LLMCall
from tests.conftest import make_settings


def test_llm_call_records_count_in_usage_not_in_questions(tmp_path):
    settings = make_settings(tmp_path / "state")
    question = AuditRecord(
        page="runbook_chat",
        query="VPN",
        answer="手順",
        answer_mode="llm",
        processing_time_sec=1.0,
        token_usage={"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        cost_usd=0.001,
        llm_calls=[LLMCall(stage="runbook_chat", prompt_tokens=100, completion_tokens=10)],
    )
    append_record(settings.logs_dir, question, keys=keyring_for(settings))
    calls = [
        LLMCall(stage="interview.stage02_extract", prompt_tokens=300, completion_tokens=50,
                cost_usd=0.002, latency_ms=800),
        LLMCall(stage="interview.stage06_qgen", outcome="fallback", failure="timeout",
                reason="deadline passed", latency_ms=1500),
    ]  # fmt: skip
    assert record_llm_calls(settings, "interview", calls, session_id="s1", label="turn 2") is None
    assert record_llm_calls(settings, "evaluation", [], label="judge") is None  # nothing to write
    log = load_audit_log(settings.logs_dir)
    assert len(log.frame) == 2
    ov = overview(log.frame)
    assert ov.questions == 1 and ov.latency_p50 == 1.0
    assert ov.tokens == 110 + 350 and round(ov.cost_usd, 6) == 0.003
    (day,) = daily(log.frame).to_dict("records")
    assert day["questions"] == 1 and day["total_tokens"] == 460
    (path,) = settings.logs_dir.glob("query_*.jsonl")
    assert verify_file(path, keyring_for(settings)).ok  # the same signed chain
    records = [
        AuditRecord.model_validate_json(line) for line in path.read_text("utf-8").splitlines()
    ]
    stages = [c.stage for c in records[1].llm_calls]
    assert records[1].answer_mode == "llm_call" and records[1].page == "interview"
    assert stages == ["interview.stage02_extract", "interview.stage06_qgen"]
    assert records[1].llm_calls[1].failure == "timeout"
