"""Dashboard: KPIs and evaluation results from the logs (audit, WAL, evaluations, runs, Recall@K)."""

from datetime import date, timedelta

import streamlit as st

from core.evaluation.audit_stats import chain_status, filter_frame, user_names
from core.evaluation.kpi import load_interview_kpis
from core.evaluation.logs import audit_files, load_audit_log, log_day
from core.evaluation.recall import load_recall_results, recall_dir
from core.evaluation.results import load_results
from core.evaluation.runs import load_question_set_runs
from ui import dashboard as ui
from ui import dashboard_results as results
from ui.auth import require
from ui.resources import settings as get_settings

principal = require("reviewer")
settings = get_settings()

st.title("📊 ダッシュボード")
st.caption("監査ログ・評価結果・Recall@K・インタビュー KPI・質問セットの実行結果")

today = date.today()
days = [d for p in audit_files(settings.logs_dir) if (d := log_day(p))]
default = (min(days) if days else today - timedelta(days=29), max([today, *days]))

with st.sidebar:
    st.header("絞り込み")
    start, end = ui.date_range(default)

log = load_audit_log(settings.logs_dir, start, end)
with st.sidebar:
    pages = ui.page_filter(sorted(set(log.frame["page"])) if not log.frame.empty else [])
    users = ui.user_filter(user_names(log.frame))
    st.caption(
        f"監査ログ: {len(log.files)} ファイル・{log.records:,} 件。"
        "ページと利用者の絞り込みは監査ログに、期間はすべてのタブに適用されます。"
    )

tab_audit, tab_eval, tab_recall, tab_interview, tab_qs = st.tabs(
    ["監査ログ", "評価結果", "Recall@K", "インタビュー KPI", "質問セット実行"]
)
with tab_audit:
    frame = filter_frame(log.frame, pages=pages, users=users)
    ui.render_audit(log, frame, chain_status(log.files), settings)
with tab_eval:
    runs, problems = load_results(settings.eval_dir)
    runs = [(p, r) for p, r in runs if start.isoformat() <= r.created_at[:10] <= end.isoformat()]
    results.render_evaluation(runs, problems)
with tab_recall:
    summary, long, problems = load_recall_results(recall_dir(settings.eval_dir), start, end)
    results.render_recall(summary, long, problems, settings)
with tab_interview:
    results.render_interview(load_interview_kpis(settings.wal_dir, start, end))
with tab_qs:
    results.render_question_sets(load_question_set_runs(settings, start, end))
