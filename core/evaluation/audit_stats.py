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
from core.evaluation.scores import CRITERION_LABELS

PAGE_LABELS = {"runbook_chat": "手順書チャット", "wiki_qa": "Wikipedia QA", "unknown": "不明"}
# ``no_hit``: what older Wikipedia QA records wrote for the fixed "not found" reply, which the
# pipeline now records as ``template``.
MODE_LABELS = {
    "llm": "LLM",
    "extractive": "抽出型",
    "template": "定型応答",
    "no_hit": "定型応答",
    "unknown": "不明",
}
FLAG_LABELS = {
    "insufficient_evidence": "根拠不足",
    "dangerous_operation": "危険操作",
    "ambiguous_query": "曖昧な質問",
}
STATUS_LABELS = {
    "completed": "完了",
    "running": "実行中",
    "interrupted": "中断",
    "active": "進行中",
    "stopped": "終了",
}

# Every column name a dashboard table can show, as the user reads it (``labelled`` applies it;
# ``ui.dashboard.table`` calls that for every table and its CSV).
COLUMN_LABELS = {
    # audit log
    "timestamp": "日時",
    "date": "日付",
    "page": "ページ",
    "user": "利用者 ID",
    "user_name": "利用者",
    "role": "役割",
    "client": "接続元",
    "query": "質問",
    "answer_mode": "回答モード",
    "latency_sec": "処理時間 (秒)",
    **FLAG_LABELS,
    "file": "ファイル",
    "line": "行",
    "questions": "質問数",
    "latency_p50": "p50 (秒)",
    "latency_p95": "p95 (秒)",
    "insufficient_evidence_rate": "根拠不足率",
    "dangerous_operation_rate": "危険操作率",
    "ambiguous_query_rate": "曖昧率",
    "total_tokens": "トークン",
    "cost_usd": "コスト (USD)",
    "lines": "検証済み行数",
    "first_bad_line": "異常の行",
    "reason": "理由",
    # evaluation runs and cases
    "created_at": "実行日時",
    "run_id": "実行 ID",
    "status": "状態",
    "judge": "判定方式",
    "judge_label": "判定方式（名称）",
    "judge_model": "判定モデル",
    "dataset_version": "データセット版",
    "cases": "ケース数",
    "passed_cases": "合格ケース数",
    "pass_rate": "合格率",
    "passed": "合格",
    "average": "平均スコア",
    "checks_pass_rate": "確定チェック全合格率",
    "correct_refusal_rate": "正しい拒否率",
    "wrong_refusal_rate": "誤った拒否率",
    "id": "ケース ID",
    "category": "カテゴリ（ID）",
    "category_label": "カテゴリ",
    "checks_passed": "確定チェック合格",
    "failed_checks": "不合格のチェック",
    "refused": "拒否",
    "processing_time_sec": "処理時間 (秒)",
    "error": "エラー",
    **CRITERION_LABELS,
    # Recall@K
    "build": "インデックス",
    "index_dir": "インデックスのフォルダ",
    "built_at": "構築日時",
    "embedder": "埋め込み",
    "articles": "記事数",
    "chunks": "チャンク数",
    "mode": "検索方式",
    "rerank": "リランク",
    "latency_p50_ms": "レイテンシ p50 (ms)",
    "latency_p95_ms": "レイテンシ p95 (ms)",
    # interview KPIs
    "session_id": "セッション ID",
    "domain": "ドメイン（ID）",
    "domain_label": "ドメイン",
    "stop_reason": "終了理由",
    "sessions": "セッション数",
    "slot_coverage": "スロット充足率",
    "slot_coverage_min": "スロット充足率（最小）",
    "total_questions": "質問数",
    "unique_questions": "異なる質問数",
    "duplicate_questions": "重複した質問数",
    "question_efficiency": "質問効率",
    "duplicate_rate": "重複率",
    "turn_count": "ターン数",
    "voi_non_increasing": "VoI 非増加",
    "voi_median_non_increasing": "VoI 中央値 非増加",
    "voi_trend_share": "VoI 非増加の割合",
    "voi_median_trend_share": "VoI 中央値 非増加の割合",
    "qcheck_total": "質問チェック数",
    "qcheck_failed": "質問チェック不合格",
    "qcheck_fail_rate": "質問チェック不合格率",
    "asked_filled": "質問で埋まったスロット",
    "completed": "完了",
    "kpi_met_ratio": "KPI 達成で終了した割合",
    "stop_kpi_met": "終了: KPI 達成",
    "stop_voi_low": "終了: VoI 低下",
    "stop_timeout": "終了: 時間切れ",
    "stop_user_abort": "終了: 利用者の中断",
    "updated_at": "更新日時",
    # question-set runs
    "target": "対象（ID）",
    "target_label": "対象",
    "question_set_id": "質問セット ID",
    "ordinance_id": "条例 ID",
    "answered": "回答数",
    "errors": "エラー数",
    "insufficient_rate": "根拠不足率",
    "mean_ms": "1問あたりの平均 (ms)",
    "total_sec": "合計 (秒)",
    "started_at": "開始日時",
    "finished_at": "終了日時",
    "index": "番号",
    "question_id": "質問 ID",
    "question_text": "質問",
    "answer": "回答",
    "citations": "引用数",
    "elapsed_ms": "処理時間 (ms)",
}
# Columns whose values are codes: shown by their label.
VALUE_LABELS = {"page": PAGE_LABELS, "answer_mode": MODE_LABELS, "status": STATUS_LABELS}
TIME_COLUMNS = ("timestamp", "created_at", "built_at", "updated_at", "started_at", "finished_at")


def labelled(frame: pd.DataFrame, tz: str = "Asia/Tokyo") -> pd.DataFrame:
    """The frame as a user reads it: codes replaced by their labels, times in ``tz``
    (``core.timefmt.local_time``), Japanese column names. Unknown columns stay as they are."""
    from core.timefmt import local_time

    out = frame.copy()
    for column, labels in VALUE_LABELS.items():
        if column in out.columns:
            out[column] = out[column].map(
                lambda v, m=labels: m.get(v, v) if isinstance(v, str) else v
            )
    for column in TIME_COLUMNS:
        if column in out.columns:
            out[column] = out[column].map(lambda v: local_time(v, tz))
    return out.rename(columns=COLUMN_LABELS)


def filter_frame(
    frame: pd.DataFrame,
    start: date | None = None,
    end: date | None = None,
    pages: Sequence[str] | None = None,
    users: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Rows in the period, on ``pages`` and asked by ``users`` (subjects; ``None``: all)."""
    out = frame
    if start is not None:
        out = out[out["date"] >= start.isoformat()]
    if end is not None:
        out = out[out["date"] <= end.isoformat()]
    if pages is not None:
        out = out[out["page"].isin(list(pages))]
    if users is not None:
        out = out[out["user"].isin(list(users))]
    return out


def user_names(frame: pd.DataFrame) -> dict[str, str]:
    """Each user (subject) of ``frame`` and their latest display name, in subject order."""
    if frame.empty:
        return {}
    latest = frame.sort_values("timestamp").groupby("user")["user_name"].last()
    return {str(u): str(n) for u, n in sorted(latest.items())}


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
