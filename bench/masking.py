"""What the one masking policy costs per record, and the store's sealing per session save.

    python -m bench.masking [--records 2000]

1. ``mask_value`` over audit-like records (a question, a 1.5 KB answer, four 200-character
   excerpts; every tenth record carries the PII table's values), records/s and µs per KB;
2. the same text through ``MaskingFilter`` as log lines, lines/s;
3. the peer: ``json.dumps`` of the same records (the serialization every sink pays anyway),
   and the ratio masking / serialization;
4. AES-256-GCM sealing and opening of a 20 KB session JSON (``core.sealing``), per call.
"""

from __future__ import annotations

import argparse
import json
import logging
import time

from core.masking import MaskingFilter, mask_value
from core.sealing import Sealer
from tests.support.pii import PII

_ANSWER = (
    "感染端末を EDR でネットワーク隔離する（Microsoft Defender for Endpoint の「デバイスの分離」）。"
    "端末の電源は切らない。情報セキュリティ責任者に第一報を入れる。CVE-2024-3400 のパッチ v1.2.3.4 を"
    "適用し、INC-12345 に記録する。通信先 203.0.113.45 と社内 10.1.2.3 を確認する。"
) * 6


def records(n: int) -> list[dict]:
    out = []
    for i in range(n):
        pii = " ".join(t for t, _ in PII) if i % 10 == 0 else ""
        out.append(
            {
                "query": f"ランサムウェアの隔離手順 {i} {pii}",
                "answer": _ANSWER + pii,
                "search_results": [{"excerpt": _ANSWER[:200], "file": "a.md"} for _ in range(4)],
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=2000)
    args = parser.parse_args()
    data = records(args.records)
    size_kb = sum(len(json.dumps(r, ensure_ascii=False).encode()) for r in data) / 1024

    t0 = time.perf_counter()
    for r in data:
        mask_value(r)
    mask_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for r in data:
        json.dumps(r, ensure_ascii=False)
    dump_s = time.perf_counter() - t0
    print(f"records: {args.records}, {size_kb / args.records:.1f} KB each")
    print(
        f"mask_value:  {args.records / mask_s:,.0f} records/s, {mask_s / size_kb * 1e6:,.0f} µs/KB"
    )
    print(f"json.dumps:  {args.records / dump_s:,.0f} records/s (peer)")
    print(f"ratio mask / json.dumps: {mask_s / dump_s:.1f}")

    filt = MaskingFilter()
    t0 = time.perf_counter()
    for r in data:
        record = logging.LogRecord(
            "core", logging.WARNING, __file__, 1, "slow: %r", (r["query"],), None
        )
        filt.filter(record)
    log_s = time.perf_counter() - t0
    print(f"MaskingFilter: {args.records / log_s:,.0f} log lines/s")

    sealer = Sealer(bytes(range(32)))
    state = json.dumps({"messages": [_ANSWER] * 20}, ensure_ascii=False)
    n = 500
    t0 = time.perf_counter()
    for _ in range(n):
        sealed = sealer.seal(state, "state_json")
    seal_us = (time.perf_counter() - t0) / n * 1e6
    t0 = time.perf_counter()
    for _ in range(n):
        sealer.open(sealed, "state_json")
    open_us = (time.perf_counter() - t0) / n * 1e6
    print(
        f"seal {len(state.encode()) / 1024:.0f} KB session: {seal_us:,.0f} µs, open: {open_us:,.0f} µs"
    )


if __name__ == "__main__":
    main()
