"""Interview benchmark: the issue's figures from the scripted-user scenarios, offline.

    .venv/bin/python -m bench.interview [--json OUT] [--repeat N]

(1) the design's own postmortem dialogue (appendix G): stop reason, turns, critical slots filled,
questions about slots already filled; (2) every scenario of data/interview/scenarios: critical
coverage at stop, duplicate rate, QCheck failure rate, mean turns per domain, share of sessions
whose chosen VoI never increased, stop reasons; (3) one-turn latency without an LLM (SQLite
store, durable WAL with fsync, SQLite knowledge graph), p50 / p95 over all turns; (4) the online
adaptation's sensitivity (design 10.8): the same scenarios with scripted users who answer in
10 s and in 120 s instead of 30 s (the measured response time drives cost_ask and P(answerable)).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from core.interview.cli import quality_totals
from core.interview.kpi import aggregate
from core.interview.simulator import SimulationResult, load_scenarios, run_scenario

TARGETS = {
    "coverage": 0.85,
    "duplicate_rate": 0.10,
    "qcheck_fail_rate": 0.15,
    "voi_share": 0.8,
    "p50_ms": 100.0,
    "g_turns": 7,
}


def _mark(ok: bool) -> str:
    return "OK " if ok else "NG "


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


SENSITIVITY_SECONDS = (10.0, 120.0)


def sensitivity(scenarios: list, seconds: float) -> dict:
    results = [run_scenario(s.model_copy(update={"seconds_per_turn": seconds})) for s in scenarios]
    return {
        "seconds_per_turn": seconds,
        "coverage_mean": statistics.mean(r.kpis.slot_coverage for r in results),
        "coverage_min": min(r.kpis.slot_coverage for r in results),
        "voi_non_increasing_share": sum(r.kpis.voi_non_increasing for r in results) / len(results),
        "turns_mean": statistics.mean(r.kpis.turn_count for r in results),
        "soft_stops": sorted(r.scenario for r in results if r.stop_reason == "voi_low"),
    }


def run(repeat: int = 1) -> dict:
    scenarios = load_scenarios()
    t0 = time.perf_counter()
    results: list[SimulationResult] = [run_scenario(s) for s in scenarios]
    sim_seconds = time.perf_counter() - t0
    latencies: list[float] = []
    for _ in range(repeat):  # production persistence: fsync'd WAL
        for s in scenarios:
            r = run_scenario(s, interviewer_kwargs={"durable_wal": True, "llm": None})
            latencies += r.latencies_ms
    g = next(r for r in results if r.scenario == "pm-appendix-g")
    domains = aggregate(r.kpis for r in results)
    voi_share = sum(r.kpis.voi_non_increasing for r in results) / len(results)
    return {
        "appendix_g": {
            "stop_reason": g.stop_reason,
            "turns": g.kpis.turn_count,
            "critical_filled": sorted(g.critical_filled),
            "critical_total": g.critical_total,
            "asked_already_filled": sum(len(t.targets_filled_before) for t in g.turns),
            "dialogue": [
                {"q": t.question, "a": t.answer, "slots": t.targets, "voi": t.voi} for t in g.turns
            ],
        },
        "scenarios": [
            {
                "id": r.scenario,
                "domain": r.domain,
                "stop": r.stop_reason,
                "turns": r.kpis.turn_count,
                "coverage": r.kpis.slot_coverage,
                "duplicate_rate": r.kpis.duplicate_rate,
                "qcheck_fail_rate": r.kpis.qcheck_fail_rate,
                "voi_non_increasing": r.kpis.voi_non_increasing,
                "asked_filled": r.kpis.asked_filled,
                "document_quality": r.quality.summary(),
            }
            for r in results
        ],
        "document_quality": quality_totals(results),
        "domains": {k: v.model_dump() for k, v in domains.items()},
        "overall": {
            "sessions": len(results),
            "coverage_mean": statistics.mean(r.kpis.slot_coverage for r in results),
            "coverage_min": min(r.kpis.slot_coverage for r in results),
            "duplicate_rate": sum(r.kpis.duplicate_questions for r in results)
            / max(1, sum(r.kpis.total_questions for r in results)),
            "qcheck_fail_rate": sum(r.kpis.qcheck_failed for r in results)
            / max(1, sum(r.kpis.qcheck_total for r in results)),
            "voi_non_increasing_share": voi_share,
            "asked_filled": sum(r.kpis.asked_filled for r in results),
            "simulation_seconds": sim_seconds,
        },
        "sensitivity": [sensitivity(scenarios, sec) for sec in SENSITIVITY_SECONDS],
        "latency_ms": {
            "turns": len(latencies),
            "p50": percentile(latencies, 0.5),
            "p95": percentile(latencies, 0.95),
            "max": max(latencies) if latencies else 0.0,
        },
    }


def report(fig: dict) -> None:
    g = fig["appendix_g"]
    print("== (1) 付録G の例対話（ポストモーテム）")
    for n, t in enumerate(g["dialogue"], start=2):
        print(f"  T{n} Q[{'+'.join(t['slots'])} VoI {t['voi']:.3f}] {t['q']}")
        print(f"       A: {t['a']}")
    ok = (
        g["stop_reason"] == "kpi_met"
        and g["turns"] <= TARGETS["g_turns"]
        and len(g["critical_filled"]) == g["critical_total"]
        and g["asked_already_filled"] == 0
    )
    print(
        f"  {_mark(ok)}停止 {g['stop_reason']}、{g['turns']} ターン（目標 <= 7）、重要スロット "
        f"{len(g['critical_filled'])}/{g['critical_total']}、充足済みスロットへの質問 "
        f"{g['asked_already_filled']} 回"
    )
    print("\n== (2) 全シナリオ")
    print(
        f"  {'domain':11s} {'n':>2} {'平均ターン':>8} {'充足率平均':>8} {'最小':>6} {'重複率':>6} "
        f"{'QC失敗率':>7} {'VoI非増加':>8}  停止理由"
    )
    for name, d in fig["domains"].items():
        reasons = ", ".join(f"{k}={v:.2f}" for k, v in d["stop_reason_ratio"].items() if v)
        print(
            f"  {name:11s} {d['sessions']:>2} {d['turn_count']:>10.2f} {d['slot_coverage']:>11.3f} "
            f"{d['slot_coverage_min']:>6.3f} {d['duplicate_rate']:>8.3f} {d['qcheck_fail_rate']:>9.3f} "
            f"{d['voi_trend_share']:>10.2f}  {reasons}"
        )
    o = fig["overall"]
    print(
        f"  {_mark(o['coverage_min'] >= TARGETS['coverage'])}停止時の重要スロット充足率: 平均 "
        f"{o['coverage_mean']:.3f} / 最小 {o['coverage_min']:.3f}（目標 >= 0.85）"
    )
    print(
        f"  {_mark(o['duplicate_rate'] <= TARGETS['duplicate_rate'])}重複質問率 "
        f"{o['duplicate_rate']:.3f}（目標 <= 0.10）"
    )
    print(
        f"  {_mark(o['qcheck_fail_rate'] <= TARGETS['qcheck_fail_rate'])}QCheck 失敗率 "
        f"{o['qcheck_fail_rate']:.3f}（目標 <= 0.15）"
    )
    print(
        f"  {_mark(o['voi_non_increasing_share'] >= TARGETS['voi_share'])}選んだ行動の VoI が"
        f"非増加のセッション {o['voi_non_increasing_share']:.0%}（目標 >= 80%）"
    )
    print(f"  充足済みスロットへの質問: {o['asked_filled']} 回（{o['sessions']} セッション）")
    q = fig["document_quality"]
    print(
        f"  文書の品質: 回答に裏づけのある値 {q['supported_share']:.3f}（{q['values']} 値）/ 断片 "
        f"{q['fragments']} / 列の重複 {q['duplicates']} / 別の質問の回答から {q['cross_slot']}"
    )
    lat = fig["latency_ms"]
    print("\n== (3) 1ターンの遅延（LLM なし、SQLite＋fsync 付き WAL＋SQLite グラフ）")
    print(
        f"  {_mark(lat['p50'] <= TARGETS['p50_ms'])}p50 {lat['p50']:.1f} ms（目標 <= 100 ms）"
        f" / p95 {lat['p95']:.1f} ms / 最大 {lat['max']:.1f} ms（{lat['turns']} ターン）"
    )


def report_sensitivity(fig: dict) -> None:
    print("\n== (4) オンライン適応の感度（応答時間の違うユーザー、参考値）")
    for row in fig["sensitivity"]:
        soft = "、".join(row["soft_stops"]) or "なし"
        print(
            f"  応答 {row['seconds_per_turn']:.0f} 秒: 充足率 平均 {row['coverage_mean']:.3f} / 最小 "
            f"{row['coverage_min']:.3f}、VoI 非増加 {row['voi_non_increasing_share']:.0%}、平均ターン "
            f"{row['turns_mean']:.2f}、ソフト停止 {soft}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description="インタビューのベンチマーク（オフライン）")
    parser.add_argument("--json", type=Path, default=None, help="結果を JSON で保存する")
    parser.add_argument("--repeat", type=int, default=1, help="遅延計測の繰り返し回数")
    args = parser.parse_args()
    fig = run(args.repeat)
    report(fig)
    report_sensitivity(fig)
    if args.json:
        args.json.write_text(json.dumps(fig, ensure_ascii=False, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
