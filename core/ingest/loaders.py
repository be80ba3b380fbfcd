"""Loaders: one source file -> one normalized ``Document``, or a ``SourceFileError`` naming it.

Bad files (empty, binary, non-UTF-8 Markdown, oversized, encrypted or broken PDFs, PDFs without
a text layer, .docx files that are not Word documents, HTML pages without text) raise with a Japanese message; the indexer skips them and indexes the rest.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
from datetime import UTC, datetime
from pathlib import Path

from core.errors import SourceFileError
from core.ingest.docx import read_docx
from core.ingest.html import read_html
from core.ingest.markdown import read_markdown
from core.schemas.documents import Document, Heading
from core.text.normalize import normalize_text

log = logging.getLogger(__name__)

MARKDOWN_SUFFIXES = (".md", ".markdown")
PDF_SUFFIXES = (".pdf",)
DOCX_SUFFIXES = (".docx",)
HTML_SUFFIXES = (".html", ".htm")
SUPPORTED_SUFFIXES = MARKDOWN_SUFFIXES + PDF_SUFFIXES + DOCX_SUFFIXES + HTML_SUFFIXES
SUPPORTED_SUFFIXES_TEXT = " / ".join(SUPPORTED_SUFFIXES)  # for messages: ".md / .markdown / ..."

# PDF text comes back wrapped at the page width. A line is joined to the next when it is long
# (it reached the wrap width), does not end a sentence, and the next line does not start a new
# item (a heading number, a step marker, a bullet).
_WRAP_MIN_CHARS = 35
_SENTENCE_END = tuple("。．！？!?」』）)")
_ITEM_START = re.compile(r"^\s*(\(\d+\)|\d+(\.\d+)*[.)．]?\s|第\d+|[・\-*•■□◆●]|手順\d+|Sev\d)")


def unwrap_pdf_lines(text: str) -> str:
    """Join the lines that a PDF wrapped in the middle of a sentence."""
    out: list[str] = []
    for line in text.splitlines():
        prev = out[-1] if out else ""
        if (
            prev
            and line.strip()
            and len(prev) >= _WRAP_MIN_CHARS
            and not prev.rstrip().endswith(_SENTENCE_END)
            and not _ITEM_START.match(line)
        ):
            joiner = " " if prev[-1:].isascii() and line[:1].isascii() else ""
            out[-1] = prev.rstrip() + joiner + line.lstrip()
        else:
            out.append(line)
    return "\n".join(out)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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


def decode_markdown(data: bytes, name: str, path: str) -> str:
    if b"\x00" in data[:8192]:
        raise SourceFileError(
            path, f"「{name}」はテキストではなくバイナリファイルのようです。スキップしました。"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceFileError(
            path,
            f"「{name}」は UTF-8 ではありません（Shift_JIS などの可能性があります）。"
            "UTF-8 で保存し直してください。スキップしました。",
            detail=str(exc),
        ) from exc


def extract_pdf_text(data: bytes, name: str, path: str) -> tuple[str, str | None]:
    """Text of every page (pages separated by a blank line) and the PDF's own title."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise SourceFileError(
                path,
                f"「{name}」はパスワードで保護されているため読み込めません。スキップしました。",
            )
        pages = [(page.extract_text() or "") for page in reader.pages]
        meta_title = (reader.metadata or {}).get("/Title") if reader.metadata else None
    except SourceFileError:
        raise
    except (PdfReadError, Exception) as exc:  # pypdf raises many types on broken files
        raise SourceFileError(
            path,
            f"「{name}」は壊れているか PDF として読み込めません。スキップしました。",
            detail=f"{type(exc).__name__}: {exc}",
        ) from exc
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text.strip():
        raise SourceFileError(
            path,
            f"「{name}」からテキストを抽出できませんでした（画像のみの PDF の可能性があります）。"
            "スキップしました。",
        )
    return text, str(meta_title) if meta_title else None


def load_file(path: Path, root: Path, max_bytes: int) -> tuple[Document, int]:
    """Load one supported file under ``root``; returns the document and its byte size."""
    name = path.relative_to(root).as_posix()
    data = read_source_bytes(path, max_bytes)
    suffix = path.suffix.lower()
    headings: tuple[Heading, ...] | None = None
    if suffix in MARKDOWN_SUFFIXES:
        markdown = read_markdown(decode_markdown(data, name, str(path)), name)
        text, title, kind = markdown.text, markdown.title or path.stem, "markdown"
    elif suffix in DOCX_SUFFIXES:
        word = read_docx(data, name, str(path), max_bytes)
        text, title, kind, headings = word.text, word.title or path.stem, "docx", word.headings
    elif suffix in HTML_SUFFIXES:
        page = read_html(data, name, str(path))
        text, title, kind, headings = page.text, page.title or path.stem, "html", page.headings
    elif suffix in PDF_SUFFIXES:
        raw, meta_title = extract_pdf_text(data, name, str(path))
        text = normalize_text(unwrap_pdf_lines(raw))
        first_line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        title = meta_title or (first_line if len(first_line) <= 60 else path.stem)
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
        content_hash=content_hash(data),
        kind=kind,
        headings=headings,
    )
    return doc, len(data)
