"""The 「根拠を確認」 section of an answer: each sentence with the span of its passage that supports
it, highlighted inside the passage (Streamlit-only; passage text escaped before ``<mark>``)."""

from __future__ import annotations

import streamlit as st

from core.generation.citations import excerpt, span_html
from core.schemas.answer import Answer
from core.schemas.provenance import SentenceSupport

REASON_LABELS = {
    "supported": "根拠あり",
    "no_support": "根拠なし（引用元に対応する記述が見つかりません）",
    "number_mismatch": "根拠なし（数値・識別子が引用元と一致しません）",
    "invented_marker": "根拠なし（存在しない出典番号を引用していました）",
}


def sentence_label(s: SentenceSupport) -> str:
    """The expander label: status, the sentence (plain text), the passage and the score."""
    from ui.citations import literal_markdown

    status = "✅" if s.supported else "⚠️ 根拠なし"
    where = f"[{s.citation}]" if s.citation is not None else "—"
    removed = "（回答から削除）" if s.removed else ""
    return (
        f"{status}{removed} 文{s.index + 1}: {literal_markdown(excerpt(s.text, 60))}"
        f" ／ 根拠 {where} スコア {s.score:.2f}"
    )


def render_sentence_checks(answer: Answer, key: str) -> None:
    """Every checked sentence; opening one shows its span highlighted inside its passage."""
    if not answer.sentences:
        return
    total = len(answer.sentences)
    bad = answer.unsupported_count
    st.markdown(f"**🔎 根拠を確認**（{total} 文中 {total - bad} 文に根拠あり）")
    by_n = {c.n: c for c in answer.citations}
    for s in answer.sentences:
        with st.expander(sentence_label(s), expanded=False):
            st.caption(REASON_LABELS.get(s.reason, s.reason))
            c = by_n.get(s.citation) if s.citation is not None else None
            if c is None:
                st.caption("対応する引用元はありません。")
                continue
            st.markdown(
                # lines as <br>: no blank line ends the HTML block (the rest would be Markdown)
                f'<div class="wb-excerpt wb-span" data-key="{key}-s{s.index}">'
                + span_html(c.text, s.span_start, s.span_end).replace("\n", "<br>")
                + "</div>",
                unsafe_allow_html=True,
            )
            st.caption(
                f"[{c.n}] {c.file} > {c.heading} ／ chunk_id: {c.chunk_id} ／ "
                f"範囲: {s.span_start}〜{s.span_end} 文字目 ／ スコア {s.score:.2f}"
            )
