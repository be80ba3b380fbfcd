"""Interview KPIs (design appendix B ``kpi_definitions``), per session and per domain.

Per session, from the state (or from the newest WAL snapshot of a session):
slot_coverage = filled critical / critical; question_efficiency = unique / total questions;
duplicate_rate = duplicate / total questions (a duplicate is similar to an earlier question by
the QCheck thresholds); turn_count; voi_median_trend = the per-turn median VoI over all slots
(and the chosen action's VoI), monotonic non-increasing or not; stop_reason; qcheck_fail_rate =
failed QCheck candidates / generated candidates. Per domain: means and pooled rates, the
average turns to completion and the stop-reason ratio {kpi_met, voi_low, timeout, user_abort}.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from core.interview.similarity import is_duplicate
from core.interview.slots import coverage
from core.interview.state import SessionState
from core.interview.wal import latest_snapshots

KPI_DEFINITIONS: dict[str, dict[str, object]] = {
    "slot_coverage": {
        "formula": "filled_critical_slots / total_critical_slots",
        "target": 0.85,
        "measurement": "per_session",
    },
    "question_efficiency": {
        "formula": "unique_questions / total_questions",
        "target": 0.90,
        "measurement": "rolling_7d",
    },
    "duplicate_rate": {
        "formula": "duplicate_questions / total_questions",
        "target": 0.10,
        "measurement": "rolling_7d",
    },
    "turn_count": {
        "formula": "avg_turns_to_completion",
        "target": "0.9*M0",
        "measurement": "per_domain",
    },
    "voi_median_trend": {
        "formula": "median(VoI) per turn",
        "target": "monotonic non-increasing",
        "measurement": "per_session",
    },
    "stop_reason_ratio": {
        "formula": "{kpi_met, voi_low, timeout, user_abort} / total",
        "target": {"kpi_met": ">=0.6"},
        "measurement": "rolling_7d",
    },
    "qcheck_fail_rate": {
        "formula": "failed_qcheck / total_qgen",
        "target": "<=0.15",
        "measurement": "rolling_7d",
    },
}
STOP_REASONS = ("kpi_met", "voi_low", "timeout", "user_abort")


class SessionKPI(BaseModel):
    session_id: str
    domain: str
    status: str
    stop_reason: str | None
    slot_coverage: float
    total_questions: int
    unique_questions: int
    duplicate_questions: int
    question_efficiency: float
    duplicate_rate: float
    turn_count: int
    voi_series: list[float] = Field(default_factory=list)
    voi_non_increasing: bool
    voi_median_series: list[float] = Field(default_factory=list)
    voi_median_non_increasing: bool
    qcheck_total: int
    qcheck_failed: int
    qcheck_fail_rate: float
    asked_filled: int  # questions about a slot that was already filled when asked
    completed: bool


class DomainKPI(BaseModel):
    domain: str
    sessions: int
    slot_coverage: float
    slot_coverage_min: float
    question_efficiency: float
    duplicate_rate: float
    turn_count: float
    voi_trend_share: float  # sessions whose chosen VoI never increased
    voi_median_trend_share: float
    stop_reason_ratio: dict[str, float]
    qcheck_fail_rate: float
    asked_filled: int


def non_increasing(series: list[float], tol: float = 1e-9) -> bool:
    return all(b <= a + tol for a, b in itertools.pairwise(series))


def _per_turn(values: list[tuple[int, float]]) -> list[float]:
    first: dict[int, float] = {}
    for turn, value in values:
        first.setdefault(turn, value)
    return [round(first[t], 6) for t in sorted(first)]


def session_kpis(state: SessionState) -> SessionKPI:
    cores = [q.core for q in state.questions]
    dups = sum(1 for i, core in enumerate(cores) if is_duplicate(core, cores[:i]))
    total = len(cores)
    chosen = [round(v.voi, 6) for v in state.voi_trace if v.action != "none"]
    medians = _per_turn([(v.turn, v.median_voi) for v in state.voi_trace])
    failed = sum(1 for e in state.qcheck_log if e.failed)
    generated = len(state.qcheck_log)
    reason = state.stop.reason if state.stop else None
    return SessionKPI(
        session_id=state.session_id,
        domain=state.goal_kind,
        status=state.status,
        stop_reason=reason,
        slot_coverage=round(coverage(state.slots), 4),
        total_questions=total,
        unique_questions=total - dups,
        duplicate_questions=dups,
        question_efficiency=round((total - dups) / total, 4) if total else 1.0,
        duplicate_rate=round(dups / total, 4) if total else 0.0,
        turn_count=state.turn,
        voi_series=chosen,
        voi_non_increasing=non_increasing(chosen),
        voi_median_series=medians,
        voi_median_non_increasing=non_increasing(medians),
        qcheck_total=generated,
        qcheck_failed=failed,
        qcheck_fail_rate=round(failed / generated, 4) if generated else 0.0,
        asked_filled=sum(1 for q in state.questions if q.filled_at_ask),
        completed=reason in ("kpi_met", "voi_low"),
    )


def aggregate(kpis: Iterable[SessionKPI]) -> dict[str, DomainKPI]:
    by_domain: dict[str, list[SessionKPI]] = {}
    for k in kpis:
        by_domain.setdefault(k.domain, []).append(k)
    out: dict[str, DomainKPI] = {}
    for domain, rows in sorted(by_domain.items()):
        n = len(rows)
        total_q = sum(r.total_questions for r in rows)
        dups = sum(r.duplicate_questions for r in rows)
        generated = sum(r.qcheck_total for r in rows)
        stopped = [r for r in rows if r.stop_reason]
        reasons = Counter(r.stop_reason for r in stopped)
        done = [r for r in rows if r.completed] or rows
        out[domain] = DomainKPI(
            domain=domain,
            sessions=n,
            slot_coverage=round(sum(r.slot_coverage for r in rows) / n, 4),
            slot_coverage_min=min(r.slot_coverage for r in rows),
            question_efficiency=round((total_q - dups) / total_q, 4) if total_q else 1.0,
            duplicate_rate=round(dups / total_q, 4) if total_q else 0.0,
            turn_count=round(sum(r.turn_count for r in done) / len(done), 2),
            voi_trend_share=round(sum(r.voi_non_increasing for r in rows) / n, 4),
            voi_median_trend_share=round(sum(r.voi_median_non_increasing for r in rows) / n, 4),
            stop_reason_ratio={
                k: round(reasons.get(k, 0) / len(stopped), 4) if stopped else 0.0
                for k in STOP_REASONS
            },
            qcheck_fail_rate=round(sum(r.qcheck_failed for r in rows) / generated, 4)
            if generated
            else 0.0,
            asked_filled=sum(r.asked_filled for r in rows),
        )
    return out


def kpis_from_wal(paths: Iterable[Path]) -> list[SessionKPI]:
    """Session KPIs from the newest WAL snapshot of each session (pseudonymous ids)."""
    snaps, _ = latest_snapshots(list(paths))
    out = []
    for key, event in sorted(snaps.items()):
        snapshot = dict(event["data"]["snapshot"])
        snapshot["session_id"] = key
        try:
            out.append(session_kpis(SessionState.model_validate(snapshot)))
        except ValueError:
            continue
    return out
