"""Plain-text runbooks (``.txt``): the reader on the layouts teams keep text in, through the loader
and the index: a document published as text (pages, running lines, contents, wrapped at 72
columns), notes typed in an editor in Shift_JIS, and a Word document saved as text."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import SourceFileError
from core.ingest.loaders import load_file
from core.ingest.plaintext import looks_like_markdown, read_plaintext
from core.runbooks import index_runbooks, search_runbooks
from core.text.chunking import chunk_document, split_sections
from tests.conftest import make_settings
from tests.support.timing import quietest

_HEADER = "RFC 9999            Evidence Handling for Responders          May 2026"


def _page(lines: str, number: int) -> str:
    footer = f"Example & Sample            Best Current Practice             [Page {number}]"
    return "\n".join([_HEADER, "", "", *lines.strip("\n").split("\n"), "", "", footer])


_RFC_PAGES = [
    """
Network Working Group                                         A. Example
Request for Comments: 9999                                   Sample Corp
Category: Best Current Practice                                 May 2026


            Evidence Handling for Responders in Small Teams

Status of this Memo

   This memo describes practice for small response teams.  Distribution
   of this memo is unlimited.

Table of Contents

   1.  Introduction . . . . . . . . . . . . . . . . . . . . . . . .   2
   2.  Guiding Principles . . . . . . . . . . . . . . . . . . . . .   2
     2.1  Order of Collection . . . . . . . . . . . . . . . . . . .   3
   Appendix A.  Checklist . . . . . . . . . . . . . . . . . . . . .   3
""",
    """
1. Introduction

   A responder who collects evidence must be able to show later what was
   collected, when, by whom and how it was protected.  This memo gives a
   short set of practices that a team of two or three people can follow
   during an incident without special equipment.

2. Guiding Principles

   o  Write down every action with the time and the name of the person
      who took it, and keep the notes with the evidence.

   o  Collect from the most volatile source first.

   A responder who changes the original cannot show afterwards that the
""",
    """
   evidence is what was found, so work on a verified copy.

2.1 Order of Collection

   o  registers and cache

   o  the routing table, the process table and kernel statistics

Appendix A.  Checklist

   | Step | Action                      |
   +------+-----------------------------+
   | 1    | Note the time and the host  |
   | 2    | Capture memory              |
""",
]


def _rfc() -> str:
    return "\f\n".join(_page(page, n) for n, page in enumerate(_RFC_PAGES, start=1))


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def test_a_document_published_as_text_is_read_by_its_pages_contents_and_sections():
    read = read_plaintext(_rfc())
    lines = _lines(read.text)
    # the running header and footer of every page are gone, the contents too
    assert not any("[Page" in line or line.startswith("RFC 9999") for line in lines)
    assert not any(". . ." in line for line in lines)
    assert lines.count("1. Introduction") == 1
    # the centred line is the title; sections nest under it by their numbers
    assert read.title == "Evidence Handling for Responders in Small Teams"
    assert [(h.level, h.title) for h in read.headings] == [
        (1, "Evidence Handling for Responders in Small Teams"),
        (2, "Status of this Memo"),
        (2, "1. Introduction"),
        (2, "2. Guiding Principles"),
        (3, "2.1 Order of Collection"),
        (2, "Appendix A. Checklist"),
    ]
    # a paragraph wrapped at 72 columns is one line again, across a page break too
    assert (
        "A responder who collects evidence must be able to show later what was collected, "
        "when, by whom and how it was protected. This memo gives"
    ) in read.text
    assert (
        "A responder who changes the original cannot show afterwards that the evidence is "
        "what was found, so work on a verified copy."
    ) in lines
    # an item's wrapped line goes on the item; a table keeps its rows, without the border
    assert (
        "- Write down every action with the time and the name of the person who took it, and "
        "keep the notes with the evidence."
    ) in lines
    assert lines[-3:] == ["Step | Action", "1 | Note the time and the host", "2 | Capture memory"]
    # the header block set in columns keeps its lines apart
    assert "Network Working Group A. Example" in lines


_MEMO = """\
　　　　　　インシデント対応手順書（サンプル）

