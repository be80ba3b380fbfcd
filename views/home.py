"""Home: index status, active embedder and answer mode, links to the pages."""

import streamlit as st

from core.status import workbench_status
from ui.auth import require
from ui.navigation import pages_for
from ui.resources import settings, shown_time

principal = require("operator")

st.title("🛡️ SOC ワークベンチ")
st.caption("日本語 SOC チームのための手順書 RAG・Wikipedia QA・インタビュー・評価ダッシュボード")

status = workbench_status(settings())
mode = (
    f"LLM（{status.chat_model}）"
    if status.answer_mode == "llm"
    else "抽出型（オフライン・LLM 不使用）"
)
col1, col2 = st.columns(2)
col1.metric("埋め込みモデル", status.embedder.split("（")[0])
col1.caption(status.embedder)
col2.metric("回答モード", "LLM" if status.answer_mode == "llm" else "抽出型")
col2.caption(mode)

st.subheader("インデックスの状態")
for idx in status.indexes:
    if idx.built:
        st.success(
            f"{idx.name}: 文書 {idx.documents} 件・チャンク {idx.chunks} 件"
            f"（最終構築 {shown_time(idx.built_at)}、埋め込み {idx.embedder}）"
        )
    else:
        how = (
            "`python -m core index runbooks`（make run が自動で実行）"
            if idx.name.startswith("runbooks")
            else "Wikipedia QA ページの構築フォーム、または `python -m core wiki build`"
        )
        st.warning(f"{idx.name}: 未構築です。{how} で構築できます。")
if principal.allows("admin"):  # where the data lives: the administrator's concern
    st.caption(f"状態フォルダ: {status.state_root}")

st.subheader("ページ")
for page in pages_for(principal):
    if not page.default:
        st.page_link(page.path, label=f"{page.title} — {page.description}", icon=page.icon)
