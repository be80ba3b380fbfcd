"""Interview KPIs for the dashboard: per session and per domain, against the design's targets.

The KPIs themselves are computed by the interview package (``core.interview.kpi``, design
appendix B) from the newest WAL snapshot of each session; this module selects the WAL day files
of a date range, turns the results into tables and compares each domain with its target:
slot_coverage >= 0.85, duplicate_rate <= 0.10, qcheck_fail_rate <= 0.15,
question_efficiency >= 0.90 and the share of sessions stopped with ``kpi_met`` >= 0.6.

Reading is tolerant: unreadable WAL lines are counted (a truncated last line is reported as
such) and a snapshot that no longer validates is skipped. When the interview package cannot be
imported the result says so instead of failing the dashboard.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import pandas as pd

_WAL_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})\.log$")


@dataclass(frozen=True, slots=True)
class KpiTarget:
    key: str
    label: str
    op: str  # ">=" or "<="
    target: float

    def met(self, value: float | None) -> bool | None:
        if value is None or pd.isna(value):
            return None
        return value >= self.target if self.op == ">=" else value <= self.target


KPI_TARGETS: tuple[KpiTarget, ...] = (
    KpiTarget("slot_coverage", "重要スロット充足率", ">=", 0.85),
    KpiTarget("duplicate_rate", "重複質問率", "<=", 0.10),
    KpiTarget("qcheck_fail_rate", "QCheck 失敗率", "<=", 0.15),
    KpiTarget("question_efficiency", "質問効率", ">=", 0.90),
    KpiTarget("kpi_met_ratio", "停止理由 kpi_met の割合", ">=", 0.6),
)
DOMAIN_LABELS = {
    "sop": "手順書（SOP）",
    "postmortem": "ポストモーテム",
    "recipe": "レシピ",
    "daily_work": "日報",
}


@dataclass(slots=True)
class InterviewKPIs:
    sessions: pd.DataFrame  # one row per session
    domains: pd.DataFrame  # one row per domain (the interview package's aggregates)
    targets: pd.DataFrame  # domain x KPI: value, target, met
    files: list[Path] = field(default_factory=list)
    bad_lines: int = 0
    truncated_tail: bool = False
    message: str | None = None  # Japanese, when the KPIs could not be computed

    @property
    def available(self) -> bool:
        return self.message is None


def wal_day_files(wal_dir: Path, start: date | None = None, end: date | None = None) -> list[Path]:
    if not Path(wal_dir).is_dir():
        return []
    out = []
    for path in sorted(Path(wal_dir).glob("*.log")):
        m = _WAL_NAME.match(path.name)
        if not m:
            continue
        day = date.fromisoformat(m.group(1))
        if (start and day < start) or (end and day > end):
            continue
        out.append(path)
    return out


def _empty(message: str | None = None, files: list[Path] | None = None) -> InterviewKPIs:
    return InterviewKPIs(
        pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), files or [], 0, False, message
    )


def target_table(domains: pd.DataFrame) -> pd.DataFrame:
    """Domain x KPI rows: value, target, operator, met."""
    rows = []
    for _, d in domains.iterrows():
        for t in KPI_TARGETS:
            value = d.get(t.key)
            value = None if value is None or pd.isna(value) else float(value)
            rows.append(
                {
                    "domain": d["domain"],
                    "domain_label": DOMAIN_LABELS.get(d["domain"], d["domain"]),
                    "kpi": t.key,
                    "kpi_label": t.label,
                    "value": value,
                    "target": t.target,
                    "op": t.op,
                    "met": t.met(value),
                }
            )
    return pd.DataFrame(rows)


def load_interview_kpis(
    wal_dir: Path, start: date | None = None, end: date | None = None
) -> InterviewKPIs:
    """Session and domain KPIs from the WAL day files within [start, end]."""
    files = wal_day_files(wal_dir, start, end)
    if not files:
        return _empty(files=[])
    try:
        from core.interview.kpi import aggregate, session_kpis
        from core.interview.state import SessionState
        from core.interview.wal import latest_snapshots
    except ImportError as exc:  # the interview package is optional for the dashboard
        return _empty(f"インタビューの KPI 計算を読み込めません（{exc}）。", files)
    snaps, report = latest_snapshots(files)
    kpis = []
    for key, event in sorted(snaps.items()):
        snapshot = dict(event["data"]["snapshot"])
        snapshot["session_id"] = key
        try:
            kpi = session_kpis(SessionState.model_validate(snapshot))
        except ValueError:
            report.bad_lines.append(int(event.get("_line", 0)))
            continue
        row = kpi.model_dump(exclude={"voi_series", "voi_median_series"})
        row["updated_at"] = str(event.get("ts", ""))
        kpis.append((kpi, row))
    sessions = pd.DataFrame([row for _, row in kpis])
    domains = pd.DataFrame([d.model_dump() for d in aggregate(k for k, _ in kpis).values()])
    if not domains.empty:
        domains["kpi_met_ratio"] = domains["stop_reason_ratio"].map(
            lambda r: float(r.get("kpi_met", 0.0)) if isinstance(r, dict) else None
        )
        for reason in ("kpi_met", "voi_low", "timeout", "user_abort"):
            domains[f"stop_{reason}"] = domains["stop_reason_ratio"].map(
                lambda r, k=reason: float(r.get(k, 0.0)) if isinstance(r, dict) else None
            )
        domains = domains.drop(columns=["stop_reason_ratio"])
    return InterviewKPIs(
        sessions=sessions,
        domains=domains,
        targets=target_table(domains) if not domains.empty else pd.DataFrame(),
        files=files,
        bad_lines=len(report.bad_lines),
        truncated_tail=report.truncated_tail,
    )
