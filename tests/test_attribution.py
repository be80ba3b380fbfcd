"""Who asked: audit records, WAL events and question-set runs carry the user, role and client."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date

from core.access import LOCAL, Principal
from core.audit import AuditRecord, append_record, log_path, read_records
from core.audit_verify import verify_log
from core.interview.orchestrator import Interviewer
from core.question_sets.generation import generate_question_set
from core.question_sets.golden import DEFAULT_POOL_ID, load_pool
from core.question_sets.runner import read_run, run_question_set
from core.question_sets.targets import FunctionTarget, make_target
from core.runbook_chat import ChatConfig, ask
from core.schemas.answer import Answer

ALICE = Principal(
    subject="u-alice-7f3",
    name="佐藤 花子",
    role="reviewer",
    groups=("soc-reviewers",),
    client="203.0.113.5",
    signed_in=True,
)


def _today_records(settings, subject: str) -> list[dict]:
    records, _ = read_records(log_path(settings.logs_dir, date.today()))
    return [r for r in records if r.get("user") == subject]


def test_an_answer_is_recorded_with_who_asked(sample_settings):
    config = ChatConfig(session_id="st-attrib", principal=ALICE)
    answer = ask("VPN に接続できないときの確認手順", [], config, sample_settings)
    assert answer.audit_logged, answer.warnings
    (record,) = _today_records(sample_settings, ALICE.subject)
    assert record["user_name"] == "佐藤 花子" and record["role"] == "reviewer"
    assert record["client"] == "203.0.113.5" and record["session_id"] == "st-attrib"
    assert AuditRecord.from_line(record).user == ALICE.subject


def test_without_sign_in_the_user_is_local(tmp_path):
    answer = Answer(question="q", answer="a", answer_mode="extractive", page="runbook_chat")
    written = append_record(tmp_path, AuditRecord.from_answer(answer, "cli"))
    assert (written["user"], written["user_name"], written["role"]) == ("local", "local", "admin")
    # lines from before attribution read back as local
    assert AuditRecord.from_line({"query": "old"}).user == "local"


def test_the_attribution_is_signed_into_the_chain(tmp_path):
    answer = Answer(question="q", answer="a", answer_mode="extractive", page="runbook_chat")
    for principal in (ALICE, replace(LOCAL, client="127.0.0.1")):
        append_record(tmp_path, AuditRecord.from_answer(answer, "s", principal))
    assert verify_log(tmp_path).exit_code == 0
    path = next(tmp_path.glob("query_*.jsonl"))
    lines = path.read_text(encoding="utf-8").splitlines()
    forged = json.loads(lines[0])
    forged["user"], forged["role"] = "u-mallory", "admin"  # claim someone else asked
    lines[0] = json.dumps(forged, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = verify_log(tmp_path)
    assert report.exit_code == 1


def test_wal_events_carry_the_actor(settings):
    iv = Interviewer(settings, durable_wal=False)
    try:
        started = iv.start("postmortem", "VPN 障害の振り返り", user_id=ALICE.subject, actor=ALICE)
        iv.answer(started.session.session_id, "原因は証明書の期限切れでした", actor=ALICE)
    finally:
        iv.close()
    events = [
        json.loads(line)
        for path in settings.wal_dir.glob("*.log")
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    assert events and {e["event"] for e in events} >= {"session_started", "answer"}
    for e in events:
        assert (e["user"], e["user_name"], e["role"]) == (ALICE.subject, "佐藤 花子", "reviewer")
        assert e["client"] == "203.0.113.5"


def test_a_question_set_run_names_who_ran_it(sample_settings, tmp_path):
    pool = load_pool(sample_settings.golden_dir, DEFAULT_POOL_ID)
    qs = generate_question_set(pool, "runbooks").question_set
    qs = replace(qs, questions=qs.questions[:2])
    target = make_target("runbook", sample_settings, principal=ALICE)
    result = run_question_set(
        qs, target, sample_settings, out=tmp_path / "run.json", principal=ALICE
    )
    run = read_run(result.path)
    assert (run.user, run.user_name, run.role, run.client) == (
        ALICE.subject,
        "佐藤 花子",
        "reviewer",
        "203.0.113.5",
    )
    # the run's answers are in the audit log under the same user
    texts = {q.question_text for q in qs.questions}
    assert texts <= {r["query"] for r in _today_records(sample_settings, ALICE.subject)}
    # without a principal: local
    plain = run_question_set(
        qs, FunctionTarget("runbook", lambda text: "回答"), sample_settings, out=tmp_path / "p.json"
    )
    assert read_run(plain.path).user == "local"
