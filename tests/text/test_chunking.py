import time
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.schemas.documents import Chunk, Document
from core.text.chunking import (
    Section,
    chunk_document,
    pdf_heading_level,
    split_sections,
    window_spans,
)
from core.text.normalize import normalize_text


def make_doc(text: str, kind: str = "markdown", title: str = "初動対応手順") -> Document:
    return Document(
        doc_id="runbooks/ir.md",
        source="runbooks/ir.md",
        title=title,
        text=text,
        updated_at="2024-05-01T09:00:00+09:00",
        content_hash="abc123",
        kind=kind,
    )


def paths(text: str, kind: str = "markdown") -> list[tuple[tuple[str, ...], str]]:
    return [
        (section.heading_path, text[section.body_start : section.body_end])
        for section in split_sections(text, kind)
    ]


# --- window_spans ------------------------------------------------------------------------------


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (-1, 0), (10, -1), (10, 10), (10, 11)])
def test_window_spans_rejects_bad_parameters(size: int, overlap: int) -> None:
    with pytest.raises(ValueError):
        window_spans("テキスト", 0, 4, size, overlap)


def test_hard_cuts_overlap_exactly() -> None:
    text = "あいうえおかきくけこ" * 10  # no boundary anywhere
    windows = window_spans(text, 0, len(text), 30, 7)
    assert windows[0] == (0, 30)
    for (_, end), (next_start, _) in pairwise(windows):
        assert end - next_start == 7
    assert all(end - start == 30 for start, end in windows[:-1])
    assert windows[-1][1] == len(text)


def test_cut_after_sentence_end_in_the_last_fifth() -> None:
    text = "あ" * 45 + "。" + "い" * 100
    windows = window_spans(text, 0, len(text), 50, 5)
    assert windows[0] == (0, 46)  # 。 at 45 lies in [40, 50): cut just after it
    assert windows[1][0] == 41  # the overlap is still exactly 5 characters


def test_boundary_outside_the_last_fifth_is_ignored() -> None:
    text = "あ" * 20 + "。" + "い" * 100
    assert window_spans(text, 0, len(text), 50, 5)[0] == (0, 50)


def test_newline_preferred_over_sentence_end_over_comma() -> None:
    text = "あ" * 41 + "\n" + "い" * 3 + "。" + "う" * 2 + "、" + "え" * 100
    assert window_spans(text, 0, len(text), 50, 0)[0] == (0, 41)  # trailing newline trimmed
    text = "あ" * 41 + "、" + "い" * 3 + "。" + "う" * 100
    assert window_spans(text, 0, len(text), 50, 0)[0] == (0, 46)
    text = "あ" * 41 + "、" + "い" * 100
    assert window_spans(text, 0, len(text), 50, 0)[0] == (0, 42)
    text = "ab " * 30
    assert window_spans(text, 0, len(text), 50, 0)[0] == (0, 47)


def test_closing_brackets_stay_with_their_sentence() -> None:
    text = "あ" * 44 + "。」" + "い" * 100
    assert window_spans(text, 0, len(text), 50, 0)[0] == (0, 46)


def test_windows_are_trimmed_and_respect_the_span() -> None:
    text = "xx  本文です。\n\n  続きです。  yy"
    start, end = 2, len(text) - 2
    windows = window_spans(text, start, end, 100, 10)
    assert windows == [(4, len(text) - 4)]
    assert window_spans(text, 2, 4, 100, 10) == []  # whitespace only
    assert window_spans("", 0, 0, 10, 0) == []


def test_short_text_is_one_window() -> None:
    assert window_spans("短い", 0, 2, 500, 50) == [(0, 2)]


def test_progress_when_overlap_is_size_minus_one() -> None:
    text = "あいう。" * 50
    windows = window_spans(text, 0, len(text), 5, 4)
    starts = [start for start, _ in windows]
    assert starts == sorted(set(starts))
    assert windows[-1][1] == len(text)
    assert len(windows) <= len(text)


def test_a_window_inside_a_blank_run_is_dropped() -> None:
    text = "a" * 10 + " " * 20 + "b"
    assert window_spans(text, 0, len(text), 10, 3) == [(0, 10), (30, 31)]


_WINDOW_TEXT = st.text(alphabet="あい漢字ab 。、\n!」", max_size=300)


