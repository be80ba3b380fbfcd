"""Dashboard rendering of the result tabs (Streamlit-only): evaluation runs, Recall@K,
interview KPIs and question-set runs. Shared helpers (``table``, ``chart``, labels) live in
``ui.dashboard``; the same rules hold (text never rendered as HTML, labels Markdown-escaped).
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from core.evaluation.audit_stats import MODE_LABELS
from core.evaluation.checks import CHECK_LABELS
from core.evaluation.dataset import CATEGORY_LABELS
from core.evaluation.kpi import DOMAIN_LABELS, InterviewKPIs
from core.evaluation.recall import recall_dir
from core.evaluation.results import EvaluationRun, cases_frame, runs_frame, scores_frame
from core.evaluation.runs import QuestionSetRuns
from core.evaluation.scores import CRITERIA, CRITERION_LABELS, JUDGE_LABELS
from core.settings import Settings
from ui.dashboard import chart, fmt_pct, plain_label, table
from ui.resources import shown_time

# --- evaluation results -----------------------------------------------------------------------


def _run_label(run: EvaluationRun) -> str:
    state = "" if run.status == "completed" else "（実行中／中断）"
    return f"{shown_time(run.created_at)}｜{JUDGE_LABELS[run.judge]}{state}"


def render_evaluation(runs: list, problems: list[str]) -> None:
    for message in problems:
        st.warning(message)
    if not runs:
        st.info(
            "評価結果がありません。`python -m core eval run` で評価データセットを実行すると表示されます。"
        )
        return
    ordered = list(reversed(runs))  # newest first
    index = st.selectbox(
        "評価の実行",
        options=list(range(len(ordered))),
        format_func=lambda i: _run_label(ordered[i][1]),
        key="dash_eval_run",
    )
    _, run = ordered[index or 0]
    s = run.summary
    st.caption(
        f"判定方式: {run.judge_label}"
        + (f"（{run.judge_model}）" if run.judge_model else "")
        + f" ／ 回答モード: {MODE_LABELS.get(run.answer_mode, run.answer_mode)}"
        + f" ／ データセット v{run.dataset.version}・{run.dataset.cases} 件"
    )
    if s is None:
        st.warning("この実行は完了していません（途中までの結果です）。")
    else:
        c = st.columns(4)
        pl = s.pass_line
        c[0].metric("合格ライン", "合格" if pl.passed else "不合格")
        c[1].metric(
            "合格したケース",
            f"{pl.passed_cases}/{pl.total}",
            fmt_pct(pl.pass_rate),
            delta_color="off",
        )
        c[2].metric("平均スコア", "—" if s.overall.average is None else f"{s.overall.average:.1f}")
        c[3].metric("確定チェック全合格", fmt_pct(s.overall.checks_pass_rate))
        c = st.columns(2)
        c[0].metric(
            "根拠不足ケースの正しい拒否",
            f"{s.refusal.correctly_refused}/{s.refusal.refusal_expected}",
            fmt_pct(s.refusal.correct_refusal_rate),
            delta_color="off",
        )
        c[1].metric(
            "回答可能ケースの誤った拒否",
            f"{s.refusal.wrongly_refused}/{s.refusal.answerable}",
            fmt_pct(s.refusal.wrong_refusal_rate),
            delta_color="off",
        )
        scores = scores_frame([run])
        heat = scores[scores["criterion"] != "average"]
        st.markdown("**カテゴリ × 観点のスコア**")
        criteria_order = [CRITERION_LABELS[c] for c in CRITERIA]
        category_order = [CATEGORY_LABELS.get(c, c) for c in s.by_category] + ["全体"]
        base = alt.Chart(heat).encode(
            x=alt.X(
                "criterion_label:N",
                title="観点",
                sort=criteria_order,
                axis=alt.Axis(labelAngle=0),
            ),
            y=alt.Y("category_label:N", title="カテゴリ", sort=category_order),
        )
        chart(
            base.mark_rect().encode(
                color=alt.Color(
                    "score:Q",
                    title="スコア",
                    scale=alt.Scale(domain=[0, 100], scheme="redyellowgreen"),
                ),
                tooltip=[
                    "category_label:N",
                    "criterion_label:N",
                    alt.Tooltip("score:Q", format=".1f"),
                ],
            )
            + base.mark_text(baseline="middle").encode(text=alt.Text("score:Q", format=".0f")),
            "eval-heat",
        )
        pivot = heat.pivot_table(index="category_label", columns="criterion_label", values="score")
        pivot = pivot.reindex(index=[c for c in category_order if c in pivot.index])
        table(
            pivot[[c for c in criteria_order if c in pivot.columns]]
            .reset_index()
            .rename(columns={"category_label": "カテゴリ"}),
            "eval-scores",
            "evaluation_scores.csv",
        )
    if len(runs) > 1:
        st.markdown("**実行ごとの推移（カテゴリ別平均）**")
        trend = scores_frame(r for _, r in runs)
        trend = trend[trend["criterion"] == "average"]
        chart(
            alt.Chart(trend)
            .mark_line(point=True)
            .encode(
                x=alt.X("created_at:O", title="実行日時"),
                y=alt.Y("score:Q", title="平均スコア", scale=alt.Scale(domain=[0, 100])),
                color=alt.Color("category_label:N", title="カテゴリ"),
                tooltip=["created_at:O", "category_label:N", alt.Tooltip("score:Q", format=".1f")],
            ),
            "eval-trend",
        )
    st.markdown("**実行の一覧**")
    table(runs_frame(runs).iloc[::-1], "eval-runs", "evaluation_runs.csv")
    st.markdown("**ケース別の結果**")
    cases = cases_frame(run)
    table(cases, "eval-cases", f"evaluation_cases_{run.run_id}.csv")
    render_case_drilldown(run)


def render_case_drilldown(run: EvaluationRun) -> None:
    if not run.results:
        return
    ids = [r.id for r in run.results]
    picked = st.selectbox("ケースを選択", options=ids, key="dash_eval_case")
    r = next(x for x in run.results if x.id == picked)
    st.caption(
        f"{CATEGORY_LABELS.get(r.category, r.category)} ／ {'合格' if r.passed else '不合格'}"
        + (f" ／ 平均 {r.scores.average:.1f}（{r.scores.judge_label}）" if r.scores else "")
    )
    if r.error:
        st.error(r.error)
    if r.conversation_context:
        st.markdown("会話の文脈")
        st.text("\n".join(f"{t.get('role')}: {t.get('content')}" for t in r.conversation_context))
    st.markdown("質問")
    st.text(r.query)
    st.markdown("回答")
    st.text(r.answer)
    if r.checks:
        st.markdown("確定チェック")
        table(
            pd.DataFrame(
                [
                    {
                        "チェック": CHECK_LABELS.get(c.name, c.name),
                        "結果": "合格" if c.passed else "不合格",
                        "詳細": c.detail,
                    }
                    for c in r.checks
                ]
            ),
            f"checks-{r.id}",
            f"evaluation_checks_{r.id}.csv",
        )
    if r.scores:
        st.markdown("判定")
        table(
            pd.DataFrame(
                [{"観点": CRITERION_LABELS[c], "スコア": getattr(r.scores, c)} for c in CRITERIA]
            ),
            f"scores-{r.id}",
            f"evaluation_scores_{r.id}.csv",
        )
        st.text(r.scores.reasoning)
    for w in r.warnings:
        st.warning(w)
    for c in r.citations:
        mark = "引用" if c.cited else "未引用"
        with st.expander(
            plain_label(f"[{c.n}] {c.file} > {c.heading}（{mark}、スコア {c.score:.2f}）")
        ):
            st.text(c.excerpt)


# --- Recall@K -----------------------------------------------------------------------------------


def render_recall(
    summary: pd.DataFrame, long: pd.DataFrame, problems: list[str], settings: Settings
) -> None:
    for message in problems:
        st.warning(message)
    if summary.empty:
        st.info(
            "Recall@K の結果がありません。`python -m core wiki eval --dev dev.jsonl` を実行すると、"
            f"結果が自動的に {recall_dir(settings.eval_dir)} に保存され、ここにインデックスの構築ごとに"
            "表示されます。"
        )
        return
    st.markdown("**Recall@K（インデックスの構築別）**")
    latest = long.sort_values("created_at").groupby(["build", "k"], as_index=False).last()
    chart(
        alt.Chart(latest)
        .mark_line(point=True)
        .encode(
            x=alt.X("k:O", title="K", axis=alt.Axis(labelAngle=0)),
            y=alt.Y("recall:Q", title="Recall@K", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("build:N", title="インデックス"),
            tooltip=["build:N", "k:O", alt.Tooltip("recall:Q", format=".3f")],
        ),
        "recall",
    )
    if summary["created_at"].nunique() > 1:
        st.markdown("**推移**")
        chart(
            alt.Chart(long)
            .mark_line(point=True)
            .encode(
                x=alt.X("created_at:O", title="評価日時"),
                y=alt.Y("recall:Q", title="Recall", scale=alt.Scale(domain=[0, 1])),
                color=alt.Color("k:O", title="K"),
                tooltip=["created_at:O", "build:N", "k:O", alt.Tooltip("recall:Q", format=".3f")],
            ),
            "recall-trend",
        )
    table(summary, "recall", "recall_results.csv")


# --- interview KPIs -----------------------------------------------------------------------------


def render_interview(kpis: InterviewKPIs) -> None:
    if not kpis.available:
        st.warning(kpis.message)
        return
    if kpis.bad_lines:
        tail = "（最後の行が途中で切れています）" if kpis.truncated_tail else ""
        st.warning(f"WAL の読み込めない行を {kpis.bad_lines} 行スキップしました{tail}。")
    if kpis.domains.empty:
        st.info("この期間のインタビューの記録（WAL）はありません。")
        return
    targets = kpis.targets
    st.markdown("**ドメイン別 KPI と目標**")
    shown = targets.assign(
        目標=targets["op"].map({">=": "≥ ", "<=": "≤ "})
        + targets["target"].map(lambda t: f"{t:.2f}"),
        達成=targets["met"].map({True: "✅ 達成", False: "❌ 未達"}).fillna("—"),
        値=targets["value"].map(lambda v: "—" if v is None or pd.isna(v) else f"{v:.3f}"),
    )
    table(
        shown[["domain_label", "kpi_label", "値", "目標", "達成"]].rename(
            columns={"domain_label": "ドメイン", "kpi_label": "KPI"}
        ),
        "kpi-targets",
        "interview_kpi_targets.csv",
    )
    status = targets.assign(
        状態=targets["met"].map({True: "達成", False: "未達"}).fillna("不明"),
        ドメイン=targets["domain_label"],
    )
    bars = (
        alt.Chart(status)
        .mark_bar()
        .encode(
            x=alt.X("kpi_label:N", title=None, axis=alt.Axis(labelAngle=0)),
            xOffset="ドメイン:N",
            y=alt.Y("value:Q", title="値", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color(
                "状態:N",
                scale=alt.Scale(
                    domain=["達成", "未達", "不明"], range=["#2ca02c", "#d62728", "#999999"]
                ),
            ),
            tooltip=[
                "ドメイン:N",
                "kpi_label:N",
                alt.Tooltip("value:Q", format=".3f"),
                "op:N",
                "target:Q",
                "状態:N",
            ],
        )
    )
    # A value of 0 has no bar: every bar carries its value as text, so the 0 is seen.
    values = (
        alt.Chart(status)
        .mark_text(dy=-6, fontSize=11)
        .encode(
            x=alt.X("kpi_label:N", title=None),
            xOffset="ドメイン:N",
            y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1])),
            text=alt.Text("value:Q", format=".2f"),
        )
    )
    ticks = (
        alt.Chart(status)
        .mark_tick(color="black", thickness=2)
        .encode(x="kpi_label:N", y="target:Q", tooltip=["kpi_label:N", "op:N", "target:Q"])
    )
    st.caption("棒: 各ドメインの値（緑は目標達成、赤は未達）／ 黒い線: 目標値")
    chart(alt.layer(bars, values, ticks).properties(height=320), "kpi")
    st.markdown("**ドメイン別の集計**")
    domains = kpis.domains.assign(
        domain_label=kpis.domains["domain"].map(lambda d: DOMAIN_LABELS.get(d, d))
    )
    table(domains, "kpi-domains", "interview_kpi_domains.csv")
    st.markdown("**セッション別**")
    table(kpis.sessions, "kpi-sessions", "interview_kpi_sessions.csv")


# --- question-set runs --------------------------------------------------------------------------


def render_question_sets(runs: QuestionSetRuns) -> None:
    for message in runs.problems:
        st.warning(message)
    if runs.runs.empty:
        st.info(
            "この期間の質問セットの実行結果はありません（質問セットのページから実行できます）。"
        )
        return
    st.markdown("**実行の一覧**")
    table(runs.runs, "qs-runs", "question_set_runs.csv")
    chart(
        alt.Chart(runs.runs)
        .mark_bar()
        .encode(
            x=alt.X("started_at:O", title="開始日時"),
            y=alt.Y("mean_ms:Q", title="1問あたりの平均 (ms)"),
            color=alt.Color("target_label:N", title="対象"),
            tooltip=["run_id:N", "question_set_id:N", "answered:Q", "errors:Q", "mean_ms:Q"],
        ),
        "qs-runs",
    )
    ids = runs.runs["run_id"].tolist()
    labels = dict(
        zip(
            ids,
            (
                f"{shown_time(r.started_at, seconds=True)}｜{r.question_set_id}｜{r.target_label}"
                for r in runs.runs.itertuples()
            ),
            strict=True,
        )
    )
    picked = st.selectbox("実行を選択", options=ids, format_func=labels.get, key="dash_qs_run")
    records = (
        runs.records[runs.records["run_id"] == picked] if not runs.records.empty else runs.records
    )
    table(records, "qs-records", f"question_set_run_{picked}.csv")
