"""Dashboard rendering (Streamlit-only): tables with CSV download, Altair charts, drill-downs.

Every table goes through ``table()`` (a dataframe and a CSV download). Document and log text is
shown with ``st.text`` / ``st.json`` (never as HTML) and expander labels are Markdown-escaped.
"""

from __future__ import annotations

import re
from datetime import date

import altair as alt
import pandas as pd
import streamlit as st

from core.evaluation.audit_stats import (
    FLAG_LABELS,
    MODE_LABELS,
    PAGE_LABELS,
    answer_modes,
    daily,
    flag_rates_long,
    overview,
)
from core.evaluation.checks import CHECK_LABELS
from core.evaluation.dataset import CATEGORY_LABELS
from core.evaluation.kpi import DOMAIN_LABELS, InterviewKPIs
from core.evaluation.logs import AuditLog, read_record
from core.evaluation.recall import recall_dir
from core.evaluation.results import EvaluationRun, cases_frame, runs_frame, scores_frame
from core.evaluation.runs import QuestionSetRuns
from core.evaluation.scores import CRITERIA, CRITERION_LABELS, JUDGE_LABELS
from core.settings import Settings

MAX_DRILL_RECORDS = 200
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~])")


def plain_label(text: str) -> str:
    """Text for a Markdown label (expander, metric): special characters escaped."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """CSV with a BOM, so that spreadsheet programs read the Japanese text as UTF-8."""
    return frame.to_csv(index=False).encode("utf-8-sig")


def table(frame: pd.DataFrame, key: str, filename: str, **kwargs) -> None:
    """A dataframe and its CSV download."""
    st.dataframe(frame, hide_index=True, key=f"df-{key}", **kwargs)
    st.download_button(
        "CSV をダウンロード",
        csv_bytes(frame),
        file_name=filename,
        mime="text/csv",
        key=f"csv-{key}",
        icon="⬇️",
    )


def chart(spec: alt.Chart | alt.LayerChart, key: str) -> None:
    st.altair_chart(spec, width="stretch", key=f"chart-{key}")


def _pct(value: float | None) -> str:
    return "—" if value is None or pd.isna(value) else f"{value * 100:.1f}%"


def _sec(value: float | None) -> str:
    return "—" if value is None or pd.isna(value) else f"{value:.2f} 秒"


# --- filters --------------------------------------------------------------------------------


def date_range(default: tuple[date, date], key: str = "dash_dates") -> tuple[date, date]:
    picked = st.date_input("期間", value=default, key=key, format="YYYY/MM/DD")
    if isinstance(picked, tuple | list):
        if len(picked) == 2:
            return picked[0], picked[1]
        if len(picked) == 1:
            return picked[0], picked[0]
        return default
    return picked, picked


def page_filter(pages: list[str], key: str = "dash_pages") -> list[str]:
    return st.multiselect(
        "ページ",
        options=pages,
        default=pages,
        format_func=lambda p: PAGE_LABELS.get(p, p),
        key=key,
    )


# --- audit logs ---------------------------------------------------------------------------------


def render_read_problems(log: AuditLog) -> None:
    if not log.bad_count:
        return
    st.warning(
        f"読み込めない行を {log.bad_count:,} 行スキップしました"
        f"（全 {log.lines:,} 行中。壊れた行・途中で切れた行・監査レコードでない行）。"
    )
    with st.expander("スキップした行", expanded=False):
        bad = pd.DataFrame(
            [{"ファイル": b.file, "行": b.line, "理由": b.reason} for b in log.bad_lines]
        )
        table(bad, "bad-lines", "skipped_lines.csv")


def render_chain(chain: pd.DataFrame) -> None:
    if chain.empty:
        return
    broken = chain[~chain["ok"]]
    if broken.empty:
        st.success(f"監査ログのハッシュチェーン: {len(chain)} ファイルすべて正常です。", icon="🔒")
    else:
        st.error(
            f"監査ログのハッシュチェーン: {len(broken)}/{len(chain)} ファイルで改ざん・欠落を検出しました。",
            icon="🚨",
        )
        for message in broken["message"]:
            st.text(message)
    with st.expander("監査チェーンの状態（ファイル別）", expanded=not broken.empty):
        shown = chain.assign(
            状態=chain["ok"].map({True: "正常", False: "異常"}),
            first_bad_line=chain["first_bad_line"].map(lambda v: "" if pd.isna(v) else int(v)),
            reason=chain["reason"].fillna(""),
        )
        table(
            shown[["file", "lines", "状態", "first_bad_line", "reason"]].rename(
                columns={
                    "file": "ファイル",
                    "lines": "検証済み行数",
                    "first_bad_line": "異常の行",
                    "reason": "理由",
                }
            ),
            "chain",
            "audit_chain.csv",
        )


def render_audit(
    log: AuditLog, frame: pd.DataFrame, chain: pd.DataFrame, settings: Settings
) -> None:
    render_read_problems(log)
    render_chain(chain)
    if frame.empty:
        st.info("この期間・ページの監査ログはありません。")
        return
    ov = overview(frame)
    c = st.columns(4)
    c[0].metric("質問数", f"{ov.questions:,}")
    c[1].metric("セッション数", f"{ov.sessions:,}")
    c[2].metric("レイテンシ p50", _sec(ov.latency_p50))
    c[3].metric("レイテンシ p95", _sec(ov.latency_p95))
    c = st.columns(4)
    c[0].metric("根拠不足率", _pct(ov.rates["insufficient_evidence"]))
    c[1].metric("危険操作率", _pct(ov.rates["dangerous_operation"]))
    c[2].metric("曖昧な質問の率", _pct(ov.rates["ambiguous_query"]))
    c[3].metric("遅い回答（5 秒超）", f"{ov.slow:,}")
    c = st.columns(4)
    c[0].metric("トークン", f"{ov.tokens:,}")
    c[1].metric("コスト (USD)", f"${ov.cost_usd:.4f}")

    days = daily(frame)
    left, right = st.columns(2)
    with left:
        st.markdown("**質問数（日別）**")
        chart(
            alt.Chart(days)
            .mark_bar()
            .encode(
                x=alt.X("date:O", title="日付"),
                y=alt.Y("questions:Q", title="質問数"),
                tooltip=["date:O", "questions:Q"],
            ),
            "questions",
        )
    with right:
        st.markdown("**レイテンシ（日別 p50 / p95）**")
        lat = days.melt(
            id_vars="date",
            value_vars=["latency_p50", "latency_p95"],
            var_name="指標",
            value_name="秒",
        )
        lat["指標"] = lat["指標"].map({"latency_p50": "p50", "latency_p95": "p95"})
        chart(
            alt.Chart(lat)
            .mark_line(point=True)
            .encode(
                x=alt.X("date:O", title="日付"),
                y=alt.Y("秒:Q"),
                color=alt.Color("指標:N"),
                tooltip=["date:O", "指標:N", alt.Tooltip("秒:Q", format=".2f")],
            ),
            "latency",
        )
    left, right = st.columns(2)
    with left:
        st.markdown("**フラグ率（日別）**")
        chart(
            alt.Chart(flag_rates_long(days))
            .mark_line(point=True)
            .encode(
                x=alt.X("date:O", title="日付"),
                y=alt.Y("rate:Q", title="割合", axis=alt.Axis(format="%")),
                color=alt.Color("flag:N", title="フラグ"),
                tooltip=["date:O", "flag:N", alt.Tooltip("rate:Q", format=".1%")],
            ),
            "flags",
        )
    with right:
        st.markdown("**回答モード（日別）**")
        chart(
            alt.Chart(answer_modes(frame))
            .mark_bar()
            .encode(
                x=alt.X("date:O", title="日付"),
                y=alt.Y("questions:Q", title="質問数", stack="zero"),
                color=alt.Color("answer_mode_label:N", title="回答モード"),
                tooltip=["date:O", "answer_mode_label:N", "questions:Q"],
            ),
            "modes",
        )
    if ov.tokens or ov.cost_usd:
        st.markdown("**トークンとコスト（日別）**")
        base = alt.Chart(days).encode(x=alt.X("date:O", title="日付"))
        chart(
            alt.layer(
                base.mark_bar(opacity=0.6).encode(y=alt.Y("total_tokens:Q", title="トークン")),
                base.mark_line(point=True, color="#d62728").encode(
                    y=alt.Y("cost_usd:Q", title="コスト (USD)")
                ),
            ).resolve_scale(y="independent"),
            "tokens",
        )
    st.markdown("**日別の集計**")
    table(
        days.rename(
            columns={
                "date": "日付",
                "questions": "質問数",
                "latency_p50": "p50 (秒)",
                "latency_p95": "p95 (秒)",
                "insufficient_evidence_rate": "根拠不足率",
                "dangerous_operation_rate": "危険操作率",
                "ambiguous_query_rate": "曖昧率",
                "total_tokens": "トークン",
                "cost_usd": "コスト (USD)",
            }
        ),
        "daily",
        "audit_daily.csv",
    )
    render_audit_drilldown(frame, settings)


def _record_label(row: pd.Series) -> str:
    page = PAGE_LABELS.get(row["page"], row["page"])
    query = " ".join(str(row["query"] or "").split())
    query = query if len(query) <= 40 else query[:39] + "…"
    return f"{str(row['timestamp'])[:19].replace('T', ' ')}｜{page}｜{query}"


def render_audit_drilldown(frame: pd.DataFrame, settings: Settings) -> None:
    st.markdown("**個別の記録**")
    needle = st.text_input("質問で絞り込み", key="dash_audit_search", placeholder="例: VPN")
    shown = frame
    if needle.strip():
        shown = shown[shown["query"].fillna("").str.contains(needle.strip(), regex=False)]
    shown = shown.sort_values("timestamp", ascending=False).head(MAX_DRILL_RECORDS)
    records = shown[
        ["timestamp", "page", "query", "answer_mode", "latency_sec", *FLAG_LABELS, "file", "line"]
    ].rename(
        columns={
            "timestamp": "日時",
            "page": "ページ",
            "query": "質問",
            "answer_mode": "回答モード",
            "latency_sec": "処理時間 (秒)",
            **FLAG_LABELS,
            "file": "ファイル",
            "line": "行",
        }
    )
    table(records, "records", "audit_records.csv")
    if shown.empty:
        st.caption("該当する記録はありません。")
        return
    labels = {i: _record_label(row) for i, row in shown.iterrows()}
    picked = st.selectbox(
        f"記録を選択（新しい順に最大 {MAX_DRILL_RECORDS} 件）",
        options=list(labels),
        format_func=labels.get,
        key="dash_audit_record",
    )
    if picked is None:
        return
    row = shown.loc[picked]
    record = read_record(settings.logs_dir / row["file"], int(row["line"]))
    if record is None:
        st.warning("この記録を読み込めませんでした（ファイルが変更された可能性があります）。")
        return
    render_audit_record(record)


def render_audit_record(record: dict) -> None:
    flags = record.get("flags") if isinstance(record.get("flags"), dict) else {}
    on = [FLAG_LABELS.get(k, k) for k, v in flags.items() if v]
    mode = MODE_LABELS.get(str(record.get("answer_mode")), str(record.get("answer_mode")))
    st.caption(
        f"{record.get('timestamp', '')} ／ {PAGE_LABELS.get(str(record.get('page')), record.get('page'))}"
        f" ／ 回答モード: {mode} ／ {record.get('processing_time_sec', '—')} 秒"
        f" ／ フラグ: {'、'.join(on) or 'なし'}"
    )
    st.markdown("質問")
    st.text(str(record.get("query", "")))
    st.markdown("回答")
    st.text(str(record.get("answer", "")))
    results = record.get("search_results")
    results = results if isinstance(results, list) else []
    st.markdown(f"引用元・検索結果（{len(results)} 件）")
    for n, item in enumerate(results, start=1):
        if not isinstance(item, dict):
            continue
        source = item.get("file") or item.get("source") or item.get("chunk_id") or "?"
        heading = item.get("heading") or ""
        score = item.get("score")
        label = f"[{n}] {source}" + (f" > {heading}" if heading else "")
        if isinstance(score, int | float):
            label += f"（スコア {score:.2f}）"
        with st.expander(plain_label(label)):
            st.text(str(item.get("excerpt", "")))
            st.caption(f"chunk_id: {item.get('chunk_id', '—')}")
    with st.expander("記録の全体（JSON）"):
        st.json(record, expanded=False)


# --- evaluation results -----------------------------------------------------------------------


def _run_label(run: EvaluationRun) -> str:
    state = "" if run.status == "completed" else "（実行中／中断）"
    return f"{run.created_at[:16].replace('T', ' ')}｜{JUDGE_LABELS[run.judge]}{state}"


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
            "合格したケース", f"{pl.passed_cases}/{pl.total}", _pct(pl.pass_rate), delta_color="off"
        )
        c[2].metric("平均スコア", "—" if s.overall.average is None else f"{s.overall.average:.1f}")
        c[3].metric("確定チェック全合格", _pct(s.overall.checks_pass_rate))
        c = st.columns(2)
        c[0].metric(
            "根拠不足ケースの正しい拒否",
            f"{s.refusal.correctly_refused}/{s.refusal.refusal_expected}",
            _pct(s.refusal.correct_refusal_rate),
            delta_color="off",
        )
        c[1].metric(
            "回答可能ケースの誤った拒否",
            f"{s.refusal.wrongly_refused}/{s.refusal.answerable}",
            _pct(s.refusal.wrong_refusal_rate),
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
            "Recall@K の結果がありません。`python -m core wiki eval --dev dev.jsonl --json` の出力を"
            f" {recall_dir(settings.eval_dir)} に JSON ファイルとして保存すると、インデックスの構築ごとに表示されます。"
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
    ticks = (
        alt.Chart(status)
        .mark_tick(color="black", thickness=2)
        .encode(x="kpi_label:N", y="target:Q", tooltip=["kpi_label:N", "op:N", "target:Q"])
    )
    st.caption("棒: 各ドメインの値（緑は目標達成、赤は未達）／ 黒い線: 目標値")
    chart(alt.layer(bars, ticks).properties(height=320), "kpi")
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
                f"{r.started_at[:19]}｜{r.question_set_id}｜{r.target_label}"
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
