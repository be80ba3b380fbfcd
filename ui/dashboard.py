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

from core.audit import AuditRecord
from core.evaluation.audit_stats import (
    FLAG_LABELS,
    MODE_LABELS,
    PAGE_LABELS,
    answer_modes,
    daily,
    flag_rates_long,
    labelled,
    overview,
)
from core.evaluation.logs import AuditLog, read_record
from core.settings import Settings
from ui.auth import role_label
from ui.resources import settings, shown_time

MAX_DRILL_RECORDS = 200
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~])")


def plain_label(text: str) -> str:
    """Text for a Markdown label (expander, metric): special characters escaped."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """CSV with a BOM, so that spreadsheet programs read the Japanese text as UTF-8."""
    return frame.to_csv(index=False).encode("utf-8-sig")


def table(frame: pd.DataFrame, key: str, filename: str, **kwargs) -> None:
    """A dataframe and its CSV download, both as the user reads them (``labelled``: Japanese
    column names, codes as labels, times in the workbench's time zone)."""
    shown = labelled(frame, settings().timezone)
    st.dataframe(shown, hide_index=True, key=f"df-{key}", **kwargs)
    st.download_button(
        "CSV をダウンロード",
        csv_bytes(shown),
        file_name=filename,
        mime="text/csv",
        key=f"csv-{key}",
        icon="⬇️",
    )


def chart(spec: alt.Chart | alt.LayerChart, key: str) -> None:
    st.altair_chart(spec, width="stretch", key=f"chart-{key}")


def fmt_pct(value: float | None) -> str:
    return "—" if value is None or pd.isna(value) else f"{value * 100:.1f}%"


def fmt_sec(value: float | None) -> str:
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
    if not pages:  # Streamlit's own empty-list text is English
        st.caption("ページ: 記録のあるページはありません。")
        return []
    return st.multiselect(
        "ページ",
        options=pages,
        default=pages,
        format_func=lambda p: PAGE_LABELS.get(p, p),
        key=key,
        placeholder="ページを選択",
    )


def user_filter(users: dict[str, str], key: str = "dash_users") -> list[str] | None:
    """The users (subjects) whose questions to show; ``None`` (all) when nobody is picked."""
    if not users:
        return None
    picked = st.multiselect(
        "利用者",
        options=list(users),
        format_func=lambda u: users[u] if users[u] == u else f"{users[u]}（{u}）",
        key=key,
        placeholder="すべての利用者",
    )
    return picked or None


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
            first_bad_line=chain["first_bad_line"].map(lambda v: "" if pd.isna(v) else str(int(v))),
            reason=chain["reason"].fillna(""),
        )
        table(
            shown[["file", "lines", "状態", "first_bad_line", "reason"]], "chain", "audit_chain.csv"
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
    c[2].metric("レイテンシ p50", fmt_sec(ov.latency_p50))
    c[3].metric("レイテンシ p95", fmt_sec(ov.latency_p95))
    c = st.columns(4)
    c[0].metric("根拠不足率", fmt_pct(ov.rates["insufficient_evidence"]))
    c[1].metric("危険操作率", fmt_pct(ov.rates["dangerous_operation"]))
    c[2].metric("曖昧な質問の率", fmt_pct(ov.rates["ambiguous_query"]))
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
    table(days, "daily", "audit_daily.csv")
    render_audit_drilldown(frame, settings)


def _record_label(row: pd.Series) -> str:
    page = PAGE_LABELS.get(row["page"], row["page"])
    query = " ".join(str(row["query"] or "").split())
    query = query if len(query) <= 40 else query[:39] + "…"
    return f"{shown_time(row['timestamp'], seconds=True)}｜{page}｜{query}"


def render_audit_drilldown(frame: pd.DataFrame, settings: Settings) -> None:
    st.markdown("**個別の記録**")
    needle = st.text_input("質問で絞り込み", key="dash_audit_search", placeholder="例: VPN")
    shown = frame
    if needle.strip():
        shown = shown[shown["query"].fillna("").str.contains(needle.strip(), regex=False)]
    shown = shown.sort_values("timestamp", ascending=False).head(MAX_DRILL_RECORDS)
    records = shown[
        [
            "timestamp",
            "user_name",
            "role",
            "client",
            "page",
            "query",
            "answer_mode",
            "latency_sec",
            *FLAG_LABELS,
            "file",
            "line",
        ]
    ]
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


def render_audit_record(record: AuditRecord) -> None:
    on = [FLAG_LABELS.get(k, k) for k, v in record.flags.items() if v]
    mode = MODE_LABELS.get(record.answer_mode, record.answer_mode)
    st.caption(
        f"{shown_time(record.timestamp, seconds=True)} ／ {PAGE_LABELS.get(record.page, record.page)}"
        f" ／ 回答モード: {mode} ／ {record.processing_time_sec} 秒"
        f" ／ フラグ: {'、'.join(on) or 'なし'}"
    )
    st.caption(
        f"質問した利用者: {record.user_name}（{record.user}）／ 役割: {role_label(record.role)}"
        f" ／ 接続元: {record.client or '不明'}"
    )
    st.markdown("質問")
    st.text(record.query)
    st.markdown("回答")
    st.text(record.answer)
    results = record.search_results
    st.markdown(f"引用元・検索結果（{len(results)} 件）")
    for i, item in enumerate(results, start=1):
        source = item.ref or item.file or item.chunk_id or "?"
        label = f"[{item.n if item.n is not None else i}] {source}"
        label += f" > {item.heading}" if item.heading and item.heading not in source else ""
        label += f"（スコア {item.score:.2f}）"
        with st.expander(plain_label(label)):
            st.text(item.excerpt)
            st.caption(f"chunk_id: {item.chunk_id or '—'}")
    with st.expander("記録の全体（JSON）"):
        st.json(record.model_dump(mode="json"), expanded=False)
