"""KPIs over the audit-log frame (``core.evaluation.logs``): per day and overall.

Questions per day, latency p50/p95, the rates of the three flags, answer modes, tokens and
cost; and the audit-chain status of each day file (``core.audit_verify.verify_file``), cached by the
file's size and modification time because verifying hashes every line.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pandas as pd

from core.audit_verify import FileCheck, verify_file
from core.evaluation.logs import FLAG_FIELDS

PAGE_LABELS = {"runbook_chat": "手順書チャット", "wiki_qa": "Wikipedia QA", "unknown": "不明"}
MODE_LABELS = {"llm": "LLM", "extractive": "抽出型", "template": "定型応答", "unknown": "不明"}
FLAG_LABELS = {
    "insufficient_evidence": "根拠不足",
    "dangerous_operation": "危険操作",
    "ambiguous_query": "曖昧な質問",
}


def filter_frame(
    frame: pd.DataFrame,
    start: date | None = None,
    end: date | None = None,
    pages: Sequence[str] | None = None,
) -> pd.DataFrame:
    out = frame
    if start is not None:
        out = out[out["date"] >= start.isoformat()]
    if end is not None:
        out = out[out["date"] <= end.isoformat()]
    if pages is not None:
        out = out[out["page"].isin(list(pages))]
    return out


@dataclass(frozen=True, slots=True)
class Overview:
    questions: int
    sessions: int
    latency_p50: float | None
    latency_p95: float | None
    rates: dict[str, float]
    tokens: int
    cost_usd: float
    slow: int


def overview(frame: pd.DataFrame) -> Overview:
    n = len(frame)
    latency = frame["latency_sec"].dropna()
    return Overview(
        questions=n,
        sessions=int(frame["session_id"].nunique()) if n else 0,
        latency_p50=float(latency.quantile(0.5)) if len(latency) else None,
        latency_p95=float(latency.quantile(0.95)) if len(latency) else None,
        rates={f: float(frame[f].mean()) if n else 0.0 for f in FLAG_FIELDS},
        tokens=int(frame["total_tokens"].sum()) if n else 0,
        cost_usd=float(frame["cost_usd"].sum()) if n else 0.0,
        slow=int(frame["slow"].sum()) if n else 0,
    )


def daily(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per day: questions, latency p50/p95, flag rates, tokens, cost."""
    columns = [
        "date",
        "questions",
        "latency_p50",
        "latency_p95",
        *[f"{f}_rate" for f in FLAG_FIELDS],
        "total_tokens",
        "cost_usd",
    ]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    g = frame.groupby("date", sort=True)
    out = pd.DataFrame(
        {
            "questions": g.size(),
            "latency_p50": g["latency_sec"].quantile(0.5),
            "latency_p95": g["latency_sec"].quantile(0.95),
            **{f"{f}_rate": g[f].mean() for f in FLAG_FIELDS},
            "total_tokens": g["total_tokens"].sum(),
            "cost_usd": g["cost_usd"].sum(),
        }
    ).reset_index()
    rates = [f"{f}_rate" for f in FLAG_FIELDS]
    out[rates] = out[rates].round(4)
    out[["latency_p50", "latency_p95"]] = out[["latency_p50", "latency_p95"]].round(3)
    return out[columns]


def answer_modes(frame: pd.DataFrame) -> pd.DataFrame:
    """Questions per day and answer mode (long form)."""
    if frame.empty:
        return pd.DataFrame(columns=["date", "answer_mode", "questions"])
    out = frame.groupby(["date", "answer_mode"]).size().rename("questions").reset_index()
    out["answer_mode_label"] = out["answer_mode"].map(lambda m: MODE_LABELS.get(m, m))
    return out


def flag_rates_long(days: pd.DataFrame) -> pd.DataFrame:
    """The daily flag rates in long form (date, flag label, rate), for one chart."""
    rows = [
        {"date": r["date"], "flag": FLAG_LABELS[f], "rate": float(r[f"{f}_rate"])}
        for _, r in days.iterrows()
        for f in FLAG_FIELDS
    ]
    return pd.DataFrame(rows, columns=["date", "flag", "rate"])


# --- audit chain ------------------------------------------------------------------------------

_verified: OrderedDict[tuple[str, int, int, int], FileCheck] = OrderedDict()
_lock = threading.Lock()


def chain_status(paths: Iterable[Path]) -> pd.DataFrame:
    """``verify_file`` of each day file (cached per size and mtime of the file and its head)."""
    rows = []
    for path in paths:
        head = path.with_name(path.name + ".head")
        try:
            st = path.stat()
            head_mtime = head.stat().st_mtime_ns if head.exists() else 0
            key = (str(path), st.st_size, st.st_mtime_ns, head_mtime)
        except OSError:
            key = None
        with _lock:
            report = _verified.get(key) if key else None
        if report is None:
            report = verify_file(path)
            if key:
                with _lock:
                    _verified[key] = report
                    while len(_verified) > 256:
                        _verified.popitem(last=False)
        rows.append(
            {
                "file": path.name,
                "lines": report.lines,
                "ok": report.ok,
                "first_bad_line": report.problems[0].line if report.problems else None,
                "reason": report.problems[0].reason if report.problems else None,
                "message": report.message_ja(),
            }
        )
    return pd.DataFrame(
        rows, columns=["file", "lines", "ok", "first_bad_line", "reason", "message"]
    )
