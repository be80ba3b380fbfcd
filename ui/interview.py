"""Streamlit helpers for the interview page: the cached interviewer and the panels.

All user and document text goes through plain Streamlit widgets (``st.text``, ``st.markdown``
without ``unsafe_allow_html`` on Markdown whose user text ``core.interview.artifacts`` escaped);
nothing is rendered as raw HTML.
"""

from __future__ import annotations

import streamlit as st

from core.access import LOCAL, Principal
from core.interview.artifacts import document_filename
from core.interview.domains import domain_labels
from core.interview.evidence import evidence_source
from core.interview.orchestrator import Interviewer, TurnResult
from core.interview.state import SessionState
from core.interview.store import SessionSummary
from core.settings import Settings

SESSION_KEY = "interview_session_id"
QUERY_KEY = "session"  # the open session's id in the URL: a reload comes back to it
NOTICES_KEY = "iv_notices"


@st.cache_resource(show_spinner=False)
def _interviewer(
    state_root: str, llm_key: tuple, neo4j: str | None, corpus: str | None
) -> Interviewer:
    settings = Settings()
    return Interviewer(settings, evidence=evidence_source(settings, corpus))


def interviewer(settings: Settings, corpus: str | None = None) -> Interviewer:
    """One interviewer per configuration (state folder, LLM, graph, corpus), shared by reruns."""
    llm_key = (settings.openai_base_url, bool(settings.openai_api_key), settings.chat_model)
    return _interviewer(str(settings.state_root), llm_key, settings.neo4j_uri, corpus)


def open_session(session_id: str, *, select: bool = True) -> None:
    """Make ``session_id`` the open session: in this browser session, in the URL (so a reload
    or a bookmark comes back to it) and, before the list is drawn, as its selection."""
    st.session_state[SESSION_KEY] = session_id
    if select:
        st.session_state["iv_pick"] = session_id
    st.query_params[QUERY_KEY] = session_id


def close_session() -> None:
    """Back to the start screen (the session stays saved)."""
    st.session_state.pop(SESSION_KEY, None)
    st.query_params.pop(QUERY_KEY, None)


def current_session_id(iv: Interviewer) -> str | None:
    """The open session: this browser session's, else the one named in the URL (a reload)."""
    sid = st.session_state.get(SESSION_KEY)
    if sid:
        if st.query_params.get(QUERY_KEY) != sid:
            st.query_params[QUERY_KEY] = sid
        return sid
    from_url = st.query_params.get(QUERY_KEY)
    if not from_url:
        return None
    if not iv.store.exists(from_url):
        st.warning("URL のセッションが見つかりません。新しく開始するか、一覧から選んでください。")
        st.query_params.pop(QUERY_KEY, None)
        return None
    open_session(from_url)
    return from_url


def newest_first(sessions: list[SessionSummary]) -> list[SessionSummary]:
    """The saved sessions, the most recently started first."""
    return sorted(sessions, key=lambda s: (s.created_at or "", s.updated_at or ""), reverse=True)


def stash_notices(notices: list[tuple[str, str]]) -> None:
    """Keep the answer's notices across the rerun that follows the end of the interview."""
    st.session_state[NOTICES_KEY] = notices


def show_notices() -> None:
    for kind, text in st.session_state.pop(NOTICES_KEY, []):
        (st.info if kind == "info" else st.warning)(text)


def end_actions(iv: Interviewer, result: TurnResult) -> None:
    """What makes sense once the document is written: a new interview, or coming back later."""
    st.subheader("次にできること")
    st.caption(
        "このインタビューは終了しました（回答欄はありません）。文書は上のボタンでダウンロードできます。"
        "このページの URL を開くか、サイドバーの「保存されたセッション」から選んで「再開」を押すと、"
        "いつでもこのセッションを開き直せます。"
    )
    if st.button("新しいインタビューを始める", key="iv_new"):
        close_session()
        st.rerun()


def labels() -> dict[str, str]:
    return domain_labels()


def chat_history(result: TurnResult) -> None:
    state = result.session
    for message in state.messages:
        if message.question:
            with st.chat_message("assistant"):
                st.text(message.question)
        with st.chat_message("user"):
            st.text(message.answer if message.answer.strip() else "（空の回答）")
    if result.question and not result.done:
        with st.chat_message("assistant"):
            st.text(result.question)


