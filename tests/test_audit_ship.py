"""Shipping the audit log to SIEM receivers on 127.0.0.1 (issue 14 item 2).

Real sockets and HTTP: a syslog TCP (and TLS) listener and an HTTP server speaking Splunk HEC,
Elasticsearch _bulk and a webhook, started by the test and down for part of the run. After
they come back every record has arrived (by hash, duplicates removed), none is lost, and the
offset never passes an undelivered record.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from core.audit import append_record, read_records
from core.audit_ship import Offset, ship_destination, ship_dir, start_background_shipper
from core.schemas.shipping import ShipDestination
from tests.conftest import make_settings
from tests.support.siem_receivers import HttpReceiver, SyslogReceiver, free_port


def add(settings, n: int, start: int = 0, marker: str = "") -> None:
    for i in range(start, start + n):
        append_record(
            settings.logs_dir,
            {"page": "runbook_chat", "query": f"質問 {i} {marker}".strip(), "answer": f"回答 {i}"},
        )


def local_hashes(settings) -> list[str]:
    out = []
    for path in sorted(settings.logs_dir.glob("query_*.jsonl")):
        out += [r["hash"] for r in read_records(path)[0]]
    return out


def destinations(syslog_port: int, http_port: int) -> list[ShipDestination]:
    url = f"http://127.0.0.1:{http_port}"
    return [
        ShipDestination(name="syslog", kind="syslog", host="127.0.0.1", port=syslog_port),
        ShipDestination(
            name="splunk", kind="splunk_hec", url=f"{url}/services/collector/event", token="t"
        ),
        ShipDestination(name="elastic", kind="elastic_bulk", url=url, index="wb-audit"),
        ShipDestination(name="hook", kind="webhook", url=f"{url}/hook", batch_size=3),
    ]


def settings_for(tmp_path: Path, dests: list[ShipDestination], **extra):
    extra = {"audit_ship_retries": 2, "audit_ship_backoff_sec": 0.5, **extra}
    return make_settings(tmp_path / "state", audit_ship_destinations=dests, **extra)


def ship_quietly(settings, dest, delays: list[float] | None = None):
    delays = [] if delays is None else delays
    return ship_destination(settings, dest, sleep=delays.append)


def received(kind: str, syslog: SyslogReceiver, http: HttpReceiver) -> list[str]:
    return (
        syslog.hashes
        if kind == "syslog"
        else http.hashes({"splunk_hec": "hec", "elastic_bulk": "bulk", "webhook": "hook"}[kind])
    )


def test_receivers_down_then_back_every_record_arrives_once_by_hash(tmp_path: Path) -> None:
    syslog_port, http_port = free_port(), free_port()
    dests = destinations(syslog_port, http_port)
    settings = settings_for(tmp_path, dests)
    add(settings, 5)

    # 1. both receivers down: every destination fails after its retries, nothing advances
    for dest in dests:
        delays: list[float] = []
        report = ship_quietly(settings, dest, delays)
        assert not report.ok and report.sent == 0 and report.pending == 5
        assert f"「{dest.name}」" in report.error and "接続できません" in report.error
        assert "1 行目以降は未送信" in report.error
        assert delays == [0.5, 1.0]  # exponential backoff, audit_ship_retries times
        assert Offset.load(ship_dir(settings) / f"{dest.name}.json").line == 0

    # 2. they come up; more records meanwhile
    syslog, http = SyslogReceiver(syslog_port).start(), HttpReceiver(http_port).start()
    try:
        add(settings, 3, start=5)
        for dest in dests:
            report = ship_quietly(settings, dest)
            assert report.ok and report.sent == 8 and report.pending == 0, report.summary_ja()
        # 3. down again in the middle of the run, records keep coming, then back
        syslog.stop()
        http.stop()
        add(settings, 2, start=8)
        for dest in dests:
            report = ship_quietly(settings, dest)
            assert not report.ok and report.pending == 2
            assert "query_" in report.error and "9 行目" in report.error
        syslog.start()
        http.start()
        http.fail_after_store = 1  # stored, answer lost: at-least-once sends it again
        for dest in dests:
            report = ship_quietly(settings, dest)
            assert report.ok and report.sent == 2 and report.pending == 0
        expected = local_hashes(settings)
        assert len(expected) == 10
        for dest in dests:
            got = received(dest.kind, syslog, http)
            assert sorted(set(got)) == sorted(expected), dest.name  # none lost
            assert len(got) - len(set(got)) <= dest.batch_size  # duplicates: only a resent batch
        assert sorted(http.elastic) == sorted(expected)  # _id = hash: the index holds each once
        assert (
            sum(len(got) != len(set(got)) for got in (http.hashes("hec"), http.hashes("hook"))) == 1
        )
        # what arrived is the local record itself (masked, signed), in RFC 5424 form for syslog
        assert {r["hash"]: r for r in syslog.records()}[expected[0]]["query"] == "質問 0"
        frame = syslog.messages[0]
        assert frame.startswith(b"<110>1 ") and b" soc-workbench - audit [wbaudit@32473 " in frame
        hec = [h for p, h, _ in http.requests if p == "/services/collector/event"]
        assert hec[0]["Authorization"] == "Splunk t"
        hooks = [h for p, h, _ in http.requests if p == "/hook"]
        assert all(len(h["Idempotency-Key"]) == 64 for h in hooks)
    finally:
        syslog.stop()
        http.stop()
    offset_file = ship_dir(settings) / "syslog.json"
    assert offset_file.stat().st_mode & 0o777 == 0o600
    assert json.loads(offset_file.read_text())["hash"] == expected[-1]


def test_http_400_refusal_stops_at_the_record_and_names_the_destination(tmp_path: Path) -> None:
    http = HttpReceiver().start()
    try:
        elastic = ShipDestination(name="es", kind="elastic_bulk", url=http.base_url, index="a")
        hook = ShipDestination(name="hook", kind="webhook", url=f"{http.base_url}/hook")
        settings = settings_for(tmp_path, [elastic, hook])
        add(settings, 2)
        add(settings, 1, start=2, marker="REFUSE")
        add(settings, 2, start=3)
        http.refuse_marker = "REFUSE"
        delays: list[float] = []
        report = ship_quietly(settings, elastic, delays)
        assert not report.ok and delays == []  # a refusal is not retried in this run
        assert report.sent == 2 and report.pending == 3
        assert "「es」" in report.error and "HTTP 400" in report.error
        assert "3 行目以降は未送信" in report.error
        assert Offset.load(ship_dir(settings) / "es.json").line == 2  # not past record 3
        report = ship_quietly(settings, hook)
        assert not report.ok and report.sent == 0 and "HTTP 400" in report.error
        assert "「hook」" in report.error and "1 行目" in report.error
        # the SIEM is fixed: the next run delivers the rest, nothing lost
        http.refuse_marker = None
        for dest in (elastic, hook):
            assert ship_quietly(settings, dest).ok
        assert sorted(http.elastic) == sorted(local_hashes(settings))
        assert sorted(set(http.hashes("hook"))) == sorted(local_hashes(settings))
    finally:
        http.stop()


def test_a_slow_siem_times_out_without_losing_records(tmp_path: Path) -> None:
    http = HttpReceiver().start()
    try:
        hook = ShipDestination(
            name="slow", kind="webhook", url=f"{http.base_url}/hook", timeout_sec=0.3
        )
        settings = settings_for(tmp_path, [hook], audit_ship_retries=1)
        add(settings, 3)
        http.delay = 1.0
        report = ship_quietly(settings, hook)
        assert not report.ok and "応答がありません（遅延）" in report.error
        assert report.pending == 3
        http.delay = 0.0
        assert ship_quietly(settings, hook).ok
        assert sorted(set(http.hashes("hook"))) == sorted(local_hashes(settings))
    finally:
        http.stop()


def test_a_line_that_is_not_json_is_named_and_passed(tmp_path: Path) -> None:
    http = HttpReceiver().start()
    try:
        hook = ShipDestination(name="hook", kind="webhook", url=f"{http.base_url}/hook")
        settings = settings_for(tmp_path, [hook])
        add(settings, 2)
        log = next(settings.logs_dir.glob("query_*.jsonl"))
        with log.open("ab") as fh:
            fh.write(b"{not json\n")
        add(settings, 1, start=2)
        report = ship_quietly(settings, hook)
        assert report.ok and report.sent == 3
        assert any(f"{log.name} 3 行目は JSON" in w for w in report.warnings)
        assert sorted(http.hashes("hook")) == sorted(local_hashes(settings))
        # a shipped day that disappears locally is named, and nothing is sent again
        log.unlink()
        report = ship_quietly(settings, hook)
        assert report.ok and report.sent == 0
        assert any(f"送信済みの {log.name} がありません" in w for w in report.warnings)
    finally:
        http.stop()


def _self_signed(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    command = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    command += ["-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost"]
    command += ["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"]
    subprocess.run(command, check=True, capture_output=True)
    return cert, key


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is needed to make a cert")
def test_syslog_over_tls_verifies_the_certificate(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    receiver = SyslogReceiver(tls=(cert, key)).start()
    try:
        good = ShipDestination(
            name="tls", kind="syslog", host="127.0.0.1", port=receiver.port, tls=True, ca_file=cert
        )
        untrusted = ShipDestination(
            name="untrusted", kind="syslog", host="127.0.0.1", port=receiver.port, tls=True
        )
        settings = settings_for(tmp_path, [good, untrusted])
        add(settings, 4)
        report = ship_quietly(settings, untrusted)
        assert not report.ok and "TLS 証明書を検証できません" in report.error
        assert receiver.hashes == []
        report = ship_quietly(settings, good)
        assert report.ok and report.sent == 4
        assert sorted(receiver.hashes) == sorted(local_hashes(settings))
    finally:
        receiver.stop()


def test_the_background_shipper_runs_once_per_process(tmp_path: Path) -> None:
    http = HttpReceiver().start()
    try:
        hook = ShipDestination(name="bg", kind="webhook", url=f"{http.base_url}/hook")
        settings = settings_for(
            tmp_path, [hook], audit_ship_background=True, audit_ship_interval_sec=0.1
        )
        assert start_background_shipper(settings_for(tmp_path, [hook])) is None  # not enabled
        shipper = start_background_shipper(settings)
        try:
            assert shipper is not None and shipper.thread.daemon
            assert start_background_shipper(settings) is shipper
            add(settings, 3)
            deadline = time.monotonic() + 20
            while len(set(http.hashes("hook"))) < 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert sorted(set(http.hashes("hook"))) == sorted(local_hashes(settings))
        finally:
            shipper.stop()
        assert not shipper.thread.is_alive()
    finally:
        http.stop()
