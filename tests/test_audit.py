"""The audit log: hash chain, verification of edits/removals/truncation, concurrency, masking."""

from __future__ import annotations

import json
import multiprocessing
import os
from datetime import datetime
from pathlib import Path

import pytest

from core.audit import AuditWriteError, append_record, log_path, read_records, verify_file

NOW = datetime(2026, 11, 22, 10, 0, 0).astimezone()


def write_n(logs: Path, n: int) -> Path:
    for i in range(n):
        append_record(logs, {"query": f"質問 {i}", "answer": f"回答 {i}"}, now=NOW)
    return log_path(logs, NOW.date())


def test_chain_verifies_and_masks(tmp_path):
    path = write_n(tmp_path, 3)
    append_record(
        tmp_path, {"query": "連絡先 a.b@example.com 090-1234-5678", "answer": "x"}, now=NOW
    )
    report = verify_file(path)
    assert report.ok and report.lines == 4
    records, bad = read_records(path)
    assert bad == 0
    assert records[0]["prev_hash"] == "0" * 64
    assert records[1]["prev_hash"] == records[0]["hash"]
    assert records[3]["query"] == "連絡先 [EMAIL] [PHONE]"
    assert "example.com" not in path.read_text(encoding="utf-8")


def test_edited_line_is_found(tmp_path):
    path = write_n(tmp_path, 5)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[2])
    record["answer"] = "改ざんされた回答"
    lines[2] = json.dumps(record, ensure_ascii=False) + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    report = verify_file(path)
    assert not report.ok and report.first_bad_line == 3 and "編集" in report.reason


def test_removed_middle_line_is_found(tmp_path):
    path = write_n(tmp_path, 5)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:2] + lines[3:]), encoding="utf-8")
    report = verify_file(path)
    assert not report.ok and report.first_bad_line == 3


def test_truncated_last_line_is_found_and_writing_goes_on(tmp_path):
    path = write_n(tmp_path, 4)
    data = path.read_bytes()
    path.write_bytes(data[:-25])  # a crash in the middle of the last line
    report = verify_file(path)
    assert not report.ok and report.first_bad_line == 4 and "途中で切れて" in report.reason
    append_record(tmp_path, {"query": "次の質問", "answer": "回答"}, now=NOW)
    records, bad = read_records(path)
    assert bad == 1 and records[-1]["query"] == "次の質問"


def test_removed_last_line_is_found(tmp_path):
    path = write_n(tmp_path, 4)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:-1]), encoding="utf-8")
    report = verify_file(path)
    assert not report.ok and report.first_bad_line == 4


def _writer(args: tuple[str, int, int]) -> None:
    logs, worker, n = args
    for i in range(n):
        append_record(Path(logs), {"query": f"w{worker}-{i}", "answer": "a" * 50}, now=NOW)


def test_concurrent_processes_write_intact_chained_lines(tmp_path):
    workers, per = 8, 500
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(workers) as pool:
        pool.map(_writer, [(str(tmp_path), w, per) for w in range(workers)])
    path = log_path(tmp_path, NOW.date())
    report = verify_file(path)
    assert report.ok, report.message_ja()
    assert report.lines == workers * per
    records, bad = read_records(path)
    assert bad == 0
    assert len({r["query"] for r in records}) == workers * per


def test_failed_write_raises_a_japanese_error(tmp_path):
    blocked = tmp_path / "logs"
    blocked.write_text("not a directory")
    with pytest.raises(AuditWriteError, match="監査ログ"):
        append_record(blocked, {"query": "q"}, now=NOW)


def test_missing_head_does_not_restart_the_chain(tmp_path):
    path = write_n(tmp_path, 3)
    os.remove(str(path) + ".head")
    append_record(tmp_path, {"query": "q4", "answer": "a"}, now=NOW)
    assert verify_file(path).ok


def test_version_1_lines_load_as_typed_records():
    from core.audit import AuditRecord

    old_runbook = {
        "session_id": "s", "query": "q", "answer": "a", "answer_mode": "extractive",
        "search_results": [{"chunk_id": "x_0", "file": "a.md", "heading": "h", "score": 0.5}],
        "flags": {"insufficient_evidence": False}, "page": "runbook_chat", "hash": "h1",
    }  # fmt: skip
    old_wiki = {
        "query": "q", "page": "wiki_qa", "answer_mode": "no_hit",
        "search_results": [{"chunk_id": "c", "source": "jawiki:東京#chunk=3", "score": 0.1}],
    }  # fmt: skip
    runbook, wiki = AuditRecord.from_line(old_runbook), AuditRecord.from_line(old_wiki)
    assert runbook.schema_version == 1 and runbook.search_results[0].file == "a.md"
    assert wiki.search_results[0].file == "jawiki:東京" and wiki.search_results[0].ref.endswith(
        "#chunk=3"
    )
    assert AuditRecord.from_line(["not", "a", "record"]) is None
    assert AuditRecord.from_line({"query": {"nested": "wrong type"}}) is None


def test_a_record_of_the_wrong_shape_is_refused(tmp_path):
    with pytest.raises(AuditWriteError, match="形式が不正"):
        append_record(tmp_path, {"flags": "not a mapping"}, now=NOW)
    assert not list(tmp_path.glob("query_*.jsonl"))


def test_the_dashboard_reads_fields_the_record_has():
    from core.audit import AuditRecord
    from core.evaluation.logs import AGGREGATED_FIELDS

    assert set(AGGREGATED_FIELDS) <= set(AuditRecord.model_fields)
