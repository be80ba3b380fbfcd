"""``audit verify --against``: the local log against the SIEM's copy; and ``audit ship`` on the CLI."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from core.__main__ import main
from core.audit_against import verify_against
from core.schemas.shipping import ShipDestination
from core.settings import get_settings
from tests.support.siem_receivers import HttpReceiver
from tests.test_audit_ship import add, settings_for, ship_quietly


@pytest.fixture
def shipped(tmp_path: Path):
    """Five records shipped to a webhook; the SIEM's copy exported as JSONL in three wrappings."""
    http = HttpReceiver().start()
    try:
        hook = ShipDestination(name="hook", kind="webhook", url=f"{http.base_url}/hook")
        settings = settings_for(tmp_path, [hook])
        add(settings, 5)
        assert ship_quietly(settings, hook).ok
        records = http.received["hook"]
    finally:
        http.stop()
    lines = [
        json.dumps({"_id": records[0]["hash"], "_source": records[0]}, ensure_ascii=False),
        json.dumps({"result": {"_raw": json.dumps(records[1], ensure_ascii=False)}}),
        json.dumps({"event": records[2], "sourcetype": "_json"}, ensure_ascii=False),
        "<110>1 - h soc-workbench - audit [x] \ufeff" + json.dumps(records[3], ensure_ascii=False),
        json.dumps(records[4], ensure_ascii=False),
        json.dumps(records[4], ensure_ascii=False),  # at-least-once: a duplicate
    ]
    export = tmp_path / "siem-export.jsonl"
    export.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return settings, export


def _log(settings) -> Path:
    return next(settings.logs_dir.glob("query_*.jsonl"))


def test_an_untouched_log_matches_its_siem_copy(shipped) -> None:
    settings, export = shipped
    report = verify_against(settings.logs_dir, export)
    assert report.exit_code == 0 and report.matched == 5 and report.exported == 5
    add(settings, 1, start=5)  # not shipped yet: counted, not a problem
    report = verify_against(settings.logs_dir, export)
    assert report.exit_code == 0 and report.unshipped == 1
    assert "未送信" in report.messages_ja()[-1]


def test_edits_and_deletions_after_shipping_are_named_with_file_and_line(shipped) -> None:
    settings, export = shipped
    log = _log(settings)
    lines = log.read_text(encoding="utf-8").splitlines()
    edited = json.loads(lines[1])
    edited["answer"] = "書き換えた回答"  # hash kept
    rewritten = json.loads(lines[2])
    rewritten["query"] = "別の質問"
    rewritten["hash"] = hashlib.sha256(b"recomputed").hexdigest()  # hash recomputed
    lines[1] = json.dumps(edited, ensure_ascii=False)
    lines[2] = json.dumps(rewritten, ensure_ascii=False)
    del lines[3]  # the fourth record is deleted: the fifth is now line 4
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = verify_against(settings.logs_dir, export)
    assert report.exit_code == 1
    found = {(p.file, p.line): p.reason for p in report.problems}
    assert "送信後に編集" in found[(log.name, 2)]
    assert "書き換えられています" in found[(log.name, 3)]
    assert "直前にあった送信済みの記録が削除" in found[(log.name, 4)]
    assert len(report.problems) == 3
    assert any(f"{log.name} 2 行目" in m for m in report.messages_ja())


def test_a_broken_local_line_and_an_unreadable_export(shipped, tmp_path: Path) -> None:
    settings, export = shipped
    log = _log(settings)
    lines = log.read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0][:40]
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = verify_against(settings.logs_dir, export)
    assert report.exit_code == 1
    assert any(p.line == 1 and "JSON として読めません" in p.reason for p in report.problems)
    missing = verify_against(settings.logs_dir, tmp_path / "none.jsonl")
    assert missing.exit_code == 2 and "読めません" in missing.messages_ja()[0]
    junk = tmp_path / "junk.jsonl"
    junk.write_text("hello\n[1, 2]\n", encoding="utf-8")
    assert verify_against(settings.logs_dir, junk).exit_code == 2


def test_the_cli_ships_and_checks_against_the_copy(shipped, monkeypatch, capsys) -> None:
    settings, export = shipped
    monkeypatch.setenv("WB_STATE_DIR", str(settings.state_root))
    monkeypatch.delenv("WB_AUDIT_SHIP_DESTINATIONS", raising=False)
    get_settings.cache_clear()
    try:
        assert main(["audit", "verify", "--against", str(export)]) == 0
        assert "5 件中 5 件がローカルと一致" in capsys.readouterr().out
        assert main(["audit", "ship"]) == 2
        assert "送信先が設定されていません" in capsys.readouterr().err
        http = HttpReceiver().start()
        try:
            dest = {"name": "cli", "kind": "webhook", "url": f"{http.base_url}/hook"}
            monkeypatch.setenv("WB_AUDIT_SHIP_DESTINATIONS", json.dumps([dest]))
            get_settings.cache_clear()
            assert main(["audit", "ship"]) == 0
            assert "送信先「cli」（webhook" in capsys.readouterr().out
            assert len(http.hashes("hook")) == 5
            http.refuse_marker = "REFUSE"
            add(get_settings(), 1, start=9, marker="REFUSE")
            assert main(["audit", "ship", "--destination", "cli"]) == 1
            err = capsys.readouterr().err
            assert "「cli」" in err and "HTTP 400" in err and "6 行目以降は未送信" in err
            assert main(["audit", "ship", "--destination", "nope"]) == 2
            assert "nope" in capsys.readouterr().err
        finally:
            http.stop()
        _log(settings).write_text("", encoding="utf-8")
        assert main(["audit", "verify", "--against", str(export)]) == 1
        assert "ローカルにありません" in capsys.readouterr().err
    finally:
        get_settings.cache_clear()
