"""Streamlit-side helpers of the question-set page: the row table and its conversions, and the
rendering of a run and of a run-to-run comparison.

The editor shows one row per question (execution order) with an order column that can be edited
to move rows, the question id and text, and the row's validation errors (read-only). Unknown keys
of a question ride along in a hidden column so that they survive editing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

import pandas as pd
import streamlit as st

from core.errors import WorkbenchError
from core.question_sets.contract import Issue
from core.question_sets.diff import RunDiff, citation_label
from core.question_sets.editing import DraftRow, row_of_path
from core.question_sets.runner import RunFile, read_run
from core.question_sets.targets import TARGET_LABELS

COL_ORDER = "順番"
COL_ID = "question_id"
COL_TEXT = "question_text"
COL_ERRORS = "エラー"
COL_EXTRA = "_extra"
COLUMNS = [COL_ORDER, COL_ID, COL_TEXT, COL_ERRORS, COL_EXTRA]


def display_path(path: str) -> str:
    return path or "（ルート）"


def issues_by_row(issues: Iterable[Issue]) -> dict[int, list[str]]:
    """Errors of ``…questions[i]…`` grouped by row i, each with its key (``question_id: …``)."""
    rows: dict[int, list[str]] = {}
    for path, message in issues:
        index = row_of_path(path)
        if index is None:
            continue
        tail = path.split("]", 1)[1].lstrip(".")
        rows.setdefault(index, []).append(f"{tail}: {message}" if tail else message)
    return rows


def rows_frame(rows: list[DraftRow], issues: Iterable[Issue] = ()) -> pd.DataFrame:
    """The editor's table: order 1..n, id, text, errors, hidden extra keys (JSON)."""
    errors = issues_by_row(issues)
    return pd.DataFrame(
        {
            COL_ORDER: pd.Series(range(1, len(rows) + 1), dtype="Int64"),
            COL_ID: pd.Series([r.question_id for r in rows], dtype="object"),
            COL_TEXT: pd.Series([r.question_text for r in rows], dtype="object"),
            COL_ERRORS: pd.Series(
                ["／".join(errors.get(i, [])) for i in range(len(rows))], dtype="object"
            ),
            COL_EXTRA: pd.Series(
                [json.dumps(r.extra, ensure_ascii=False) if r.extra else "" for r in rows],
                dtype="object",
            ),
        },
        columns=COLUMNS,
    )


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    return str(value)


def _extra(value: Any) -> dict[str, Any]:
    text = _text(value)
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _order(value: Any, position: int) -> tuple[int, float, int]:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if math.isnan(number):
        return (1, 0.0, position)  # no order given (a new row): after the numbered rows
    return (0, number, position)


def rows_from_frame(frame: pd.DataFrame) -> list[DraftRow]:
    """Rows in the order the ``順番`` column asks for (ties keep the table's order; rows
    without a number, such as a newly added row, go last). Empty rows are kept: a row just
    added is empty until it is filled, and validation reports it."""
    records = frame.to_dict("records")
    keyed = sorted(enumerate(records), key=lambda item: _order(item[1].get(COL_ORDER), item[0]))
    out: list[DraftRow] = []
    for _, rec in keyed:
        row = DraftRow(
            question_id=_text(rec.get(COL_ID)),
            question_text=_text(rec.get(COL_TEXT)),
            extra=_extra(rec.get(COL_EXTRA)),
        )
        out.append(row)
    return out


def _cell(column: str, value: Any) -> str:
    if column == COL_ORDER:
        kind, number, _ = _order(value, 0)
        return "" if kind else f"{number:g}"
    return _text(value)