def slot_panel(iv: Interviewer, state: SessionState) -> None:
    """Fill bars with the gap priority and the adapted VoI parameters of every slot."""
    st.subheader("スロットの充足状況")
    gaps = {g.slot: g for g in iv.gaps(state)}
    adapted = iv.estimates(state)
    for name, slot in state.slots.items():
        gap = gaps.get(name)
        mark = "★" if slot.critical else "・"
        status = "充足" if slot.filled else ("暫定" if slot.provisional else "未充足")
        st.progress(
            min(1.0, slot.filled_ratio),
            text=f"{mark}{slot.label or name}（{status} {slot.filled_ratio:.0%}）",
        )
        if gap is not None and not slot.filled:
            est = adapted["slots"].get(name, {})
            base = ""
            if abs(slot.importance - slot.base_importance) > 1e-9:
                base = f"（基準 {slot.base_importance:.2f}）"
            search = ""
            if "retrievability" in est:
                search = f"・検索性 {est['retrievability']:.2f}"
            st.caption(
                f"優先度 {gap.priority:.3f}（重要度 {slot.importance:.2f}{base} × 未充足 "
                f"{1 - slot.filled_ratio:.2f} × 経過 {gap.staleness:.2f}）・回答可能性 "
                f"{est.get('p_answerable', 0.0):.2f}{search}"
            )
    st.caption(
        "★ は重要スロット。重要スロットの充足率が 85% 以上で重大な欠落がなければ終了します。"
    )
    ema = adapted["answer_ema_s"]
    measured = f"（平均応答時間 {ema:.0f} 秒）" if ema is not None else "（まだ実測なし: 初期値）"
    st.caption(
        f"質問コスト {adapted['cost_ask']:.2f}・検索コスト {adapted['cost_search']:.2f}{measured}"
        f"・直近の未回答率 {adapted['unanswered_rate']:.2f}"
    )


def decision_panel(result: TurnResult) -> None:
    decision = result.decision
    if decision is None or result.done:
        return
    st.subheader("この質問を選んだ理由")
    st.metric("選んだ行動の VoI", f"{decision.voi:.3f}")
    st.caption(decision.reason)
    if decision.candidates[1:]:
        rows = [
            {
                "行動": "検索" if a.action == "search" else "質問",
                "対象": "・".join(a.slots),
                "VoI": round(a.voi, 4),
                "回答可能性/検索性": round(a.prob, 2),
                "コスト": round(a.cost, 2),
            }
            for a in decision.candidates[:5]
        ]
        st.dataframe(rows, hide_index=True)


def stop_panel(iv: Interviewer, result: TurnResult) -> None:
    state = result.session
    stop = result.stop
    if stop is None:
        return
    if stop.reason == "kpi_met":
        st.success(f"終了: {stop.label}")
    else:
        st.info(f"終了: {stop.label}")
    if stop.missing:
        specs = iv.specs_for(state)
        names = [specs[n].label if n in specs else n for n in stop.missing]
        st.warning("まだ埋まっていない項目: " + "、".join(names))


def document_panel(result: TurnResult) -> None:
    if not result.document:
        return
    st.subheader("生成された文書")
    st.download_button(
        "Markdown をダウンロード",
        data=result.document.encode("utf-8"),
        file_name=document_filename(result.session),
        mime="text/markdown",
    )
    tab_view, tab_raw = st.tabs(["表示", "Markdown"])
    with tab_view:
        st.markdown(result.document)  # user text is escaped by core.interview.artifacts
    with tab_raw:
        st.code(result.document, language="markdown")


def pending_facts(iv: Interviewer, result: TurnResult, actor: Principal = LOCAL) -> None:
    """Facts from the corpus or inferred by the interviewer wait for the user's approval."""
    state = result.session
    waiting = [
        state.facts[a.fact_id]
        for a in state.approvals.values()
        if a.decision == "pending"
        and a.fact_id in state.facts
        and state.facts[a.fact_id].source_kind in ("retrieval", "model_infer")
    ]
    critical = [
        state.facts[a.fact_id]
        for a in state.approvals.values()
        if a.decision == "pending"
        and a.fact_id in state.facts
        and state.facts[a.fact_id].source_kind == "user"
    ]
    if critical and st.button(
        f"重要な事実をまとめて確認（{len(critical)} 件）", key="iv_confirm_all"
    ):
        for fact in critical:
            iv.confirm_fact(state.session_id, fact.id, "confirmed", actor=actor)
        st.rerun()
    if not waiting:
        return
    with st.expander(f"確認待ちの事実（{len(waiting)} 件）"):
        for fact in waiting:
            st.text(f"{fact.slot_name}: {fact.text[:200]}")
            st.caption(f"出所: {fact.provenance}")
            c1, c2 = st.columns(2)
            if c1.button("確認", key=f"ok-{fact.id}"):
                iv.confirm_fact(state.session_id, fact.id, "confirmed", actor=actor)
                st.rerun()
            if c2.button("却下", key=f"ng-{fact.id}"):
                iv.confirm_fact(state.session_id, fact.id, "rejected", actor=actor)
                st.rerun()
