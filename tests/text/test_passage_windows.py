"""Passage windows: the sub-chunk texts a corpus may embed instead of the whole chunk."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.schemas.documents import Document
from core.text.chunking import (
    chunk_document,
    content_units,
    passage_windows,
    sentence_spans,
    vector_texts,
)


def article(text: str, title: str = "梅雨") -> Document:
    return Document(
        doc_id=f"jawiki:{title}",
        source=f"jawiki:{title}",
        title=title,
        text=text,
        updated_at="2026-01-01T00:00:00+00:00",
        content_hash="0" * 64,
        kind="article",
    )


def test_sentences_end_at_sentence_marks_closing_brackets_and_newlines() -> None:
    text = "梅雨は気象である。「入梅」という!  次の行\n最後の文"
    spans = sentence_spans(text, 0, len(text))
    assert [text[s:e] for s, e in spans] == [
        "梅雨は気象である。",
        "「入梅」という!",
        "次の行",
        "最後の文",
    ]


def test_whole_sentences_are_packed_up_to_the_size() -> None:
    text = "一つ目の文です。二つ目の文です。三つ目の文はもう少し長い文です。"
    windows = [text[s:e] for s, e in passage_windows(text, 20)]
    assert windows == ["一つ目の文です。二つ目の文です。", "三つ目の文はもう少し長い文です。"]


def test_a_sentence_longer_than_the_window_is_cut() -> None:
    text = "短い文。" + "長" * 50 + "。"
    windows = passage_windows(text, 20)
    assert [e - s for s, e in windows] == [4, 20, 20, 11]


def test_size_must_be_positive() -> None:
    with pytest.raises(ValueError):
        passage_windows("文。", 0)


@given(st.text(alphabet="あい漢字ab 。、\n!」", max_size=400), st.integers(1, 80))
def test_window_invariants(text: str, size: int) -> None:
    windows = passage_windows(text, size)
    covered: set[int] = set()
    for s, e in windows:
        assert 0 <= s < e <= len(text) and content_units(text[s:e]) <= size
        assert text[s:e] == text[s:e].strip()
        covered.update(range(s, e))
    for (_, e1), (s2, _) in pairwise(windows):
        assert e1 <= s2  # disjoint, in order
    assert {i for i, ch in enumerate(text) if not ch.isspace()} <= covered


def test_vector_texts_put_the_title_at_the_head_of_every_window() -> None:
    body = "".join(f"梅雨の{i}番目の説明文です。" for i in range(40))
    chunk = chunk_document(article(body), 450, 60)[0]
    assert vector_texts(chunk, 0) == [chunk.text]
    texts = vector_texts(chunk, 160)
    assert len(texts) == 3
    assert all(t.startswith("梅雨\n") and len(t) <= len("梅雨\n") + 160 for t in texts)
    assert "".join(t.removeprefix("梅雨\n") for t in texts) == chunk.body
