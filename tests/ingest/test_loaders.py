"""Loaders on real files: Markdown titles, PDF text (the shipped sample PDFs), unwrapping."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import SourceFileError
from core.ingest.loaders import load_file, unwrap_pdf_lines
from tests.conftest import SAMPLE_RUNBOOKS


def test_markdown_title_hash_and_normalization(tmp_path: Path):
    path = tmp_path / "x.md"
    path.write_bytes("\ufeff# ＶＰＮ　障害\r\n\r\n\r\n\r\n本文　です。\r\n".encode())
    doc, size = load_file(path, tmp_path, 10_000)
    assert doc.title == "VPN 障害"
    assert doc.kind == "markdown" and doc.doc_id == "x.md" and size == path.stat().st_size
    assert "\r" not in doc.text and "\n\n\n" not in doc.text
    assert len(doc.content_hash) == 64


@pytest.mark.parametrize("name", ["pdf-incident-triage.pdf", "pdf-cloud-account-compromise.pdf"])
def test_sample_pdfs_load_with_numbered_headings(name):
    doc, _ = load_file(SAMPLE_RUNBOOKS / name, SAMPLE_RUNBOOKS, 10_000_000)
    assert doc.kind == "pdf"
    lines = doc.text.splitlines()
    assert any(line.startswith("1. ") for line in lines)
    # wrapped sentences are joined back: no line ends in the middle of a sentence and
    # continues with a fragment such as 「る。」
    assert not any(len(line) <= 4 and line.endswith("。") for line in lines)


def test_unwrap_keeps_headings_steps_and_commands():
    wrapped = (
        "1. 目的\n"
        "本手順は、SIEMやEDRのアラート、従業員からの通報を受け付けた際に、事象がインシデントに該当\n"
        "するかを判断する。\n"
        "(1) 受付から5分以内にチケットを起票し、検知元、検知時刻、対象ホストを記録す\n"
        "る。\n"
        "(2) 次の手順。\n"
        "index=proxy dest_ip=203.0.113.45 | stats count by src_host"
    )
    lines = unwrap_pdf_lines(wrapped).splitlines()
    assert lines[0] == "1. 目的"
    assert lines[1].endswith("インシデントに該当するかを判断する。")
    assert lines[2].endswith("対象ホストを記録する。")
    assert lines[3] == "(2) 次の手順。"
    assert lines[4].startswith("index=proxy")


def test_unsupported_suffix(tmp_path: Path):
    path = tmp_path / "a.txt"
    path.write_text("hello", encoding="utf-8")
    with pytest.raises(SourceFileError, match="対応していない形式"):
        load_file(path, tmp_path, 10_000)
