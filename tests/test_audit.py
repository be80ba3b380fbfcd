"""The audit log: hash chain, verification of edits/removals/truncation, concurrency, masking."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import stat
from datetime import datetime
from pathlib import Path

import pytest

from core.audit import (
    AuditWriteError,
    append_record,
    default_keyring,
    log_path,
    read_records,
    rotate_key,
)
from core.audit_keys import AuditKeyError, KeyRing
from core.audit_verify import verify_file, verify_log

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
    assert records[0]["prev_hash"] == "0" * 64 and records[0]["key_id"] == "k1"
    assert records[1]["prev_hash"] == records[0]["hash"]
    assert records[3]["query"] == "連絡先 [EMAIL] [PHONE]"
    assert "example.com" not in path.read_text(encoding="utf-8")
    assert verify_log(tmp_path).exit_code == 0


def test_files_and_keys_are_private(tmp_path):
    logs = tmp_path / "logs"
    path = write_n(logs, 1)
    keys = tmp_path / "keys"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(Path(str(path) + ".head").stat().st_mode) == 0o600
    assert stat.S_IMODE(keys.stat().st_mode) == 0o700
    assert stat.S_IMODE((keys / "audit-keys.json").stat().st_mode) == 0o600


def test_truncated_last_line_is_found_and_writing_goes_on(tmp_path):
    path = write_n(tmp_path, 4)
    data = path.read_bytes()
    path.write_bytes(data[:-25])  # a crash in the middle of the last line
    report = verify_file(path)
    assert not report.ok and report.problems[0].line == 4
    assert "途中で切れて" in report.problems[0].reason
    append_record(tmp_path, {"query": "次の質問", "answer": "回答"}, now=NOW)
    records, bad = read_records(path)
    assert bad == 1 and records[-1]["query"] == "次の質問"


def _writer(args: tuple[str, int, int]) -> None:
    logs, worker, n = args
    for i in range(n):
        append_record(Path(logs), {"query": f"w{worker}-{i}", "answer": "a" * 50}, now=NOW)


def test_concurrent_processes_write_intact_chained_lines(tmp_path):
    workers, per = 8, 150
    ctx = multiprocessing.get_context("fork")
    append_record(tmp_path, {"query": "first", "answer": "creates the key"}, now=NOW)
    with ctx.Pool(workers) as pool:
        pool.map(_writer, [(str(tmp_path), w, per) for w in range(workers)])
    report = verify_log(tmp_path)
    assert report.exit_code == 0, report.messages_ja()
    assert report.lines == workers * per + 1
    records, bad = read_records(log_path(tmp_path, NOW.date()))
    assert bad == 0
    assert len({r["query"] for r in records}) == workers * per + 1


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


# --- the tamper table ----------------------------------------------------------------------------

DAYS = [datetime(2026, 11, d, 10, 0, 0).astimezone() for d in (20, 21, 22)]


def three_days(logs: Path) -> list[Path]:
    for day in DAYS:
        for i in range(5):
            append_record(logs, {"query": f"{day.date()} 質問 {i}", "answer": f"回答 {i}"}, now=day)
    return [log_path(logs, d.date()) for d in DAYS]


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def _unkeyed_hash(record: dict) -> str:
    body = {k: v for k, v in record.items() if k != "hash"}
    text = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def edit_line(paths):
    lines = _lines(paths[1])
    record = json.loads(lines[2])
    record["answer"] = "改ざんされた回答"
    lines[2] = json.dumps(record, ensure_ascii=False) + "\n"
    paths[1].write_text("".join(lines), encoding="utf-8")


def delete_line(paths):
    lines = _lines(paths[1])
    paths[1].write_text("".join(lines[:2] + lines[3:]), encoding="utf-8")


def truncate(paths):
    paths[2].write_bytes(paths[2].read_bytes()[:-30])


def reorder(paths):
    lines = _lines(paths[0])
    lines[1], lines[2] = lines[2], lines[1]
    paths[0].write_text("".join(lines), encoding="utf-8")


def forged_append(paths, key_id=None):
    """An attacker appends a record with a correct unkeyed hash and rewrites the head."""
    last = json.loads(_lines(paths[2])[-1])
    record = {"query": "偽の質問", "answer": "偽の回答", "prev_hash": last["hash"]}
    if key_id:
        record["key_id"] = key_id
    record["hash"] = _unkeyed_hash(record)
    with paths[2].open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    head = Path(str(paths[2]) + ".head")
    state = json.loads(head.read_text(encoding="utf-8"))
    head.write_text(json.dumps({**state, "lines": 6, "hash": record["hash"]}), encoding="utf-8")


def rewritten_chain(paths):
    """Edit line 2 of the first day and recompute every hash (without the key)."""
    prev = None
    for path in paths:
        out = []
        for number, line in enumerate(_lines(path), start=1):
            record = json.loads(line)
            if path == paths[0] and number == 2:
                record["answer"] = "書き換え"
            if prev is not None:
                record["prev_hash"] = prev
            record["hash"] = _unkeyed_hash(record)
            prev = record["hash"]
            out.append(json.dumps(record, ensure_ascii=False) + "\n")
        path.write_text("".join(out), encoding="utf-8")


def missing_day(paths):
    paths[1].unlink()
    Path(str(paths[1]) + ".head").unlink()


def deleted_log_and_head(paths):
    paths[2].unlink()
    Path(str(paths[2]) + ".head").unlink()


def deleted_log_keeping_head(paths):
    paths[2].unlink()


def last_line_and_head(paths):
    paths[2].write_text("".join(_lines(paths[2])[:-1]), encoding="utf-8")
    Path(str(paths[2]) + ".head").unlink()


def rewritten_head(paths):
    head = Path(str(paths[0]) + ".head")
    state = json.loads(head.read_text(encoding="utf-8"))
    head.write_text(json.dumps({**state, "lines": 4}), encoding="utf-8")


def everything_deleted(paths):
    for path in paths:
        path.unlink()
        Path(str(path) + ".head").unlink()


TAMPER_TABLE = [
    (edit_line, 1, 3, "署名が一致しません"),
    (delete_line, 1, 3, "チェーンが一致しません"),
    (truncate, 2, 5, "途中で切れて"),
    (reorder, 0, 2, "チェーンが一致しません"),
    (forged_append, 2, 6, "鍵の無い記録"),
    (lambda p: forged_append(p, key_id="k1"), 2, 6, "署名が一致しません"),
    (rewritten_chain, 0, 1, "署名が一致しません"),  # the first line it recomputed
    (missing_day, 2, 1, "チェーンが一致しません"),
    (deleted_log_and_head, 2, None, "最新の日のログが削除"),
    (deleted_log_keeping_head, 2, None, ".head だけが残っています"),
    (last_line_and_head, 2, None, ".head）が削除されています"),
    (rewritten_head, 0, None, "署名が一致しません（書き換え）"),
    (everything_deleted, 2, None, "最新の日のログが削除"),
]


@pytest.mark.parametrize(
    ("tamper", "day", "line", "reason"), TAMPER_TABLE, ids=[f"case{i}" for i in range(13)]
)
def test_every_kind_of_tampering_is_found_with_file_and_line(tmp_path, tamper, day, line, reason):
    logs = tmp_path / "logs"
    paths = three_days(logs)
    assert verify_log(logs).exit_code == 0
    tamper(paths)
    report = verify_log(logs)
    assert report.exit_code == 1, report.messages_ja()
    name = paths[day].name
    hits = [p for p in report.problems if p.file.startswith(name) and p.line == line]
    assert any(reason in p.reason for p in hits), report.messages_ja()


def test_key_rotation_is_recorded_and_old_records_still_verify(tmp_path):
    logs = tmp_path / "logs"
    three_days(logs)
    new_id = rotate_key(logs)
    assert new_id == "k2"
    append_record(logs, {"query": "交替後", "answer": "a"})  # today, like the rotation
    report = verify_log(logs)
    assert report.exit_code == 0, report.messages_ja()
    records, _ = read_records(sorted(logs.glob("query_*.jsonl"))[-1])
    assert records[-2]["rotated_to"] == "k2" and records[-2]["key_id"] == "k1"
    assert records[-1]["key_id"] == "k2"


def test_a_record_signed_with_a_retired_key_is_found(tmp_path):
    logs = tmp_path / "logs"
    three_days(logs)
    old = default_keyring(logs)
    rotate_key(logs)
    append_record(logs, {"query": "古い鍵で", "answer": "a"}, keys=old)
    report = verify_log(logs)
    assert report.exit_code == 1
    assert any("交替記録と一致しません" in p.reason for p in report.problems)


def test_no_key_means_could_not_check(tmp_path):
    logs = tmp_path / "logs"
    three_days(logs)
    (tmp_path / "keys" / "audit-keys.json").unlink()
    report = verify_log(logs)
    assert report.exit_code == 2 and "鍵" in report.messages_ja()[0]


def test_a_key_of_the_wrong_length_is_refused():
    with pytest.raises(AuditKeyError, match="長さ"):
        KeyRing.from_hex("ab" * 16)
    with pytest.raises(AuditKeyError, match="16 進数"):
        KeyRing.from_hex("not hex")


def test_cli_verify_exit_codes(tmp_path, monkeypatch, capsys):
    from core.__main__ import main
    from core.settings import get_settings

    monkeypatch.setenv("WB_STATE_DIR", str(tmp_path))
    get_settings.cache_clear()
    try:
        assert main(["audit", "verify"]) == 0  # nothing yet
        paths = three_days(tmp_path / "logs")
        assert main(["audit", "verify"]) == 0
        assert "正常" in capsys.readouterr().out
        edit_line(paths)
        assert main(["audit", "verify"]) == 1
        assert f"{paths[1].name} 3 行目" in capsys.readouterr().err
        assert main(["audit", "rotate-key"]) == 0
        monkeypatch.setenv("WB_AUDIT_KEY", "00" * 10)
        get_settings.cache_clear()
        assert main(["audit", "verify"]) == 2
        assert "長さ" in capsys.readouterr().err
    finally:
        get_settings.cache_clear()


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
