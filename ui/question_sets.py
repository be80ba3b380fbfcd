"""Streamlit widgets of the question-set editor: the header and metadata fields, the question
table and its conversions, issue lists and notices, and the save button.

The widgets only show and return values: the page hands what they return to
``core.question_sets.editing.Editor``. The question table shows one row per question (execution
order) with an order column that can be edited to move rows, the question id and text, and the
row's issues (read-only). Unknown keys of a question ride along in a hidden column so that they
survive editing. Every text goes through plain Streamlit text widgets (escaped).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

import pandas as pd
import streamlit as st

from core.question_sets.contract import METADATA_KEYS, Issue
from core.question_sets.draft import Draft, DraftRow
from core.question_sets.editing import Notice, Opened, opened_notices
from core.question_sets.jsonfile import json_depth_exceeds

COL_ORDER = "順番"
COL_ID = "question_id"
COL_TEXT = "question_text"
COL_ERRORS = "エラー"
COL_EXTRA = "_extra"
COLUMNS = [COL_ORDER, COL_ID, COL_TEXT, COL_ERRORS, COL_EXTRA]

HEADER_LABELS = {
    "schema_version": "schema_version（契約バージョン）",
    "ordinance_id": "ordinance_id（条例 ID）",
    "question_set_id": "question_set_id（人間向けの表示名。機械判定には使われません）",
    "source_golden_question_pool": "source_golden_question_pool（派生元のプール）",
}
METADATA_LABELS = {
    "generated_by": "generated_by（生成元）",
    "generated_at": "generated_at（生成日時、ISO-8601。例: 2026-01-02T09:00:00+09:00）",
    "note": "note（補足）",
}


# --- notices and issue lists -------------------------------------------------------------------------


def show_notice(notice: Notice) -> None:
    getattr(st, notice.level)(notice.text)


def display_path(path: str) -> str:
    return path or "（ルート）"


def issues_frame(issues: Iterable[Issue]) -> pd.DataFrame:
    return pd.DataFrame(
        [(display_path(p), m) for p, m in issues], columns=["場所（JSON パス）", "内容"]
    )


def show_issues(issues: list[Issue]) -> None:
    """A table of issues, and every issue in full below it (table cells cut long text)."""
    st.dataframe(
        issues_frame(issues),
        hide_index=True,
        column_config={"内容": st.column_config.TextColumn("内容", width="large")},
    )
    with st.expander("全文を表示"):
        for path, message in issues:
            st.text(f"{display_path(path)}\n{message}")


def show_opened(opened: Opened | None, issues: list[Issue]) -> None:
    """What the last opening found: loaded or not (and why), and what was converted."""
    if opened is None:
        return
    for notice in opened_notices(opened, issues):
        show_notice(notice)
    shown = issues if opened.loaded else list(opened.issues)
    if shown and not opened.is_pool:
        show_issues(shown)
    if opened.notes:
        st.warning("編集できるように変換した値があります（保存前に確認してください）。")
        show_issues(list(opened.notes))


def show_validation(issues: list[Issue], question_count: int) -> None:
    if issues:
        st.error(
            f"エラーが {len(issues)} 件あります（質問のエラーは表の「エラー」列にも表示しています）。"
        )
        show_issues(issues)
    else:
        st.success(f"契約に適合しています（質問 {question_count} 件）。")


def save_button(export: bytes | None, notice: Notice | None) -> None:
    """The download of the canonical export (disabled while the draft has issues)."""
    st.download_button(
        "保存（JSON をダウンロード）",
        data=export or b"",
        file_name="customized_question_set.json",
        mime="application/json",
        disabled=export is None,
        on_click="ignore",
        key="qs_download",
    )
    if export is None:
        st.caption("エラーをすべて解消すると保存できます。")
        return
    st.caption("UTF-8・契約のキー順・インデント2・末尾改行の正規形式で保存します。")
    if notice is not None:
        show_notice(notice)


# --- the fields --------------------------------------------------------------------------------------


def header_inputs(draft: Draft, version: int) -> tuple[dict[str, str], dict[str, Any]]:
    """The header text inputs: their values, and an empty slot below each for its issues."""
    values: dict[str, str] = {}
    slots: dict[str, Any] = {}
    columns = st.columns(2)
    for i, (name, label) in enumerate(HEADER_LABELS.items()):
        with columns[i % 2]:
            values[name] = st.text_input(
                label, value=getattr(draft, name), key=f"qs_{name}_{version}"
            )
            slots[name] = st.empty()
    return values, slots


def metadata_inputs(draft: Draft, version: int) -> tuple[dict[str, str], dict[str, Any]]:
    """The metadata fields (a non-text value is shown read-only, as JSON) and their slots."""
    values: dict[str, str] = {}
    slots: dict[str, Any] = {}
    meta = draft.metadata or {}
    with st.expander("metadata（任意・非契約）", expanded=draft.metadata is not None):
        st.caption(
            "生成元・生成日時・補足などの任意情報です。評価結果・正誤判断・除外理由・"
            "PASS / FAIL / Gate の判定は書けません（下流はこの項目に依存しません）。"
        )
        for key in METADATA_KEYS:
            label, current, widget_key = (
                METADATA_LABELS[key],
                meta.get(key),
                f"qs_meta_{key}_{version}",
            )
            if current is not None and not isinstance(current, str):
                shown = json.dumps(current, ensure_ascii=False)
                st.text_input(label, value=shown, disabled=True, key=widget_key)
            else:
                widget = st.text_area if key == "note" else st.text_input
                values[key] = widget(label, value=current or "", key=widget_key)
            slots[f"metadata.{key}"] = st.empty()
        others = {k: v for k, v in meta.items() if k not in METADATA_KEYS}
        if others:
            st.caption("その他の metadata 項目（そのまま保存されます）")
            st.json(others)
        slots["metadata"] = st.empty()
    return values, slots


def show_field_issues(slots: dict[str, Any], by_field: dict[str, list[str]]) -> None:
    for name, messages in by_field.items():
        if name in slots:
            slots[name].error("／".join(messages))


# --- the question table ------------------------------------------------------------------------------


def rows_frame(
    rows: list[DraftRow], row_issues: dict[int, list[str]] | None = None
) -> pd.DataFrame:
    """The editor's table: order 1..n, id, text, issues, hidden extra keys (JSON)."""
    errors = row_issues or {}
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


