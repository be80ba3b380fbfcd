"""The audit trail's costs: concurrent signed appends, verification, and shipping to a SIEM.

    python -m bench.audit [--procs 8] [--per-proc 250] [--verify-records 100000]
                          [--ship-records 20000] [--batch 200]

1. Appends: ``--procs`` processes append ``--per-proc`` records each, concurrently, through
   ``core.audit.append_record`` (mask, HMAC-SHA256, chain, fsync of the line, head and anchor
   under one ``flock``), starting from a folder without a key (the processes race to create the
   ring). Then ``verify_log`` must find every line and an intact chain. The peer: one process
   appending the same number of records.
2. Verification: a chain of ``--verify-records`` realistic records (about 1.6 KB a line, over 30
   days) written with the writer's own format (signing, heads, anchor; without an fsync per
   line, which only the appends need), then ``verify_log`` timed, given per 100,000 records.
   The peer: ``json.loads`` of every line (reading without checking).
3. Shipping: ``--ship-records`` records to receivers on 127.0.0.1 (``tests.support``: an HTTP
   server for the webhook, Elasticsearch ``_bulk`` and Splunk HEC, and a syslog TCP listener),
   ``--batch`` records a request, records per second each.

Wall and CPU times are printed: on a loaded machine wall time includes waiting for a core.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

from core.audit import (
    AUDIT_SCHEMA_VERSION,
    _canonical,
    _head_message,
    _head_path,
    append_record,
    default_keyring,
    log_path,
)
from core.audit_keys import anchor_path, write_anchor
from core.audit_verify import verify_log

_EXCERPT = (
    "感染端末を EDR でネットワーク隔離する（Microsoft Defender for Endpoint の「デバイスの分離」で"
    "「完全」を選択）。端末の電源は切らない。メモリ上の暗号鍵やプロセス情報が失われるため、"
)


def _record(i: int) -> dict:
    return {
        "schema_version": AUDIT_SCHEMA_VERSION,
        "page": "runbook_chat",
        "session_id": f"s{i % 97}",
        "query": f"ランサムウェアに感染した端末の隔離手順 {i}",
        "answer": "1. 端末をネットワークから隔離する。\n2. 電源は切らない。\n" * 3,
        "answer_mode": "extractive",
        "search_results": [
            {
                "n": n,
                "chunk_id": f"c{i}-{n}",
                "file": "ransomware-isolation.md",
                "excerpt": _EXCERPT,
            }
            for n in range(1, 5)
        ],
        "processing_time_sec": 0.42,
    }


def _append_worker(logs_dir: str, count: int, start: mp.Event) -> None:  # type: ignore[valid-type]
    start.wait()
    for i in range(count):
        append_record(Path(logs_dir), _record(i))


def bench_appends(procs: int, per_proc: int) -> None:
    for n_procs, n_per in ((procs, per_proc), (1, procs * per_proc)):
        with tempfile.TemporaryDirectory() as tmp:
            logs = Path(tmp) / "logs"
            ctx = mp.get_context("fork")
            start = ctx.Event()
            workers = [
                ctx.Process(target=_append_worker, args=(str(logs), n_per, start))
                for _ in range(n_procs)
            ]
            for w in workers:
                w.start()
            cpu0, t0 = os.times(), time.perf_counter()
            start.set()
            for w in workers:
                w.join()
            wall = time.perf_counter() - t0
            cpu1 = os.times()
            cpu = (cpu1.children_user + cpu1.children_system) - (
                cpu0.children_user + cpu0.children_system
            )
            total = n_procs * n_per
            report = verify_log(logs)
            failed = [w.exitcode for w in workers if w.exitcode]
            print(
                f"appends  {n_procs} process(es) x {n_per}: {total / wall:8.1f} records/s "
                f"(wall {wall:.2f} s, CPU {cpu:.2f} s); verify: exit {report.exit_code}, "
                f"{report.lines} / {total} lines{', worker failures ' + str(failed) if failed else ''}"
            )
            for message in report.messages_ja()[:3]:
                print(f"          {message}")


def write_chain(logs_dir: Path, records: int, days: int = 30) -> int:
    """A signed chain in the writer's format (no fsync per line); returns the bytes written."""
    keys = default_keyring(logs_dir)
    logs_dir.mkdir(parents=True, exist_ok=True)
    anchor = anchor_path(keys.path.parent, logs_dir)
    prev, written, first = "0" * 64, 0, date(2026, 1, 1)
    per_day = -(-records // days)
    for d in range(days):
        n = min(per_day, records - d * per_day)
        if n <= 0:
            break
        path = log_path(logs_dir, first + timedelta(days=d))
        with path.open("w", encoding="utf-8") as fh:
            for i in range(n):
                record = _record(d * per_day + i)
                record["timestamp"] = f"{(first + timedelta(days=d)).isoformat()}T09:00:00+09:00"
                record["key_id"], record["prev_hash"] = keys.current, prev
                record["hash"] = keys.mac(_canonical(record))
                prev = record["hash"]
                line = json.dumps(record, ensure_ascii=False) + "\n"
                written += fh.write(line)
        head = {"lines": n, "hash": prev, "key_id": keys.current}
        head["mac"] = keys.mac(_head_message(path.name, n, prev))
        _head_path(path).write_text(json.dumps(head), encoding="utf-8")
        write_anchor(anchor, keys, path.name, n, prev)
    return written


def bench_verify(records: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp) / "logs"
        size = write_chain(logs, records)
        t0, c0 = time.perf_counter(), time.process_time()
        report = verify_log(logs)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        t1 = time.perf_counter()
        for path in sorted(logs.glob("query_*.jsonl")):
            with path.open("rb") as fh:
                for raw in fh:
                    json.loads(raw)
        plain = time.perf_counter() - t1
        scale = 100_000 / records
        print(
            f"verify   {records:,} records ({size / records / 1024:.1f} KB a line): exit "
            f"{report.exit_code}, {wall:.2f} s wall / {cpu:.2f} s CPU = {wall * scale:.2f} s per "
            f"100,000 records; json.loads alone {plain * scale:.2f} s per 100,000 "
            f"(verification x{wall / plain:.1f})"
        )


def bench_ship(records: int, batch: int) -> None:
    from core.audit_ship import ship_destination
    from core.schemas.shipping import ShipDestination
    from core.settings import Settings
    from tests.support.siem_receivers import HttpReceiver, SyslogReceiver

    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        write_chain(state / "logs", records, days=3)
        http, syslog = HttpReceiver().start(), SyslogReceiver().start()
        url = http.base_url
        dests = [
            ShipDestination(name="hook", kind="webhook", url=f"{url}/hook", batch_size=batch),
            ShipDestination(
                name="elastic", kind="elastic_bulk", url=url, index="a", batch_size=batch
            ),
            ShipDestination(
                name="splunk",
                kind="splunk_hec",
                url=f"{url}/services/collector/event",
                batch_size=batch,
            ),
            ShipDestination(
                name="syslog", kind="syslog", host="127.0.0.1", port=syslog.port, batch_size=batch
            ),
        ]
        settings = Settings(_env_file=None, state_dir=state, audit_ship_destinations=dests)
        try:
            for dest in dests:
                t0, c0 = time.perf_counter(), time.process_time()
                report = ship_destination(settings, dest)
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                print(
                    f"ship     {dest.kind:<12} {report.sent:,} records, batch {batch}: "
                    f"{report.sent / wall:8.0f} records/s (wall {wall:.2f} s, CPU incl. the "
                    f"receiver thread {cpu:.2f} s){'' if report.ok else ' ERROR ' + str(report.error)}"
                )
            got = {
                "hook": len(set(http.hashes("hook"))),
                "elastic": len(http.elastic),
                "splunk": len(set(http.hashes("hec"))),
                "syslog": len(set(syslog.hashes)),
            }
            print(f"         distinct hashes received: {got} (expected {records} each)")
        finally:
            http.stop()
            syslog.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--procs", type=int, default=8)
    parser.add_argument("--per-proc", type=int, default=250)
    parser.add_argument("--verify-records", type=int, default=100_000)
    parser.add_argument("--ship-records", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=200)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs; {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    bench_appends(args.procs, args.per_proc)
    bench_verify(args.verify_records)
    bench_ship(args.ship_records, args.batch)


if __name__ == "__main__":
    main()
