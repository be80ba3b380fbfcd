"""Streamlit rendering of the question-set page's runs: a run, how runs are listed and chosen
for a comparison, and the comparison. All text goes through plain, escaped widgets."""

from __future__ import annotations

import streamlit as st

from core.errors import WorkbenchError
from core.question_sets.diff import RunDiff, citation_label
from core.question_sets.runner import RunFile, read_run
from core.question_sets.targets import TARGET_LABELS
from ui.resources import shown_time

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
        f"{shown_time(run.started_at, seconds=True)}・{TARGET_LABELS.get(run.target, run.target)}・"
        f"{run.question_set_id}・{len(run.records)}問・{RUN_STATUS_JA.get(run.status, run.status)}"
    )


def choose_two_runs(runs: list[str]) -> tuple[str, str] | None:
    """Two different runs to compare (earlier, later), or None with a word on why not."""
    if len(runs) < 2:
        st.info("比較には実行結果が2件以上必要です。「実行」タブで質問セットを実行してください。")
        return None
    labels = {p: run_label(p) for p in runs}
    col_a, col_b = st.columns(2)
    run_a = col_a.selectbox("比較元（前）", runs, index=1, format_func=labels.get, key="qs_cmp_a")
    run_b = col_b.selectbox("比較先（後）", runs, index=0, format_func=labels.get, key="qs_cmp_b")
    if run_a == run_b:
        st.info("異なる2つの実行結果を選んでください。")
        return None
    return run_a, run_b


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
    "RUN_STATUS_JA",
    "STATUS_JA",
    "choose_two_runs",
    "render_comparison",
    "render_run",
    "run_label",
]
