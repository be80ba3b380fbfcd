"""Checks on the sample runbook corpus in data/runbooks/ (the app's embedded default corpus)."""

from __future__ import annotations

import ipaddress
import re
from functools import cache
from pathlib import Path

import pytest
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parents[2]
RUNBOOKS = ROOT / "data" / "runbooks"
SOURCES = ROOT / "data" / "runbook_sources"
MARKDOWN = sorted(RUNBOOKS.glob("*.md"))
PDFS = sorted(RUNBOOKS.glob("*.pdf"))

JAPANESE_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")
NUMBERED_STEP = re.compile(r"^\s*\d+\.\s+\S", re.MULTILINE)
PDF_HEADING = re.compile(r"^\d+(?:\.\d+)*\.?\s+\S")
DANGEROUS = re.compile(
    r"削除|停止|無効化|シャットダウン|初期化|消去|rm -rf|DROP TABLE|format [A-Z]:"
    r"|Remove-Item[^\n]*-Recurse|/active:no|shutdown /s",
    re.IGNORECASE,
)
APPROVAL = re.compile(r"承認を得|の承認|承認済み")
DOC_NETWORKS = [
    ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")
]


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@cache
def _pdf_text(path: Path) -> str:
    return "\n".join(page.extract_text() or "" for page in PdfReader(path).pages)


def _sections(text: str) -> list[str]:
    """Split Markdown at every heading so that nearby wording stays together."""
    return re.split(r"^#{1,6} ", text, flags=re.MULTILINE)


def test_corpus_has_enough_runbooks() -> None:
    assert len(MARKDOWN) >= 15, [p.name for p in MARKDOWN]
    assert len(PDFS) >= 2, [p.name for p in PDFS]


def test_folder_holds_only_runbooks_with_kebab_case_names() -> None:
    for path in RUNBOOKS.iterdir():
        assert path.suffix in {".md", ".pdf"}, f"not a runbook: {path.name}"
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", path.stem), path.name


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: p.name)
def test_markdown_runbook_structure(path: Path) -> None:
    text = path.read_bytes().decode("utf-8")  # strict: fails on anything but UTF-8
    lines = text.splitlines()
    assert lines[0].startswith("# ") and len(lines[0]) > 3, "first line must be a '# ' title"
    assert sum(line.startswith("## ") for line in lines) >= 3
    assert NUMBERED_STEP.search(text), "no numbered step"
    japanese = len(JAPANESE_CHAR.findall(text))
    assert 400 <= japanese <= 1500, f"{japanese} Japanese characters"


def test_titles_are_distinct_and_total_size_is_large_enough() -> None:
    texts = [p.read_text(encoding="utf-8") for p in MARKDOWN]
    titles = [t.splitlines()[0] for t in texts]
    assert len(set(titles)) == len(titles)
    assert sum(len(t) for t in texts) >= 15_000


def test_dangerous_operations_come_with_approval_steps() -> None:
    flagged = [
        path.name
        for path in MARKDOWN
        if any(
            DANGEROUS.search(section) and APPROVAL.search(section)
            for section in _sections(path.read_text(encoding="utf-8"))
        )
    ]
    assert len(flagged) >= 3, flagged


def test_only_example_addresses_and_documentation_ips() -> None:
    for path in [*MARKDOWN, *SOURCES.glob("*.txt")]:
        text = path.read_text(encoding="utf-8")
        for domain in re.findall(r"[\w.+-]+@([\w.-]+)", text):
            assert domain.endswith(("example.jp", "example.com", "corp.example")), (
                path.name,
                domain,
            )
        for address in re.findall(r"(?<![\d.])(\d{1,3}(?:\.\d{1,3}){3})(?![\d.])", text):
            ip = ipaddress.ip_address(address)
            assert any(ip in net for net in DOC_NETWORKS), (path.name, address)


@pytest.mark.parametrize("path", PDFS, ids=lambda p: p.name)
def test_pdf_text_round_trips_from_its_source(path: Path) -> None:
    source = SOURCES / f"{path.stem}.txt"
    assert source.is_file(), f"no source for {path.name}"
    source_lines = [ln.strip() for ln in source.read_text(encoding="utf-8").splitlines()]
    source_lines = [ln for ln in source_lines if ln]
    text = _pdf_text(path)
    extracted_lines = {ln.strip() for ln in text.splitlines()}
    squashed = _squash(text)

    headings = [ln for ln in source_lines[1:] if PDF_HEADING.match(ln)]
    assert "1. 目的" in headings
    for heading in headings:  # one per line, no leading '#', so a loader can split on them
        assert heading in extracted_lines, heading
    for line in source_lines:  # every sentence verbatim, modulo whitespace and line wraps
        assert _squash(line) in squashed, line
    assert not any(ln.lstrip().startswith("#") for ln in text.splitlines())


def test_pdfs_are_small() -> None:
    for path in PDFS:
        assert path.stat().st_size < 300 * 1024, path.name
