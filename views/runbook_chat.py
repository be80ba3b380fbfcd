"""Runbook chat: ask the incident runbooks, read the answer and the citations behind it."""

import uuid

import streamlit as st

from core.collections import load_rules
from core.errors import WorkbenchError
from core.runbook_chat import MAX_HISTORY, ChatConfig, Exchange, ask_stream, open_section
from core.runbooks import index_runbooks, prepare_index, runbook_folder, runbook_stats
from core.schemas.answer import Answer
from ui.auth import require
from ui.citations import render_answer, stream_answer
from ui.resources import settings as get_settings
from ui.resources import shown_time

principal = require("operator")
admin = principal.allows("admin")  # the data folder and rebuilds are the administrator's
settings = get_settings()
state = st.session_state
state.setdefault("chat_session_id", f"st-{uuid.uuid4().hex[:12]}")
state.setdefault("chat_messages", [])  # [{"question": str, "answer": Answer}]

st.title("📘 手順書チャット")
st.warning("⚠️ 機密情報の入力は禁止されています")

# --- sidebar --------------------------------------------------------------------------------
with st.sidebar:
    st.header("検索設定")
    default_folder = str(settings.runbooks_dir)
    folder_text = (
        st.text_input("手順書フォルダ", value=default_folder, key="chat_folder")
        if admin
        else default_folder
    )
    k = st.number_input("検索件数 k", min_value=1, max_value=20, value=4, step=1, key="chat_k")
    bm25_weight = st.slider(
        "BM25 の重み", min_value=0.0, max_value=1.0, value=0.6, step=0.05, key="chat_bm25"
    )
    st.caption(f"ベクトルの重み: {1.0 - bm25_weight:.2f}（自動で 1 − BM25 の重み）")

    folder = None
    try:
        folder = runbook_folder(settings, folder_text, check_allowed=True, must_exist=True)
    except WorkbenchError as exc:
        st.error(exc.user_message)

    rebuild = admin and st.button(
        "インデックス再構築", disabled=folder is None, use_container_width=True
    )
    status_box = st.container()

if folder is not None and rebuild:
    bar = st.sidebar.progress(0.0, text="インデックスを確認しています…")

    def progress(done: int, total: int, message: str) -> None:
        bar.progress(min(1.0, done / total) if total else 1.0, text=message)

    try:
        report = index_runbooks(settings, folder, progress=progress)
        bar.progress(1.0, text="完了")
        st.sidebar.success(report.summary_ja())
        for _name, message in report.skipped:
            st.sidebar.warning(message)
    except WorkbenchError as exc:
        st.sidebar.error(exc.user_message)

if folder is not None:
    try:
        stats = runbook_stats(settings, folder, principal)
        # the first question builds (or updates) the index: the page is drawn again after it
        state.index_status_stale = not stats["chunks"] or bool(stats.get("outdated"))
        with status_box:
            if stats["chunks"]:
                st.info(
                    f"インデックス: 文書 {stats['documents']} 件・チャンク {stats['chunks']} 件\n\n"
                    f"最終構築: {shown_time(stats['built_at'])}"
                )
                if stats.get("outdated"):
                    st.caption(
                        "インデックスは以前の読み取り方式で作られています。"
                        "次の質問のときに更新します（変わらない部分の埋め込みは再利用します）。"
                    )
            else:
                st.info("インデックスは未構築です。最初の質問のときに構築します。")
    except WorkbenchError as exc:
        status_box.error(exc.user_message)
    if principal.allows("admin"):  # a collection manifest that cannot be read: admins are told
        for problem in load_rules(folder).problems:
            status_box.warning(problem)


def build_first(folder) -> dict | None:
    """The first question of a folder builds its index, which takes minutes on a large folder
    (the embedder is the cost): a progress bar shows it. What the build skipped is kept for the
    message (administrators only: a restricted user is not told the other collections' files)."""
    bar = st.empty()

    def progress(done: int, total: int, message: str) -> None:
        shown = f"：{message}" if admin else ""
        text = f"インデックスを構築しています（数分かかることがあります）{shown}"
        bar.progress(min(1.0, done / total) if total else 1.0, text=text)

    try:
        report = prepare_index(settings, folder, progress=progress)
    except WorkbenchError:
        report = None  # the answer says why the folder cannot be searched
    bar.empty()
    if report is None or not admin:
        return None
    return {"summary": report.summary_ja(), "skipped": [m for _, m in report.skipped]}


def show_build(built: dict | None) -> None:
    if built:
        st.caption(f"インデックスを構築しました: {built['summary']}")
        for message in built["skipped"]:
            st.warning(message)


# --- chat -----------------------------------------------------------------------------------
# A fragment: a question reruns only the chat (history, question box, the new answer), not the
# title, the sidebar or the index status; changing a sidebar setting reruns the whole page,
# which calls the fragment again with the new settings.
@st.fragment
def chat(folder, k: int, bm25_weight: float) -> None:
    def open_cited(citation):
        return open_section(
            settings, folder, citation.chunk_id, citation.file, citation.doc_hash, principal
        )

    for i, message in enumerate(state.chat_messages):
        with st.chat_message("user"):
            st.text(message["question"])
        with st.chat_message("assistant"):
            show_build(message.get("built"))
            render_answer(message["answer"], key=f"m{i}", on_open=open_cited)

    # in the page's bottom bar, as outside a fragment (inside one it would sit in the flow)
    question = st.bottom.chat_input(
        "手順書について質問してください（例: VPN に接続できないときの確認手順）"
    )
    if question and folder is not None:
        with st.chat_message("user"):
            st.text(question)
        history = [
            Exchange(
                m["question"], m["answer"].answer, m["answer"].rewritten_query or m["question"]
            )
            for m in state.chat_messages[-MAX_HISTORY:]
        ]
        config = ChatConfig(
            k=k,
            bm25_weight=bm25_weight,
            data=folder,
            session_id=state.chat_session_id,
            principal=principal,
        )
        with st.chat_message("assistant"):
            built = build_first(folder) if state.get("index_status_stale") else None
            show_build(built)
            # the model's words appear as they come; citations, flags and checks follow
            with st.spinner("手順書を検索しています…"):
                answer: Answer = stream_answer(ask_stream(question, history, config, settings))
            render_answer(answer, key=f"m{len(state.chat_messages)}", on_open=open_cited)
        state.chat_messages.append({"question": question, "answer": answer, "built": built})
        state.chat_messages = state.chat_messages[-MAX_HISTORY:]
        if state.get("index_status_stale"):  # the sidebar still says 未構築: draw it again
            state.index_status_stale = False
            st.rerun(scope="app")
    elif question:
        st.error("手順書フォルダを正しく指定してください。")


chat(folder, int(k), float(bm25_weight))
