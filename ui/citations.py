"""Rendering of answers and their citations (Streamlit-only). Document text is always escaped."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

import streamlit as st

from core.danger import describe
from core.generation.citations import highlight_html
from core.generation.safety import make_safe
from core.schemas.answer import Answer, Citation
from ui.provenance import render_sentence_checks

MODE_LABELS = {
    "llm": "LLM 回答",
    "extractive": "抽出型回答（LLM 不使用・手順書の該当箇所を引用）",
    "template": "定型応答",
}


def safe_markdown(text: str) -> str:
    """Markdown with HTML escaped and images neutralized (document text is untrusted)."""
    return html.escape(text, quote=False).replace("![", "!\\[")


def answer_markdown(text: str) -> str:
    """An answer's Markdown: the core already made it safe (``core.generation.safety``); applied
    again here (it is idempotent) with images shown as text, never loaded."""
    return make_safe(text).text.replace("![", "!\\[")


def stream_answer(stream: Iterable[str | Answer]) -> Answer:
    """Show a pipeline's text deltas as they come (``st.write_stream``) and return its final
    ``Answer``; the streamed text is cleared so that the caller renders the complete answer."""
    final: list[Answer] = []

    def deltas():
        for item in stream:
            if isinstance(item, Answer):
                final.append(item)
            else:
                yield item

    live = st.empty()
    with live.container():
        st.write_stream(deltas())
    live.empty()
    return final[-1]


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>$])")


def literal_markdown(text: str) -> str:
    """Text shown exactly as written: HTML escaped and every Markdown character backslashed."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def render_answer(answer: Answer, key: str, on_open=None) -> None:
    if answer.banner:
        st.error(answer.banner.removeprefix("⚠️").strip(), icon="⚠️")
        if answer.danger:
            st.caption(
                "検知した操作: " + " ／ ".join(literal_markdown(describe(m)) for m in answer.danger)
            )
    st.markdown(answer_markdown(answer.answer))
    meta = [MODE_LABELS.get(answer.answer_mode, answer.answer_mode)]
    if answer.model:
        meta.append(f"モデル {answer.model}")
    if answer.token_usage.get("total_tokens"):
        meta.append(f"{answer.token_usage['total_tokens']} トークン・${answer.cost_usd:.4f}")
    meta.append(f"{answer.processing_time_sec:.2f} 秒")
    if answer.rewritten_query:
        meta.append(f"検索クエリ: {answer.rewritten_query}")
    st.caption(" ／ ".join(meta))
    for warning in answer.warnings:
        st.warning(warning)
    shown = [c for c in answer.citations if c.cited] or (
        [] if answer.flags.insufficient_evidence else answer.citations
    )
    for c in shown:
        render_citation(c, answer.query_terms, key=f"{key}-{c.n}", on_open=on_open)
    render_sentence_checks(answer, key)


def citation_label(c: Citation) -> str:
    return f"[{c.n}] 引用元: {c.file} > {c.heading} (スコア: {c.score:.2f})"


def render_citation(c: Citation, terms: list[str], key: str, on_open=None) -> None:
    with st.expander(citation_label(c), expanded=False):
        st.markdown(
            f'<div class="wb-excerpt">{highlight_html(c.excerpt, terms)}</div>',
            unsafe_allow_html=True,
        )
        st.caption(
            f"BM25: {c.bm25_score:.2f}（正規化 {c.keyword_norm:.2f}） ／ "
            f"ベクトル（cos）: {c.vector_score:.3f}（正規化 {c.semantic_norm:.2f}） ／ "
            f"chunk_id: {c.chunk_id} ／ 文書ハッシュ: {c.doc_hash[:12]}"
        )
        if on_open is not None and st.toggle("全文を表示", key=f"full-{key}"):
            view = on_open(c)
            if view.removed:
                st.warning(
                    "この文書は現在のインデックスにありません（削除されました）。回答時の本文を表示します。"
                )
            elif view.changed:
                st.warning("この文書は回答後に更新されています。回答時の本文を表示します。")
            count = getattr(view, "chunk_count", 0)
            if count:
                scope = "の一部（前後のみ）" if getattr(view, "truncated", False) else "の全文"
                st.caption(
                    safe_markdown(
                        f"セクション「{view.heading or c.heading}」{scope}（チャンク {count} 件）"
                    )
                )
            st.markdown(
                f'<div class="wb-excerpt">{highlight_html(view.text or c.text, terms)}</div>',
                unsafe_allow_html=True,
            )