１．目的
　本書は、マルウェア感染が疑われる端末を発見したときの初動対応の手順を定める
ものである。担当者は本書に従って対応し、判断に迷う場合は責任者に連絡する。

２．初動対応
■ 端末の隔離
・ＬＡＮケーブルを抜く、または無線ＬＡＮを無効にする
・電源は切らない（メモリ上の証拠が失われるため）
■ 報告
（１）発見日時と端末名を記録する
（２）ＳＯＣ当番に電話で連絡する

【連絡先】
SOC当番: 内線 1234
情報システム部: 内線 5678

３．復旧
1. 端末のディスクを保全する

2. 再インストールする

3. パスワードを変更する
"""


def test_notes_typed_in_an_editor_in_shift_jis_have_their_headings_lists_and_steps(
    tmp_path: Path,
):
    path = tmp_path / "初動対応.txt"
    path.write_bytes(_MEMO.replace("\n", "\r\n").encode("cp932"))
    doc, _ = load_file(path, tmp_path, 100_000)
    assert doc.kind == "text" and doc.title == "インシデント対応手順書(サンプル)"
    assert [(h.level, h.title) for h in doc.headings] == [
        (1, "インシデント対応手順書(サンプル)"),
        (2, "1.目的"),
        (2, "2.初動対応"),
        (4, "端末の隔離"),  # the mark leads no heading's title
        (4, "報告"),
        (3, "連絡先"),  # 【】 over ■ under one section
        (2, "3.復旧"),
    ]
    lines = _lines(doc.text)
    # a paragraph wrapped by hand is joined without a space between Japanese characters
    assert (
        "本書は、マルウェア感染が疑われる端末を発見したときの初動対応の手順を定めるものである。"
        "担当者は本書に従って対応し、判断に迷う場合は責任者に連絡する。"
    ) in lines
    assert "- LANケーブルを抜く、または無線LANを無効にする" in lines
    assert "(1) 発見日時と端末名を記録する" in lines
    # numbered lines with nothing between them are the steps of a list, not sections
    assert lines[-3:] == [
        "1. 端末のディスクを保全する",
        "2. 再インストールする",
        "3. パスワードを変更する",
    ]
    # lines that are not wrapped stay apart
    assert "SOC当番: 内線 1234" in lines and "情報システム部: 内線 5678" in lines
    sections = {s.heading_path[-1]: s for s in split_sections(doc.text, doc.kind, doc.headings)[1:]}
    assert sections["連絡先"].heading_path == (
        "インシデント対応手順書(サンプル)",
        "2.初動対応",
        "連絡先",
    )
    assert sections["3.復旧"].heading_path == ("インシデント対応手順書(サンプル)", "3.復旧")


def test_marks_nest_by_the_weight_they_carry_then_by_first_appearance():
    notes = "\n".join(
        [
            "■ 連絡",  # met first, but a filled mark ranks under 【】
            "担当者に電話する。",
            "【手順】",
            "□ 隔離",  # a hollow mark under a filled one
            "ケーブルを抜く。",
            "■ 報告",
            "上長に報告する。",
            "【記録】",
            "Step 1: 時刻を記録する",  # a step under the heading before it
            "発見時刻を書く。",
        ]
    )
    read = read_plaintext(notes + "\n")
    assert [(h.level, h.title) for h in read.headings] == [
        (2, "連絡"),
        (1, "手順"),
        (3, "隔離"),
        (2, "報告"),
        (1, "記録"),
        (2, "Step 1: 時刻を記録する"),
    ]


# Word's (or LibreOffice's) "save as text": a paragraph on each line, headings as plain lines,
# list items indented, a table's cells one on each line, code as it was
_SAVED_FROM_WORD = """\
IRP-Phishing: Credential Phishing Response
Playbook Version: 1.0 Status: Active Owner: SOC
Overview
This playbook covers a user who entered their password on a phishing page. It assumes the mail was already reported.
Severity
Level
Criteria
High
The account signed in from a new country after the click
Low
No sign-in followed the click
Part 1 — Contain
1.1 Containment Actions
The analyst on duty takes these steps in order.
Step 1: Reset the password
# Force a new password at the next sign-in
az ad user update --id user@example.com --force-change-password-next-sign-in true
    • Tell the user by phone, not by mail.
