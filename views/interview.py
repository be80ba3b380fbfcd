"""Interview: choose a domain and a topic, answer the questions, get the document.

The interviewer looks for missing slots, asks the question with the highest value of
information, stops when the document is complete enough and writes it. Sessions are saved after
every turn; the open session's id is kept in the URL (``?session=…``), so a reload or a bookmark
comes back to it, and any saved session can be reopened from the sidebar.
"""

import streamlit as st

from core.errors import WorkbenchError
from ui.auth import require
from ui.interview import (
    chat_history,
    close_session,
    current_session_id,
    decision_panel,
    document_panel,
    end_actions,
    interviewer,
    labels,
    newest_first,
    open_session,
    pending_facts,
    show_notices,
    slot_panel,
    stash_notices,
    stop_panel,
)
from ui.resources import settings, shown_time

principal = require("operator")

st.title("🗣️ インタビュー")
st.caption(
    "手順書・ポストモーテム・レシピ・業務報告を聞き取りで作成します。足りない項目を見つけて"
    "価値の高い質問から尋ね、十分にそろったら文書を書きます。"
)

cfg = settings()
names = labels()
with st.sidebar:
    st.subheader("新しいインタビュー")
    domain = st.selectbox("ドメイン", list(names), format_func=lambda d: names[d], key="iv_domain")
    topic = st.text_input(
        "テーマ（最初のひとこと）",
        key="iv_topic",
        placeholder="例: 昨日の決済システムの障害について振り返りたい",
    )
    corpus_label = st.radio(
        "検索するコーパス",
        ["なし", "手順書", "Wikipedia"],
        horizontal=True,
        key="iv_corpus",
        help="前提条件・検証・ロールバックなどをコーパスから探して埋めます（要確認）。",
    )
    corpus = {"手順書": "runbooks", "Wikipedia": "wiki"}.get(corpus_label)
    start = st.button("開始", type="primary", key="iv_start")

iv = interviewer(cfg, corpus=corpus)

if start:
    try:
        started = iv.start(
            domain,
            topic,
            user_id=principal.subject if principal.signed_in else "streamlit",
            actor=principal,
        )
        open_session(started.session.session_id)
    except WorkbenchError as exc:
        st.sidebar.error(exc.user_message)

session_id = current_session_id(iv)

with st.sidebar:
    st.subheader("セッション一覧")
    # signed in: an operator's or reviewer's own interviews; the administrator sees them all
    own = principal.subject if principal.signed_in and not principal.allows("admin") else None
    sessions = newest_first(iv.sessions(user_id=own))
    if sessions:
        options = {s.session_id: s for s in sessions}

        def describe(sid: str) -> str:
            s = options[sid]
            state = "終了" if s.status == "stopped" else "進行中"
            broken = "・破損" if s.corrupt else ""
            when = shown_time(s.updated_at)
            return (
                f"{s.topic[:24]}（{names.get(s.domain, s.domain)}・{state}・{s.turn}ターン"
                f"・{when}{broken}）"
            )

        if st.session_state.get("iv_pick") not in options:
            st.session_state.pop("iv_pick", None)
        chosen = st.selectbox(
            "保存されたセッション", list(options), format_func=describe, key="iv_pick"
        )
        if st.button("再開", key="iv_resume"):
            open_session(chosen, select=False)
            st.rerun()
    else:
        st.caption("保存されたセッションはまだありません。")

if not session_id:
    st.info(
        "サイドバーでドメインとテーマを入力して「開始」を押すか、保存されたセッションを再開してください。"
    )
    st.stop()

try:
    result = iv.resume(session_id)
except WorkbenchError as exc:
    st.error(exc.user_message)
    st.stop()
if own is not None and result.session.user_id != own:  # someone else's interview (by its URL)
    close_session()
    st.error("このインタビューを開く権限がありません（ほかの利用者のセッションです）。")
    st.stop()

for warning in result.warnings:
    st.warning(warning)
show_notices()

answer = None if result.done else st.chat_input("回答を入力（「終了」で中断）", key="iv_answer")
if answer is not None:
    try:
        result = iv.answer(session_id, answer, actor=principal)
    except WorkbenchError as exc:
        st.error(exc.user_message)
    notices = [
        (
            "warning",
            f"{c.field}が以前の回答と食い違っています:「{c.old_value}」→「{c.new_value}」。"
            "確認の質問をします。",
        )
        for c in result.contradictions
    ]
    notices += [("info", f"{c.field}: {c.resolution}") for c in result.resolved]
    notices += [("warning", w) for w in result.warnings]
    stash_notices(notices)
    if result.done:
        st.rerun()  # the answer box must go as soon as the document is written
    show_notices()

chat_col, panel_col = st.columns([3, 2])
with chat_col:
    st.caption(f"テーマ: {result.session.topic}（{names.get(result.session.goal_kind, '')}）")
    chat_history(result)
    if not result.done and st.button("ここで終えて文書を作成", key="iv_abort"):
        result = iv.abort(session_id, actor=principal)
        st.rerun()
with panel_col:
    decision_panel(result)
    slot_panel(iv, result.session)

if result.done:
    stop_panel(iv, result)
    pending_facts(iv, result, principal)
    document_panel(result)
    end_actions(iv, result)