@given(_WINDOW_TEXT, st.integers(1, 60), st.data())
def test_window_invariants(text: str, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    windows = window_spans(text, start, end, size, overlap)
    covered = set()
    for window_start, window_end in windows:
        assert start <= window_start < window_end <= end
        assert window_end - window_start <= size
        body = text[window_start:window_end]
        assert body == body.strip()
        covered.update(range(window_start, window_end))
    for (a1, b1), (a2, b2) in pairwise(windows):
        assert a1 < a2 and b1 < b2
        assert b1 - a2 <= overlap
    assert {i for i in range(start, end) if not text[i].isspace()} <= covered


@given(st.text(alphabet="あい漢字ab。、!」", max_size=300), st.integers(1, 60), st.data())
def test_overlap_is_exact_without_whitespace(text: str, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    windows = window_spans(text, 0, len(text), size, overlap)
    for (_, b1), (a2, _) in pairwise(windows):
        assert b1 - a2 == overlap


# --- markdown sections -------------------------------------------------------------------------


def test_markdown_heading_paths_nested_and_replaced() -> None:
    text = "前文\n# A\na\n## B\nb\n### C\nc\n## D\nd\n# E #\ne\n### F\nf"
    assert paths(text) == [
        ((), "前文\n"),
        (("A",), "a\n"),
        (("A", "B"), "b\n"),
        (("A", "B", "C"), "c\n"),
        (("A", "D"), "d\n"),  # a new ## replaces B and drops C
        (("E",), "e\n"),  # closing #s stripped
        (("E", "F"), "f"),  # a skipped level is fine
    ]


def test_deeper_and_invalid_headings_stay_in_the_body() -> None:
    text = "# A\n#### 詳細\n#タグ\n####### seven\n#\n本文"
    assert paths(text) == [((), ""), (("A",), "#### 詳細\n#タグ\n####### seven\n#\n本文")]


def test_indented_heading_up_to_three_spaces() -> None:
    assert paths("   ## B\nb\n    # code")[1] == (("B",), "b\n    # code")


def test_headings_inside_code_fences_are_ignored() -> None:
    text = "# A\n```bash\n# コメント\n## not\n```\n## B\n~~~\n# x\n```\n# y\n~~~\nb"
    assert [path for path, _ in paths(text)] == [(), ("A",), ("A", "B")]
    # a shorter fence does not close a longer one; an unclosed fence runs to the end
    text = "````\n```\n# x\n````\n# A\n```\n# y"
    assert [path for path, _ in paths(text)] == [(), ("A",)]


def test_heading_spans() -> None:
    text = "# A\n本文"
    preamble, section = split_sections(text, "markdown")
    assert isinstance(section, Section)
    assert preamble.heading_span is None and preamble.body_span == (0, 0)
    assert section.heading_span == (0, 3) and section.body_span == (4, 6)
    assert section.level == 1


def test_unknown_kind() -> None:
    with pytest.raises(ValueError, match="kind"):
        split_sections("x", "docx")


# --- pdf sections ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "level"),
    [
        ("1. 目的", 1),
        ("1.目的", 1),
        ("2 初動対応", 1),
        ("2.1 影響範囲の確認", 2),
        ("2.1. 影響範囲の確認", 2),
        ("2.1.3 ログの保全", 3),
        ("第3章 復旧", 1),
        ("第2節 連絡体制", 2),
        ("1 はじめに", 1),
        ("  3. 再発防止策  ", 1),
    ],
)
def test_pdf_headings(line: str, level: int) -> None:
    assert pdf_heading_level(line) == level


@pytest.mark.parametrize(
    "line",
    [
        "(1) 端末を隔離する",
        "1) 端末を隔離する",
        "手順1: 端末を隔離する",
        "① 端末を隔離する",
        "1. ファイルを削除する。",
        "1. 感染が疑われる端末をネットワークから切り離し、管理者に報告してから調査を開始する",
        "10 件のアラートを確認",
        "5 月の障害",
        "1.5 倍に増加",
        "10.0.0.1 への通信",
        "2024.1.15 障害発生",
        "3.14",
        "2.1影響範囲",
        "第3章で説明した手順",
        "12",
        "",
    ],
)
def test_pdf_non_headings(line: str) -> None:
    assert pdf_heading_level(line) == 0


def test_pdf_sections() -> None:
    text = "表紙\n1. 目的\n目的です。\n2 初動対応\n(1) 隔離する\n2.1 影響範囲\n確認する。\n3. 復旧\n復旧する。"
    assert paths(text, "pdf") == [
        ((), "表紙\n"),
        (("1. 目的",), "目的です。\n"),
        (("2 初動対応",), "(1) 隔離する\n"),
        (("2 初動対応", "2.1 影響範囲"), "確認する。\n"),
        (("3. 復旧",), "復旧する。"),
    ]


# --- chunk_document ----------------------------------------------------------------------------


def test_chunk_fields_and_ids() -> None:
    text = "# 初動\n## 隔離\n端末をネットワークから切り離す。\n## 保全\nメモリを取得する。"
    doc = make_doc(text)
    chunks = chunk_document(doc, 500, 50)
    assert [chunk.heading_path for chunk in chunks] == [("初動", "隔離"), ("初動", "保全")]
    first = chunks[0]
    assert isinstance(first, Chunk)
    assert first.chunk_id == "runbooks/ir.md_0" and chunks[1].chunk_id == "runbooks/ir.md_1"
    assert first.body == "端末をネットワークから切り離す。"
    assert (first.doc_id, first.source, first.title) == (doc.doc_id, doc.source, doc.title)
    assert (first.updated_at, first.doc_hash) == (doc.updated_at, doc.content_hash)
    assert [chunk.chunk_index for chunk in chunks] == [0, 1]
    assert first.text == "初動 > 隔離\n端末をネットワークから切り離す。"


def test_preamble_chunk_uses_the_title_as_head() -> None:
    chunks = chunk_document(make_doc("概要の文。\n# A\n本文"), 500, 50)
    assert chunks[0].heading_path == ()
    assert chunks[0].text == "初動対応手順\n概要の文。"


def test_long_section_is_windowed_with_the_same_path() -> None:
    body = "".join(f"手順{i}では端末のログを確認する。" for i in range(100))
    doc = make_doc(f"# 調査\n{body}")
    chunks = chunk_document(doc, 500, 50)
    assert len(chunks) > 3
    assert all(chunk.heading_path == ("調査",) for chunk in chunks)
    assert all(len(chunk.body) <= 500 for chunk in chunks)
    assert all(chunk.body.endswith("。") for chunk in chunks)


def test_article_chunking() -> None:
    text = "東京都は日本の首都である。" * 100
    doc = make_doc(text, kind="article", title="東京都")
    chunks = chunk_document(doc, 450, 60)
    assert len(chunks) == 4
    assert all(chunk.heading_path == () for chunk in chunks)
    assert chunks[0].text.startswith("東京都\n東京都は")
    assert "# " not in chunks[0].text


def test_empty_and_whitespace_only_documents() -> None:
    assert chunk_document(make_doc(""), 500, 50) == []
    assert chunk_document(make_doc(" \n\n \n"), 500, 50) == []
    assert chunk_document(make_doc("# 見出しのみ\n## 小見出し"), 500, 50) == []


_LINE = st.one_of(
    st.sampled_from(["# 概要", "## 手順", "### 詳細", "#### 深い", "```", "~~~", "", "1. 目的"]),
    st.text(alphabet="あいう漢字ABCx 。、!\t", max_size=40),
)


@given(st.lists(_LINE, max_size=40), st.sampled_from(["markdown", "pdf", "article"]))
def test_span_invariant_and_coverage(lines: list[str], kind: str) -> None:
    text = normalize_text("\n".join(lines)) if lines and len(lines) % 2 else "\n".join(lines)
    doc = make_doc(text, kind=kind)
    chunks = chunk_document(doc, 60, 10)
    sections = split_sections(text, kind)
    heading_chars = {i for s in sections if s.heading_span for i in range(*s.heading_span)}
    covered = set()
    for index, chunk in enumerate(chunks):
        assert text[chunk.start : chunk.end] == chunk.body
        assert chunk.body and chunk.body == chunk.body.strip()
        assert len(chunk.body) <= 60
        assert chunk.chunk_index == index and chunk.chunk_id == f"{doc.doc_id}_{index}"
        section = next(s for s in sections if s.body_start <= chunk.start < s.body_end)
        assert chunk.end <= section.body_end
        assert chunk.heading_path == section.heading_path
        covered.update(range(chunk.start, chunk.end))
    content = {i for i, char in enumerate(text) if not char.isspace()} - heading_chars
    assert content <= covered
    assert not covered & heading_chars


def test_two_megabyte_document_chunks_quickly() -> None:
    section = "## 手順\n" + "端末のログを確認し、不審なプロセスを停止する。\n" * 40
    text = "# 大きな手順書\n" + section * (2_000_000 // len(section))
    doc = make_doc(text)
    started = time.perf_counter()
    chunks = chunk_document(doc, 500, 50)
    elapsed = time.perf_counter() - started
    print(f"2 MB markdown: {len(chunks)} chunks in {elapsed:.2f} s")
    assert len(text) >= 1_900_000
    assert elapsed < 10
    assert all(doc.text[c.start : c.end] == c.body for c in chunks)