Step 2: Revoke the sessions
Revoke the refresh tokens so that stolen sessions end at once.
flowchart TD
    report(Reported) --> reset(Password reset) --> revoke(Sessions revoked)
1.2 Evidence
Keep the reported mail as an attachment before anyone deletes it.
"""


def test_a_word_document_saved_as_text_has_its_plain_headings_and_no_cell_is_one(tmp_path: Path):
    path = tmp_path / "IRP-Phishing.txt"
    path.write_text(_SAVED_FROM_WORD, encoding="utf-8-sig")
    doc, _ = load_file(path, tmp_path, 100_000)
    assert doc.kind == "text"  # a shell's "# comment" lines do not make it Markdown
    assert doc.title == "IRP-Phishing: Credential Phishing Response"
    assert [(h.level, h.title) for h in doc.headings] == [
        (1, "IRP-Phishing: Credential Phishing Response"),
        (2, "Overview"),
        (2, "Part 1 — Contain"),
        (3, "1.1 Containment Actions"),
        (4, "Step 1: Reset the password"),  # a step sits under its section
        (4, "Step 2: Revoke the sessions"),
        (3, "1.2 Evidence"),
    ]
    lines = _lines(doc.text)
    # long lines are paragraphs of their own: nothing is joined in a file not wrapped by hand
    assert "Keep the reported mail as an attachment before anyone deletes it." in lines
    assert "- Tell the user by phone, not by mail." in lines
    assert "High" in lines and "Low" in lines  # cells stay text


_PARAGRAPHS = [
    "障害対応手順",
    "この手順書は、社内の業務システムで障害が発生したときに当番の担当者が最初の三十分で行うことを"
    "まとめたものです。判断に迷ったときは、独断で進めずに必ず当番の責任者に電話で相談してください。",
    "1. 状況の確認",
    "監視画面で影響を受けているサービスと利用者の範囲を確認し、チケットに時刻と内容を記録します。"
    "記録は後で振り返りを行うときの唯一の手がかりになるため、推測ではなく見たことを書きます。",
    "参考: https://intra.example.com/wiki/incident-response/first-thirty-minutes/checklist-and-contacts",
    "2. 連絡",
    "影響が利用者に及んでいる場合は、情報システム部の窓口と広報の担当者に状況を伝えます。",
]


def _wrap_japanese(paragraph: str, columns: int) -> list[str]:
    """An editor's wrap: Japanese characters two columns wide, a URL never broken."""
    if paragraph.startswith("参考: "):  # the URL does not fit: it goes on a line of its own
        return paragraph.split(" ")
    lines, line, used = [], "", 0
    for char in paragraph:
        width = 1 if char.isascii() else 2
        if used + width > columns and char not in "。、":  # 。、 may hang past the edge
            lines.append(line)
            line, used = "", 0
        line += char
        used += width
    return [*lines, line]


def test_a_file_wrapped_by_hand_reads_as_the_same_file_unwrapped():
    soft = "\n".join(_PARAGRAPHS) + "\n"
    wrapped = "\n".join(line for p in _PARAGRAPHS for line in _wrap_japanese(p, 72)) + "\n"
    assert len(wrapped.splitlines()) > len(soft.splitlines()) + 4
    as_written, as_wrapped = read_plaintext(soft), read_plaintext(wrapped)
    assert as_wrapped.text == as_written.text
    assert [h.title for h in as_wrapped.headings] == ["障害対応手順", "1. 状況の確認", "2. 連絡"]


