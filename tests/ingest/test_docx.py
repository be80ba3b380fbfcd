"""Word documents: headings from paragraph styles, lists, tables; files that are not Word files."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE

from core.errors import SourceFileError
from core.ingest.loaders import load_file
from core.text.chunking import chunk_document


def _save(document, path: Path) -> Path:
    document.save(str(path))
    return path


@pytest.fixture
def word_runbook(tmp_path: Path) -> Path:
    d = docx.Document()
    d.core_properties.title = "テンプレート名"
    d.add_paragraph("VPN 障害対応手順書", style="Title")
    d.add_heading("目的", level=1)
    d.add_paragraph("VPN に接続できない場合の切り分けを定める。")
    d.add_heading("初動", level=1)
    d.add_heading("確認手順", level=2)
    for step in ("FortiGate のログを確認する。", "証明書の期限を確認する。", "結果を記録する。"):
        d.add_paragraph(step, style="List Number")
    d.add_paragraph("影響範囲の例:")
    d.add_paragraph("リモートワーク利用者", style="List Bullet")
    d.add_paragraph("拠点間接続", style="List Bullet 2")
    table = d.add_table(rows=3, cols=3)
    for r, row in enumerate(
        [["重大度", "例", "期限"], ["高", "全社停止", "15分"], ["中", "一部利用者", ""]]
    ):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    japanese = d.styles.add_style("見出し 2", WD_STYLE_TYPE.PARAGRAPH)
    japanese.base_style = d.styles["Normal"]
    d.add_heading("復旧", level=1)
    d.add_paragraph("連絡先", style=japanese)
    d.add_paragraph("SOC 当番 03-0000-0000")
    custom = d.styles.add_style("手順見出し", WD_STYLE_TYPE.PARAGRAPH)
    custom.base_style = d.styles["Heading 2"]
    d.add_paragraph("事後対応", style=custom)
    d.add_paragraph("報告書を作成する。")
    return _save(d, tmp_path / "vpn.docx")


def test_headings_come_from_paragraph_styles(word_runbook: Path):
    doc, _ = load_file(word_runbook, word_runbook.parent, 10_000_000)
    assert doc.kind == "docx" and doc.title == "VPN 障害対応手順書"
    got = [(h.level, h.title) for h in doc.headings]
    # Title is level 1 and Heading n becomes n + 1, as "#" above "##" in Markdown.
    assert got == [
        (1, "VPN 障害対応手順書"),
        (2, "目的"),
        (2, "初動"),
        (3, "確認手順"),
        (2, "復旧"),
        (3, "連絡先"),  # a style named 見出し 2
        (3, "事後対応"),  # a custom style based on Heading 2
    ]
    for h in doc.headings:
        assert doc.text[h.start : h.end] == h.title


def test_lists_and_tables_keep_their_structure(word_runbook: Path):
    doc, _ = load_file(word_runbook, word_runbook.parent, 10_000_000)
    lines = doc.text.split("\n")
    start = lines.index("1. FortiGate のログを確認する。")
    assert lines[start : start + 3] == [
        "1. FortiGate のログを確認する。",
        "2. 証明書の期限を確認する。",
        "3. 結果を記録する。",
    ]
    assert "- リモートワーク利用者" in lines and "  - 拠点間接続" in lines
    assert "重大度 | 例 | 期限" in lines and "高 | 全社停止 | 15分" in lines
    assert "中 | 一部利用者 | " in lines or "中 | 一部利用者 |" in lines


def test_chunks_carry_the_heading_path(word_runbook: Path):
    doc, _ = load_file(word_runbook, word_runbook.parent, 10_000_000)
    chunks = chunk_document(doc, 500, 50)
    steps = next(c for c in chunks if "FortiGate" in c.body)
    assert steps.heading_path == ("VPN 障害対応手順書", "初動", "確認手順")
    contact = next(c for c in chunks if "03-0000-0000" in c.body)
    assert contact.heading_path == ("VPN 障害対応手順書", "復旧", "連絡先")
    assert all(doc.text[c.start : c.end] == c.body for c in chunks)


def test_document_without_title_style_uses_heading_one_levels(tmp_path: Path):
    d = docx.Document()
    d.add_heading("概要", level=1)
    d.add_paragraph("本文。")
    d.add_heading("詳細", level=2)
    d.add_paragraph("詳細の本文。")
    doc, _ = load_file(_save(d, tmp_path / "a.docx"), tmp_path, 10_000_000)
    assert [(h.level, h.title) for h in doc.headings] == [(1, "概要"), (2, "詳細")]
    assert doc.title == "概要"


def test_headings_typed_by_hand_are_read_from_their_look(tmp_path: Path):
    # a document typed without heading styles, as Japanese business documents often are: every
    # paragraph Normal, headings set bold or larger and numbered by hand; a bold sentence, a
    # bold list item and a bold run inside body text are no headings
    from docx.shared import Pt

    d = docx.Document()
    d.styles["Normal"].font.size = Pt(10.5)

    def para(text: str, size: float = 10.5, bold: bool = False, style: str | None = None):
        paragraph = d.add_paragraph(style=style)
        run = paragraph.add_run(text)
        run.font.size, run.bold = Pt(size), bold
        return paragraph

    para("ランサムウェア対応手順書", 18, True)
    para("1. 目的", 14, True)
    para("ランサムウェア感染が疑われるときの初動を定める。")
    para("2. 初動対応", 14, True)
    para("2.1 端末の隔離", 12, True)
    para("LAN ケーブルを抜き、無線を切る。電源は切らない。")
    para("本番環境のサーバーは勝手に停止しないこと。", bold=True)
    para("管理者へ連絡する", bold=True, style="List Bullet")
    mixed = para("証拠は")
    mixed.add_run("必ず").bold = True
    mixed.add_run("保全する。")
    para("注意事項", bold=True)
    para("身代金は支払わない。")
    para("3. 復旧", 14, True)
    para("3.1 再構築", 14, True)  # as large as its chapter, numbered under it
    para("1. 新しい端末の準備", bold=True)  # numbered again inside 3.1, set as its subsections
    para("OS を入れ直す。")
    doc, _ = load_file(_save(d, tmp_path / "manual.docx"), tmp_path, 10_000_000)
    assert doc.title == "ランサムウェア対応手順書"
    assert [(h.level, h.title) for h in doc.headings] == [
        (1, "ランサムウェア対応手順書"),
        (2, "1. 目的"),
        (2, "2. 初動対応"),
        (3, "2.1 端末の隔離"),
        (4, "注意事項"),
        (2, "3. 復旧"),
        (3, "3.1 再構築"),
        (4, "1. 新しい端末の準備"),
    ]
    assert "- 管理者へ連絡する" in doc.text.splitlines()
    chunks = chunk_document(doc, 60, 0)
    (isolate,) = [c for c in chunks if "LAN ケーブルを抜き" in c.body]
    assert isolate.heading_path[-2:] == ("2. 初動対応", "2.1 端末の隔離")


def test_a_table_of_contents_typed_by_hand_is_dropped_and_heads_nothing(tmp_path: Path):
    d = docx.Document()
    d.add_paragraph("情報漏えい対応手順書", style="Title")
    d.add_heading("目次", level=1)
    d.add_paragraph("概要 ........................ 2")
    d.add_paragraph("初動対応\t3")  # a tab leader: the dots are drawn, not typed
    d.add_paragraph("")
    d.add_paragraph("本書は社外秘です。改訂は情報セキュリティ委員会が行う。")
    d.add_heading("概要", level=1)
    d.add_paragraph("漏えいの疑いを受けたら、対象データと経路を特定する。")
    d.add_heading("初動対応", level=1)
    d.add_paragraph("アクセスログを保全し、CSIRT に報告する。")
    path = _save(d, tmp_path / "leak.docx")
    doc, _ = load_file(path, tmp_path, 10_000_000)
    assert [h.title for h in doc.headings] == ["情報漏えい対応手順書", "概要", "初動対応"]
    assert "........" not in doc.text and "初動対応\t3" not in doc.text
    assert doc.text.count("概要") == 1
    paths = {c.body.split("\n")[0]: c.heading_path for c in chunk_document(doc, 500, 50)}
    # what follows the contents is the title's, not under a 「目次」 heading
    assert paths["本書は社外秘です。改訂は情報セキュリティ委員会が行う。"] == (
        "情報漏えい対応手順書",
    )
    assert paths["アクセスログを保全し、CSIRT に報告する。"] == ("情報漏えい対応手順書", "初動対応")


def test_not_a_zip_is_skipped_with_a_message_naming_it(tmp_path: Path):
    path = tmp_path / "memo.docx"
    path.write_bytes(b"This is a plain text file renamed to .docx\n")
    with pytest.raises(SourceFileError) as info:
        load_file(path, tmp_path, 10_000)
    assert "memo.docx" in info.value.user_message and "zip" in info.value.user_message


def test_old_binary_word_file_is_named_as_such(tmp_path: Path):
    path = tmp_path / "old.docx"
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600)
    with pytest.raises(SourceFileError, match=r"old\.docx.*\.doc"):
        load_file(path, tmp_path, 10_000)


def test_zip_of_something_else_is_skipped(tmp_path: Path):
    path = tmp_path / "photos.docx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("photo1.txt", "not a word document")
    with pytest.raises(SourceFileError) as info:
        load_file(path, tmp_path, 10_000)
    assert "photos.docx" in info.value.user_message and "Word" in info.value.user_message


def test_zip_bomb_is_refused_before_unpacking(tmp_path: Path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", "0" * 2_000_000)
    path = tmp_path / "bomb.docx"
    path.write_bytes(buffer.getvalue())
    assert path.stat().st_size < 20_000
    with pytest.raises(SourceFileError, match=r"bomb\.docx.*展開後"):
        load_file(path, tmp_path, 20_000)


def test_a_mermaid_diagram_in_code_paragraphs_reads_as_its_messages(tmp_path: Path):
    # a page pasted into Word with its mermaid block unrendered: one code paragraph per line
    d = docx.Document()
    d.add_heading("Account compromise", level=1)
    code = d.styles.add_style("Preformatted Text", WD_STYLE_TYPE.PARAGRAPH)
    for line in [
        "sequenceDiagram",
        "    participant IdP as Identity provider",
        "    IdP->>SOC: Risk detection",
        "    SOC->>IdP: Revoke all sessions",
    ]:
        d.add_paragraph(line, style=code)
    d.add_paragraph("Then reset the password.", style="Heading 2")
    d.add_paragraph("Reset it with the user on the phone.")
    doc, _ = load_file(_save(d, tmp_path / "a.docx"), tmp_path, 10_000_000)
    assert "- Identity provider → SOC: Risk detection\n- SOC → Identity provider" in doc.text
    assert "participant" not in doc.text and "sequenceDiagram" not in doc.text
    assert [h.title for h in doc.headings] == ["Account compromise", "Then reset the password."]
