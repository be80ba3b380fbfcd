"""Wikipedia QA: ask the Japanese Wikipedia index; answers end with numbered references."""

import uuid

import streamlit as st

from core.errors import WorkbenchError
from core.wiki.index import wiki_status
from core.wiki.qa import WikiConfig, ask
from core.wiki.search import DEFAULT_MODE
from ui.auth import require
from ui.resources import settings as get_settings
from ui.resources import shown_time
from ui.wiki import (
    DATASETS_HINT_JA,
    check_page_sources,
    current_job,
    default_build_source,
    example_question,
    render_answer,
    rerank_unavailable,
    start_build,
)

principal = require("operator")
settings = get_settings()
state = st.session_state
state.setdefault("wiki_answers", [])  # [(question, Answer)], newest last

st.title("📚 Wikipedia QA")
st.caption(
    "日本語 Wikipedia の記事を E5 埋め込み＋FAISS（と BM25）で検索し、参照番号付きで回答します。"
    "回答の末尾の「参照」は検索したチャンクを示します。"
)

status = wiki_status(settings)
if status.built:
    st.success(
        f"インデックス: 記事 {status.articles:,} 件・チャンク {status.chunks:,} 件"
        f"・埋め込み {status.embedder}（{status.dim} 次元）・最終構築 {shown_time(status.built_at)}"
        + (
            f"・ベクトルは {status.vector_window} 文字以内のパッセージ単位"
            if status.vector_window
            else "・ベクトルはチャンク単位"
        )
    )
    if status.vector_window != settings.article_vector_window:
        st.info(
            "このインデックスは現在の設定（WB_ARTICLE_VECTOR_WINDOW="
            f"{settings.article_vector_window}）と異なる単位で埋め込まれています。"
            "次の構築ですべてのチャンクを埋め込み直します。"
        )
else:
    st.warning(
        "Wikipedia インデックスは未構築です。下の「インデックスの構築」から構築してください。"
        if principal.allows("admin")
        else "Wikipedia インデックスは未構築です。管理者に構築を依頼してください。"
    )
mode = "LLM" if settings.llm_enabled else "抽出型（オフライン・LLM 不使用）"
st.caption(f"回答モード: {mode} ／ インデックスの場所: {status.index_dir}")

# --- question ------------------------------------------------------------------------------------
with st.form("wiki_ask"):
    question = st.text_input("質問", placeholder=example_question(settings))
    col1, col2, col3 = st.columns(3)
    no_reranker = rerank_unavailable(settings)
    rerank = col1.toggle(
        "リランク（CrossEncoder）", value=no_reranker is None, disabled=no_reranker is not None
    )
    hybrid = col2.toggle("ハイブリッド検索（BM25＋ベクトル）", value=DEFAULT_MODE == "hybrid")
    topn = col3.number_input("回答に使う件数", min_value=1, max_value=16, value=5, step=1)
    asked = st.form_submit_button("質問する", type="primary", disabled=not status.built)
if no_reranker:
    st.caption(f"リランクは使えません（{no_reranker}）。検索順のまま回答します。")

if asked:
    config = WikiConfig(
        topn=int(topn),
        rerank=rerank,
        mode="hybrid" if hybrid else "dense",
        session_id=state.setdefault("wiki_session", f"st-wiki-{uuid.uuid4().hex[:12]}"),
        principal=principal,
    )
    with st.spinner("検索しています…"):
        answer = ask(question, [], config, settings)
    if answer.error:
        st.error(answer.error)
    else:
        state.wiki_answers = [*state.wiki_answers, (question, answer)][-10:]

for i, (asked_text, answer) in enumerate(reversed(state.wiki_answers)):
    with st.container(border=True):
        st.markdown(f"**Q. {asked_text}**" if i == 0 else f"Q. {asked_text}")
        render_answer(answer)

# --- build (admin) -------------------------------------------------------------------------------
if not principal.allows("admin"):
    st.stop()  # index builds are the administrator's: not shown, and nothing below runs
st.subheader("インデックスの構築")


@st.fragment(run_every=1.0 if (job := current_job(settings)) and not job.finished else None)
def build_panel() -> None:
    job = current_job(settings)
    if job is not None and job.finished and state.get("wiki_seen_job") != id(job):
        state.wiki_seen_job = id(job)  # refresh the whole page (status, question form) once
        st.rerun()
    live = wiki_status(settings)
    if job is not None and not job.finished:
        st.progress(job.fraction, text=job.progress_text())
        st.caption(
            f"ソース: {', '.join(job.sources)}。このページを離れても構築は続きます。"
            "サーバーが止まった場合は、同じソースで再度構築すると完了したバッチから再開します。"
        )
        return
    if job is not None and job.error:
        st.error(job.error)
    elif job is not None and job.report is not None:
        st.success("構築が完了しました。" + job.report.summary_ja())
    if live.building:
        st.info("別のプロセス（CLI など）が構築中です。完了してから再度お試しください。")
    elif live.interrupted:
        st.warning(
            f"前回の構築（ソース: {', '.join(live.interrupted.get('sources') or [])}）は"
            f"完了していません。保存済みのベクトル {live.cached_vectors:,} 件を再利用して再開できます。"
        )
    default_source = (live.interrupted or {}).get("sources") or []
    default_max = (live.interrupted or {}).get("max_articles") or 0
    jsquad = default_build_source(settings)
    if jsquad is None:
        st.caption(DATASETS_HINT_JA)
    with st.form("wiki_build"):
        source = st.text_input(
            "ソース（カンマ区切りで複数可）",
            value=",".join(default_source) or jsquad or "hf:20231101.ja",
            help="hf:<config>（Hugging Face）、{id, title, text} の .jsonl / .parquet、jsquad:<JSQuAD 形式 JSON>",
        )
        max_articles = st.number_input(
            "最大記事数（0 は全件）", min_value=0, value=int(default_max), step=100
        )
        label = "構築を再開" if live.interrupted else "構築を開始"
        submitted = st.form_submit_button(label, disabled=live.building)
    if submitted:
        try:
            specs = check_page_sources(settings, source)
            start_build(settings, specs, int(max_articles) or None)
        except WorkbenchError as exc:
            st.error(exc.user_message)
            return
        st.rerun()


build_panel()
