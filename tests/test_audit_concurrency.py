"""Concurrent appends from several processes: whole lines, one chain, one key (issue 14 bench)."""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path

from core.audit import KEYS_FILE, append_record
from core.audit_keys import keys_dir_for
from core.audit_verify import verify_log


def _append(logs_dir: str, worker: int, count: int, start) -> None:
    start.wait()
    for i in range(count):
        append_record(Path(logs_dir), {"page": "runbook_chat", "query": f"w{worker} q{i}"})


def test_processes_racing_from_a_folder_without_a_key_write_one_intact_chain(tmp_path: Path):
    logs = tmp_path / "logs"
    ctx = mp.get_context("fork")
    start = ctx.Event()
    workers = [ctx.Process(target=_append, args=(str(logs), w, 6, start)) for w in range(4)]
    for w in workers:
        w.start()
    start.set()  # all four create the key ring and append at once
    for w in workers:
        w.join(60)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    ring = json.loads((keys_dir_for(logs) / KEYS_FILE).read_text())
    assert list(ring["keys"]) == ["k1"]
    report = verify_log(logs)
    assert report.exit_code == 0, report.messages_ja()
    assert report.lines == 24
    queries = [
        json.loads(line)["query"]
        for path in logs.glob("query_*.jsonl")
        for line in path.read_text("utf-8").splitlines()
    ]
    assert sorted(queries) == sorted(f"w{w} q{i}" for w in range(4) for i in range(6))