def same_frame(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """Whether two editor tables show the same thing (cell by cell, as text)."""
    if list(a.columns) != list(b.columns) or a.shape != b.shape:
        return False
    return all(
        _cell(col, x) == _cell(col, y)
        for col in COLUMNS
        for x, y in zip(a[col].tolist(), b[col].tolist(), strict=True)
    )


def issues_frame(issues: Iterable[Issue]) -> pd.DataFrame:
    return pd.DataFrame(
        [(display_path(p), m) for p, m in issues], columns=["場所（JSON パス）", "内容"]
    )


# --- runs and comparisons (Streamlit rendering; all text through plain, escaped widgets) -------

STATUS_JA = {"unchanged": "変化なし", "changed": "変化あり", "added": "追加", "removed": "削除"}
RUN_STATUS_JA = {"completed": "完了", "running": "未完了", "interrupted": "中断"}


def render_run(run: RunFile) -> None:
    """A run: totals, one table row per question, and each answer with its citations."""
    st.markdown(f"**実行結果**（{RUN_STATUS_JA.get(run.status, run.status)}）")
    c1, c2, c3 = st.columns(3)
    c1.metric("質問", f"{len(run.records)} / {run.question_count}")
    c2.metric("エラー", run.error_count)
    c3.metric("合計時間", f"{run.total_ms / 1000:.1f} 秒")
    st.dataframe(
        [
            {
                "順番": r.index + 1,
                "question_id": r.question_id,
                "回答（冒頭）": r.answer[:80],
                "回答モード": r.answer_mode,
                "フラグ": ", ".join(k for k, v in r.flags.items() if v),
                "引用数": len(r.citations),
                "時間(ms)": round(r.elapsed_ms),
                "エラー": r.error or "",
            }
            for r in run.records
        ],
        hide_index=True,
    )
    for r in run.records:
        with st.expander(f"{r.index + 1}. {r.question_id}"):
            st.text(f"質問: {r.question_text}")
            if r.error:
                st.error(r.error)
            st.text(r.answer)
            for c in r.citations:
                score = c.get("score")
                suffix = f"（スコア: {score:.2f}）" if isinstance(score, int | float) else ""
                st.text(f"引用元: {citation_label(c)}{suffix}")
                if c.get("excerpt"):
                    st.text("    " + str(c["excerpt"]).replace("\n", " "))


def run_label(path: str) -> str:
    """How a run file is listed for choosing: time, target, set label, size, status."""
    try:
        run = read_run(path)
    except WorkbenchError:
        return f"{path.rsplit('/', 1)[-1]}（読めません）"
    return (
        f"{run.started_at[:19].replace('T', ' ')}・{TARGET_LABELS.get(run.target, run.target)}・"
        f"{run.question_set_id}・{len(run.records)}問・{RUN_STATUS_JA.get(run.status, run.status)}"
    )


def render_comparison(comparison: RunDiff) -> None:
    """Counts, notes, one row per question, and the changed answers side by side."""
    counts = comparison.counts
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("変化なし", counts["unchanged"])
    m2.metric("変化あり", counts["changed"])
    m3.metric("追加", counts["added"])
    m4.metric("削除", counts["removed"])
    for note in comparison.notes:
        st.warning(note)
    st.dataframe(
        [
            {
                "question_id": q.question_id,
                "状態": STATUS_JA[q.status],
                "変化": "／".join(q.changes_ja()),
            }
            for q in comparison.questions
        ],
        hide_index=True,
    )
    for q in comparison.questions:
        if q.status == "unchanged":
            continue
        with st.expander(f"{q.question_id}（{STATUS_JA[q.status]}）"):
            for change in q.changes_ja():
                st.text(change)
            left, right = st.columns(2)
            with left:
                st.caption("比較元の回答")
                st.text(q.error_a or q.answer_a or "（なし）")
            with right:
                st.caption("比較先の回答")
                st.text(q.error_b or q.answer_b or "（なし）")


__all__ = [
    "COLUMNS",
    "COL_ERRORS",
    "COL_EXTRA",
    "COL_ID",
    "COL_ORDER",
    "COL_TEXT",
    "display_path",
    "issues_by_row",
    "issues_frame",
    "render_comparison",
    "render_run",
    "rows_frame",
    "rows_from_frame",
    "run_label",
    "same_frame",
]
