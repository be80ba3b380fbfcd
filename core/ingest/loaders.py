"""Loaders: one source file -> one normalized ``Document``, or a ``SourceFileError`` naming it.

Bad files (empty, binary, Markdown or plain text in no encoding a Japanese team keeps text in,
oversized, encrypted or broken PDFs, PDFs without a text layer, .docx files that are not Word
documents, HTML pages without text) raise with a Japanese message; the indexer skips them and
indexes the rest.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import UTC, datetime
from pathlib import Path

from core.errors import SourceFileError
from core.ingest.docx import read_docx
from core.ingest.encoding import decode_text
from core.ingest.html import read_html
from core.ingest.markdown import read_markdown
from core.ingest.pdf import PdfText, read_pdf
from core.ingest.plaintext import looks_like_markdown, read_plaintext
from core.schemas.documents import Document, Heading

log = logging.getLogger(__name__)

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")
PDF_SUFFIXES = (".pdf",)
DOCX_SUFFIXES = (".docx",)
HTML_SUFFIXES = (".html", ".htm")
TEXT_SUFFIXES = (".txt",)
SUPPORTED_SUFFIXES = (
    MARKDOWN_SUFFIXES + PDF_SUFFIXES + DOCX_SUFFIXES + HTML_SUFFIXES + TEXT_SUFFIXES
)
SUPPORTED_SUFFIXES_TEXT = " / ".join(SUPPORTED_SUFFIXES)  # for messages: ".md / .markdown / ..."


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def document_hash(data: bytes, site_title: str | None = None) -> str:
    """What a document is read from: its bytes, and the title its site gives it (a MkDocs nav
    title, ``core.ingest.mkdocs``), so that a renamed page is read again."""
    if not site_title:
        return content_hash(data)
    return content_hash(data + b"\0nav-title:" + site_title.encode("utf-8"))


def read_source_bytes(path: Path, max_bytes: int) -> bytes:
    """The file's bytes, refusing oversized and empty files with a message naming the file."""
    name = path.name
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise SourceFileError(
                str(path),
                f"「{name}」は大きすぎるためスキップしました（{size / 1e6:.1f} MB、"
                f"上限 {max_bytes / 1e6:.0f} MB）。",
            )
        data = path.read_bytes()
    except OSError as exc:
        raise SourceFileError(
            str(path), f"「{name}」を読み込めませんでした。", detail=str(exc)
        ) from exc
    if not data.strip():
        raise SourceFileError(str(path), f"「{name}」は空のファイルのためスキップしました。")
    return data


def _mtime_iso(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, tz=UTC).isoformat(timespec="seconds")


def decode_source_text(data: bytes, name: str, path: str) -> str:
    """A Markdown or plain-text file as text (``core.ingest.encoding``); one in no encoding a
    Japanese team keeps text in is refused with a Japanese message."""
    text = decode_text(data, name, path)
    if text is None:
        raise SourceFileError(
            path,
            f"「{name}」の文字コードを判別できません（UTF-8・UTF-16・Shift_JIS・EUC-JP のいずれでも"
            "ありません）。UTF-8 で保存し直してください。スキップしました。",
        )
    return text


def extract_pdf_text(data: bytes, name: str, path: str) -> PdfText:
    """The PDF read into normalized text, headings and title (see ``core.ingest.pdf``)."""
    return read_pdf(data, name, path)


def load_file(
    path: Path, root: Path, max_bytes: int, site_title: str | None = None
) -> tuple[Document, int]:
    """Load one supported file under ``root``; returns the document and its byte size.
    ``site_title``: the title the site gives a Markdown page (``core.ingest.mkdocs``), used when
    the page has neither a front-matter title nor a first-level heading."""
    name = path.relative_to(root).as_posix()
    data = read_source_bytes(path, max_bytes)
    suffix = path.suffix.lower()
    headings: tuple[Heading, ...] | None = None
    link_lines: frozenset[str] = frozenset()
    decoded = decode_source_text(data, name, str(path)) if suffix in TEXT_SUFFIXES else None
    if decoded is not None and not looks_like_markdown(decoded):
        plain = read_plaintext(decoded)
        text, title, kind, headings = plain.text, plain.title or path.stem, "text", plain.headings
    elif suffix in MARKDOWN_SUFFIXES or decoded is not None:
        source = decoded if decoded is not None else decode_source_text(data, name, str(path))
        markdown = read_markdown(source, name)
        title = markdown.title or site_title or path.stem
        text, kind = markdown.text, "markdown"
        link_lines = markdown.link_lines
    elif suffix in DOCX_SUFFIXES:
        word = read_docx(data, name, str(path), max_bytes)
        text, title, kind, headings = word.text, word.title or path.stem, "docx", word.headings
    elif suffix in HTML_SUFFIXES:
        page = read_html(data, name, str(path))
        text, title, kind, headings = page.text, page.title or path.stem, "html", page.headings
        link_lines = page.link_lines
    elif suffix in PDF_SUFFIXES:
        pdf = extract_pdf_text(data, name, str(path))
        text, headings = pdf.text, pdf.headings
        first_line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        title = pdf.title or (first_line if len(first_line) <= 60 else path.stem)
        kind = "pdf"
    else:
        raise SourceFileError(
            str(path), f"「{name}」は対応していない形式です（{SUPPORTED_SUFFIXES_TEXT}）。"
        )
    if not text.strip():
        raise SourceFileError(str(path), f"「{name}」には本文がありません。スキップしました。")
    doc = Document(
        doc_id=name,
        source=name,
        title=title,
        text=text,
        updated_at=_mtime_iso(path),
        content_hash=document_hash(data, site_title if suffix in MARKDOWN_SUFFIXES else None),
        kind=kind,
        headings=headings,
        link_lines=link_lines,
        title_from_name=title == path.stem,
    )
    return doc, len(data)
