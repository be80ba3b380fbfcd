"""Loaders on real files: Markdown titles, PDF text (the shipped sample PDFs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import SourceFileError
from core.ingest.loaders import load_file
from tests.conftest import SAMPLE_RUNBOOKS


def test_markdown_title_hash_and_normalization(tmp_path: Path):
    path = tmp_path / "x.md"
    path.write_bytes("\ufeff# ＶＰＮ　障害\r\n\r\n\r\n\r\n本文　です。\r\n".encode())
    doc, size = load_file(path, tmp_path, 10_000)
    assert doc.title == "VPN 障害"
    assert doc.kind == "markdown" and doc.doc_id == "x.md" and size == path.stat().st_size
    assert "\r" not in doc.text and "\n\n\n" not in doc.text
    assert len(doc.content_hash) == 64


_RUNBOOK_JA = "# VPN 障害対応\n\n## 初動対応\n\n1. 端末をネットワークから切り離す。\n2. チケットに記録する。\n"


@pytest.mark.parametrize(
    "encode",
    [
        lambda text: text.encode("cp932"),  # Windows' Japanese code page (Shift_JIS)
        lambda text: text.encode("euc_jp"),
        lambda text: b"\xff\xfe" + text.encode("utf-16-le"),  # Notepad's "Unicode"
        lambda text: b"\xfe\xff" + text.encode("utf-16-be"),
        lambda text: text.encode("utf-8-sig"),
    ],
    ids=["cp932", "euc-jp", "utf-16-le", "utf-16-be", "utf-8-bom"],
)
def test_markdown_in_the_encodings_japanese_teams_keep_it_in_is_read(tmp_path: Path, encode):
    path = tmp_path / "vpn.md"
    path.write_bytes(encode(_RUNBOOK_JA))
    doc, _ = load_file(path, tmp_path, 10_000)
    assert doc.title == "VPN 障害対応"
    assert "1. 端末をネットワークから切り離す。" in doc.text.splitlines()


@pytest.mark.parametrize(
    "data",
    [
        "# Étapes\n\nIsoler l'hôte, prévenir l'équipe.\n".encode("cp1252"),  # no Japanese
        b"\xff\xfe# broken\x00",  # a UTF-16 mark on bytes that are not UTF-16
    ],
)
def test_markdown_in_no_known_encoding_is_refused_in_japanese(tmp_path: Path, data: bytes):
    path = tmp_path / "notes.md"
    path.write_bytes(data)
    with pytest.raises(SourceFileError, match=r"notes\.md.*文字コードを判別できません"):
        load_file(path, tmp_path, 10_000)


def test_a_title_that_is_only_the_file_name_is_shown_but_not_indexed(tmp_path: Path):
    from core.text.chunking import chunk_document

    path = tmp_path / "during_an_incident.md"
    path.write_text(
        "重大インシデントの対処方法です。\n\n## 落ち着いて\n\n慌てずに状況を確認する。\n", "utf-8"
    )
    doc, _ = load_file(path, tmp_path, 10_000)
    assert doc.title == "during_an_incident" and doc.title_from_name
    intro, calm = chunk_document(doc, 500, 50)
    assert intro.title == "during_an_incident"  # citations still name the page
    assert intro.text == "重大インシデントの対処方法です。"  # the index does not read it
    assert calm.text.startswith("落ち着いて\n")
    titled = tmp_path / "t.md"
    titled.write_text("---\ntitle: 対処方法\n---\n本文です。\n", "utf-8")
    doc, _ = load_file(titled, tmp_path, 10_000)
    assert not doc.title_from_name
    assert chunk_document(doc, 500, 50)[0].text == "対処方法\n本文です。"


@pytest.mark.parametrize("name", ["pdf-incident-triage.pdf", "pdf-cloud-account-compromise.pdf"])
def test_sample_pdfs_load_with_numbered_headings(name):
    doc, _ = load_file(SAMPLE_RUNBOOKS / name, SAMPLE_RUNBOOKS, 10_000_000)
    assert doc.kind == "pdf"
    lines = doc.text.splitlines()
    assert any(line.startswith("1. ") for line in lines)
    # wrapped sentences are joined back: no line ends in the middle of a sentence and
    # continues with a fragment such as 「る。」
    assert not any(len(line) <= 4 and line.endswith("。") for line in lines)


def test_unsupported_suffix(tmp_path: Path):
    path = tmp_path / "a.rtf"
    path.write_text("{\\rtf1 hello}", encoding="utf-8")
    with pytest.raises(SourceFileError, match="対応していない形式"):
        load_file(path, tmp_path, 10_000)
