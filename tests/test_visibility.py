"""What a restricted viewer is shown of stored answers (audit records, runs, evaluations)."""

from __future__ import annotations

from pathlib import Path

from core.audit import AuditHit, AuditRecord
from core.evaluation.results import CaseResult, CitationRecord, DatasetInfo, EvaluationRun
from core.question_sets.runner import RunFile, RunRecord
from core.visibility import (
    WITHHELD,
    redact_evaluation_run,
    redact_question_set_run,
    visible_audit_record,
)

ALLOWED = frozenset({"default", "network"})
FOLDER = Path("/srv/runbooks")


def record(*files: str, page: str = "runbook_chat", data: str | None = None) -> AuditRecord:
    hits = [AuditHit(file=f, excerpt=f"抜粋 {f}") for f in files]
    return AuditRecord(page=page, search_results=hits, search_config={"data": data})


def test_audit_records_citing_a_hidden_collection_are_not_shown():
    assert visible_audit_record(record("network/vpn.md", "reset.md"), ALLOWED, FOLDER)
    assert not visible_audit_record(record("network/vpn.md", "malware/x.md"), ALLOWED, FOLDER)
    assert visible_audit_record(record("malware/x.md"), None, FOLDER)  # local and admins
    assert visible_audit_record(record("jawiki:東京", page="wiki_qa"), ALLOWED, FOLDER)
    # an answer given from another folder: its collections are not the configured folder's
    assert visible_audit_record(record("reset.md", data=str(FOLDER)), ALLOWED, FOLDER)
    assert not visible_audit_record(record("reset.md", data="/srv/other"), ALLOWED, FOLDER)


def _run(target: str = "runbook") -> RunFile:
    def rec(i: int, file: str) -> RunRecord:
        return RunRecord(
            index=i, question_id=f"Q{i}", question_text="質問", ordinance_id="o",
            question_set_id="s", source_golden_question_pool="A-v1.1", answer=f"回答 {file}",
            citations=[{"file": file, "excerpt": f"抜粋 {file}"}], started_at="t", elapsed_ms=1.0,
        )  # fmt: skip

    return RunFile(
        run_id="r", status="completed", target=target, schema_version="v1", ordinance_id="o",
        question_set_id="s", source_golden_question_pool="A-v1.1", execution_sha256="x",
        question_count=2, started_at="t",
        records=[rec(0, "network/vpn.md"), rec(1, "malware/x.md")],
    )  # fmt: skip


def test_question_set_answers_that_used_a_hidden_collection_are_withheld():
    shown = redact_question_set_run(_run(), ALLOWED)
    assert shown.records[0].answer == "回答 network/vpn.md" and shown.records[0].citations
    assert shown.records[1].answer == WITHHELD and shown.records[1].citations == []
    assert redact_question_set_run(_run(), None).records[1].answer == "回答 malware/x.md"
    assert redact_question_set_run(_run("wiki"), ALLOWED).records[1].citations


def _evaluation(runbooks_dir: str) -> EvaluationRun:
    def case(file: str) -> CaseResult:
        return CaseResult(
            id=file, category="normal", query="質問", answer=f"回答 {file}",
            citations=[CitationRecord(n=1, file=file, excerpt=f"抜粋 {file}")],
        )  # fmt: skip

    return EvaluationRun(
        run_id="e", status="completed", created_at="2026-01-01",
        dataset=DatasetInfo(path="d", version="1", sha256="x", cases=2), judge="heuristic",
        judge_label="h", answer_mode="extractive",
        settings={"target": "runbook", "runbooks_dir": runbooks_dir},
        results=[case("network/vpn.md"), case("malware/x.md")],
    )  # fmt: skip


def test_evaluation_cases_that_used_a_hidden_collection_are_withheld():
    shown = redact_evaluation_run(_evaluation(str(FOLDER)), ALLOWED, FOLDER)
    assert shown.results[0].answer == "回答 network/vpn.md"
    assert shown.results[1].answer == WITHHELD and not shown.results[1].citations
    elsewhere = redact_evaluation_run(_evaluation("/srv/other"), ALLOWED, FOLDER)
    assert all(r.answer == WITHHELD for r in elsewhere.results)
    assert redact_evaluation_run(_evaluation("/srv/other"), None, FOLDER).results[1].citations