def rows_editor(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    return st.data_editor(
        frame,
        key=key,
        num_rows="dynamic",
        hide_index=True,
        column_config={
            COL_ORDER: st.column_config.NumberColumn("順番", step=0.5, width="small"),
            COL_ID: st.column_config.TextColumn("question_id", width="medium"),
            COL_TEXT: st.column_config.TextColumn("question_text（質問文）", width="large"),
            COL_ERRORS: st.column_config.TextColumn("エラー", disabled=True, width="medium"),
            COL_EXTRA: None,
        },
    )


def table_is_stale(key: str, edited: pd.DataFrame, fresh: pd.DataFrame) -> bool:
    """Whether the table must be drawn anew: it was edited (the edits are now in the draft, and
    an editor must never accumulate edits on data that already contains them), or what it shows
    differs from the draft (new order, numbering or issues)."""
    delta = st.session_state.get(key) or {}
    edited_now = any(delta.get(k) for k in ("edited_rows", "added_rows", "deleted_rows"))
    return edited_now or not same_frame(edited, fresh)


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
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) and not json_depth_exceeds(data) else {}


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
    return [
        DraftRow(
            question_id=_text(rec.get(COL_ID)),
            question_text=_text(rec.get(COL_TEXT)),
            extra=_extra(rec.get(COL_EXTRA)),
        )
        for _, rec in keyed
    ]


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


__all__ = [
    "COLUMNS",
    "COL_ERRORS",
    "COL_EXTRA",
    "COL_ID",
    "COL_ORDER",
    "COL_TEXT",
    "display_path",
    "header_inputs",
    "issues_frame",
    "metadata_inputs",
    "rows_editor",
    "rows_frame",
    "rows_from_frame",
    "same_frame",
    "save_button",
    "show_field_issues",
    "show_issues",
    "show_notice",
    "show_opened",
    "show_validation",
    "table_is_stale",
]
