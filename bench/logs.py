"""How fast the dashboard loads the audit logs: 100,000 lines, clean and with corrupt lines.

    python -m bench.logs [--lines 100000] [--days 30] [--corrupt 0.001]

Writes realistic audit records (the runbook chat's fields: four search results with 200-character
excerpts, a multi-line answer; about 3.7 KB a line) over ``--days`` day files in a temporary
folder, then times ``core.evaluation.logs.load_audit_log`` without its cache:

1. clean files (Arrow's multi-threaded reader over each whole file);
2. the same files with ``--corrupt`` of the lines damaged (cut short, binary, non-object) and
   the last line of each file truncated: the reader falls back to blocks and line by line;
3. the baseline: ``json.loads`` of every line (what a naive reader does).

Wall time and CPU time are both printed: on a loaded machine wall time includes waiting for a
core. The target is under 3 s for 100,000 lines.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

import pandas as pd

from core.evaluation.logs import FLAG_FIELDS, audit_files, load_audit_log

TARGET_SECONDS = 3.0
_EXCERPT = (
    "感染端末を EDR でネットワーク隔離する（Microsoft Defender for Endpoint の「デバイスの分離」で"
    "「完全」を選択）。端末の電源は切らない。メモリ上の暗号鍵やプロセス情報が失われるため、"
    "利用者にも操作しないよう伝える。情報セキュリティ責任者とインシデント対応責任者に第一報を入れる。"
)[:200]
_FILES = (
    "ransomware-isolation.md",
    "malware-infection.md",
    "phishing-report.md",
    "vpn-login-failure.md",
)
_MODES = ("extractive", "extractive", "extractive", "template", "llm")


def make_record(rng: random.Random, day: date, i: int) -> dict:
    mode = rng.choice(_MODES)
    insufficient = mode == "template" and rng.random() < 0.7
    tokens = rng.randint(800, 2000) if mode == "llm" else 0
    return {
        "session_id": f"st-{rng.getrandbits(48):012x}",
        "query": f"ランサムウェアに感染した端末をどう隔離しますか（{i}）",
        "rewritten_query": None,
        "search_results": [
            {
                "chunk_id": f"{f}#{n}",
                "score": round(rng.random(), 4),
                "bm25_score": round(rng.random() * 20, 4),
                "vector_score": round(rng.random(), 4),
                "file": f,
                "heading": "ランサムウェア感染時の隔離手順 > 初動対応（発見から10分以内）",
                "excerpt": _EXCERPT,
                "doc_hash": f"{rng.getrandbits(256):064x}",
            }
            for n, f in enumerate(rng.sample(_FILES, 4))
        ],
        "answer": "「ランサムウェア感染時の隔離手順 > 初動対応」より [1]:\n"
        + "\n".join(f"{n}. {_EXCERPT[:90]} [1]" for n in range(1, 4)),
        "answer_mode": mode,
        "model": "gpt-4o-mini" if mode == "llm" else None,
        "processing_time_sec": round(rng.lognormvariate(0.3, 0.6), 4),
        "token_usage": {
            "prompt_tokens": tokens,
            "completion_tokens": tokens // 5,
            "total_tokens": tokens + tokens // 5,
        },
        "cost_usd": round(tokens * 0.15e-6 + tokens // 5 * 0.6e-6, 6),
        "search_config": {"k": 4, "bm25_weight": 0.6, "vector_weight": 0.4, "fusion": "weighted"},
        "flags": {
            "insufficient_evidence": insufficient,
            "dangerous_operation": rng.random() < 0.15,
            "ambiguous_query": mode == "template" and not insufficient,
        },
        "evidence": {"probability": 0.97, "cosine": 0.88, "coverage": 0.8, "bm25": 9.1},
        "slow": False,
        "warnings": [],
        "page": rng.choice(("runbook_chat", "runbook_chat", "wiki_qa")),
        "timestamp": f"{day.isoformat()}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00.000000+09:00",
        "prev_hash": f"{rng.getrandbits(256):064x}",
        "hash": f"{rng.getrandbits(256):064x}",
    }


def write_logs(folder: Path, lines: int, days: int, corrupt: float, seed: int = 7) -> int:
    """Day files with ``lines`` records in total; returns the number of damaged lines."""
    rng = random.Random(seed)
    first = date(2025, 1, 1)
    damaged = 0
    per_day = lines // days
    for d in range(days):
        day = first + timedelta(days=d)
        count = per_day if d < days - 1 else lines - per_day * (days - 1)
        out = []
        for i in range(count):
            line = json.dumps(make_record(rng, day, i), ensure_ascii=False)
            if corrupt and rng.random() < corrupt:
                damaged += 1
                kind = rng.randrange(3)
                line = (
                    line[: len(line) // 2] if kind == 0 else ("\x00\x01" if kind == 1 else "[1, 2]")
                )
            out.append(line)
        text = "\n".join(out) + "\n"
        if corrupt:
            text = text[: -len(out[-1]) // 2]  # the last line cut short by a crash
            damaged += 1
        (folder / f"query_{day.isoformat()}.jsonl").write_text(text, encoding="utf-8")
    return damaged


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def naive(folder: Path) -> int:
    """json.loads per line, the same fields picked into a DataFrame."""
    rows = []
    for path in audit_files(folder):
        for raw in path.read_bytes().split(b"\n"):
            if raw.strip():
                try:
                    r = json.loads(raw)
                except ValueError:
                    continue
                usage, flags = r.get("token_usage") or {}, r.get("flags") or {}
                rows.append(
                    {
                        "timestamp": r.get("timestamp"),
                        "page": r.get("page"),
                        "answer_mode": r.get("answer_mode"),
                        "latency_sec": r.get("processing_time_sec"),
                        "cost_usd": r.get("cost_usd"),
                        "total_tokens": usage.get("total_tokens"),
                        **{k: flags.get(k) for k in FLAG_FIELDS},
                    }
                )
    return len(pd.DataFrame(rows))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.logs")
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--corrupt", type=float, default=0.001)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-logs-") as tmp:
        clean, dirty = Path(tmp, "clean"), Path(tmp, "dirty")
        clean.mkdir()
        dirty.mkdir()
        write_logs(clean, args.lines, args.days, 0.0)
        damaged = write_logs(dirty, args.lines, args.days, args.corrupt)
        size = sum(p.stat().st_size for p in audit_files(clean))
        print(
            f"{args.lines:,} lines in {args.days} day files, {size / 1e6:.0f} MB"
            f" ({size / args.lines / 1000:.1f} KB a line)"
        )
        log, wall, cpu = timed(lambda: load_audit_log(clean, use_cache=False))
        print(
            f"clean:   {log.records:,} records, {log.bad_count} bad lines: "
            f"wall {wall:.2f} s, cpu {cpu:.2f} s"
            f"  ({'under' if wall < TARGET_SECONDS else 'OVER'} the {TARGET_SECONDS:.0f} s target)"
        )
        log, wall2, cpu2 = timed(lambda: load_audit_log(dirty, use_cache=False))
        print(
            f"corrupt: {log.records:,} records, {log.bad_count} bad lines skipped"
            f" ({damaged} damaged): wall {wall2:.2f} s, cpu {cpu2:.2f} s"
            f"  ({'under' if wall2 < TARGET_SECONDS else 'OVER'} the {TARGET_SECONDS:.0f} s target)"
        )
        n, wall3, cpu3 = timed(lambda: naive(clean))
        print(
            f"baseline json.loads per line: {n:,} records: wall {wall3:.2f} s, cpu {cpu3:.2f} s"
            f"  -> reader is {wall3 / wall:.1f}x faster (wall), {cpu3 / cpu:.1f}x (cpu)"
        )
        load_audit_log(clean)  # fills the cache
        _, wall5, cpu5 = timed(lambda: load_audit_log(clean))
        print(f"cached rerun (dashboard): wall {wall5:.2f} s, cpu {cpu5:.2f} s")


if __name__ == "__main__":
    main()