def test_a_txt_file_written_in_markdown_is_read_as_markdown(tmp_path: Path):
    path = tmp_path / "notes.txt"
    path.write_text("# VPN 障害\n\n## 手順\n\n1. ログを確認する。\n", encoding="utf-8")
    doc, _ = load_file(path, tmp_path, 100_000)
    assert doc.kind == "markdown" and doc.title == "VPN 障害"
    assert looks_like_markdown("---\ntitle: x\n---\nbody\n")
    assert not looks_like_markdown("# a shell comment\nls -l\n# another\n")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x00\x01\x02\xff\xfe\x80" * 200, "バイナリファイル"),
        (b"   \n\n  ", "空のファイル"),
        ("Étapes: isoler l'hôte.".encode("cp1252"), "文字コードを判別できません"),
    ],
    ids=["binary", "blank", "latin-1"],
)
def test_a_txt_file_that_is_not_text_is_refused_in_japanese(
    tmp_path: Path, data: bytes, message: str
):
    path = tmp_path / "broken.txt"
    path.write_bytes(data)
    with pytest.raises(SourceFileError, match=rf"broken\.txt.*{message}"):
        load_file(path, tmp_path, 100_000)


def test_a_large_text_file_reads_in_linear_time():
    unit = "■ 見出し\n本文の行です。\n" + "セル\n" * 20 + "1. 手順\n2. 手順\n\n"
    small, large = unit * 500, unit * 5_000

    small_s = quietest(lambda: read_plaintext(small))
    large_s = quietest(lambda: read_plaintext(large), runs=2)
    read = read_plaintext(large)
    assert len(read.headings) >= 5_000
    assert large_s < 20 * max(small_s, 0.01)  # ten times the text, not a hundred times the time


def test_a_txt_runbook_is_indexed_and_answers_with_its_section(tmp_path: Path):
    data = tmp_path / "runbooks"
    data.mkdir()
    (data / "memo.txt").write_bytes(_MEMO.encode("cp932"))
    (data / "rfc9999.txt").write_text(_rfc(), encoding="utf-8")
    settings = make_settings(tmp_path / "state", data)
    # a repository's files for programs and its licence are not runbooks
    (data / "requirements.txt").write_text("pypdf>=7.1\nlxml>=6.1\n", encoding="utf-8")
    (data / "LICENSE.txt").write_text("Permission is hereby granted, free of charge.\n", "utf-8")
    report = index_runbooks(settings, data, check_allowed=False)
    assert sorted(report.added) == ["memo.txt", "rfc9999.txt"]
    assert not report.skipped
    outcome = search_runbooks(settings, "ＳＯＣ当番の内線番号は？", data=data)
    top = outcome.hits[0].chunk
    assert top.source == "memo.txt" and top.heading_path[-1] == "連絡先"
    outcome = search_runbooks(settings, "order of collection registers cache", data=data)
    top = outcome.hits[0].chunk
    assert top.source == "rfc9999.txt" and top.heading_path[-1] == "2.1 Order of Collection"
    # no chunk carries a running line
    doc, _ = load_file(data / "rfc9999.txt", data, 100_000)
    assert not any("[Page" in c.text for c in chunk_document(doc, 500, 50))


@pytest.mark.parametrize(
    ("line", "depth"),
    [
        ("Part 2 — Contain", 1),
        ("Appendix A. Checklist", 1),
        ("CHAPTER IV", 1),
        ("付録1 連絡先一覧", 1),
        ("2.1 Order of Collection", 2),
        ("1 目的", 1),
        ("Part of the team", 0),  # a word, not a part's number
        ("Annex to the plan", 0),
        ("4 business days (Form 8-K)", 0),  # a number without a dot before English: a cell
    ],
)
def test_numbered_headings_of_plain_text(line: str, depth: int):
    from core.ingest.plaintext import _numbered_depth

    assert _numbered_depth(line) == depth
