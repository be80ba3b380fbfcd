"""How one source file is read: its title, heading tree and chunks, as the runbook index cuts it.

``inspect_file`` runs exactly the loader (``load_file``) and the chunker (``chunk_document``
with ``Settings.runbook_chunk_size`` / ``runbook_chunk_overlap``) that the runbook index uses,
so an operator can see why an answer cites what it cites (``python -m core inspect FILE``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from core.errors import InputError
from core.ingest.folder import check_path_text
from core.ingest.loaders import MARKDOWN_SUFFIXES, load_file
from core.ingest.mkdocs import site_title_for
from core.schemas.documents import HEADING_SEPARATOR
from core.settings import Settings
from core.text.chunking import chunk_document, split_sections

PREVIEW_CHARS = 60


@dataclass(frozen=True, slots=True)
class InspectedHeading:
    level: int
    title: str
    path: list[str]
    start: int  # the heading line's span in the document text
    end: int


@dataclass(frozen=True, slots=True)
class InspectedChunk:
    chunk_id: str
    heading_path: list[str]
    start: int
    end: int
    chars: int
    preview: str  # the first PREVIEW_CHARS characters, line breaks shown as "↵"
    navigation: bool = False  # a list of links to other pages: ranked down in search


@dataclass(frozen=True, slots=True)
class Inspection:
    file: str
    title: str
    kind: str
    chars: int
    chunk_size: int
    chunk_overlap: int
    headings: list[InspectedHeading]
    chunks: list[InspectedChunk]

    def as_dict(self) -> dict:
        return asdict(self)


def _preview(text: str) -> str:
    flat = text.replace("\n", "↵")
    return flat[:PREVIEW_CHARS] + ("…" if len(flat) > PREVIEW_CHARS else "")


def inspect_file(path: str | Path, settings: Settings) -> Inspection:
    """Load and chunk one file as the runbook index would; raises ``InputError`` (Japanese)."""
    check_path_text(path)
    file = Path(path).expanduser()
    if not file.exists():
        raise InputError(f"ファイル「{path}」が見つかりません。パスを確認してください。")
    if not file.is_file():
        raise InputError(f"「{path}」はファイルではありません。")
    file = file.resolve()
    site_title = site_title_for(file) if file.suffix.lower() in MARKDOWN_SUFFIXES else None
    doc, _ = load_file(file, file.parent, settings.max_file_bytes, site_title)
    size, overlap = settings.runbook_chunk_size, settings.runbook_chunk_overlap
    headings = [
        InspectedHeading(
            level=s.level,
            title=s.heading_path[-1],
            path=list(s.heading_path),
            start=s.heading_start,
            end=s.heading_end,
        )
        for s in split_sections(doc.text, doc.kind, doc.headings)
        if s.level > 0
    ]
    chunks = [
        InspectedChunk(
            chunk_id=c.chunk_id,
            heading_path=list(c.heading_path),
            start=c.start,
            end=c.end,
            chars=c.end - c.start,
            preview=_preview(c.body),
            navigation=c.navigation,
        )
        for c in chunk_document(doc, size, overlap)
    ]
    return Inspection(
        file=str(file),
        title=doc.title,
        kind=doc.kind,
        chars=len(doc.text),
        chunk_size=size,
        chunk_overlap=overlap,
        headings=headings,
        chunks=chunks,
    )


def render_inspection(result: Inspection) -> str:
    """The inspection as text for the terminal (Japanese labels)."""
    lines = [
        f"ファイル: {result.file}",
        f"形式: {result.kind} ／ 本文 {result.chars} 文字",
        f"タイトル: {result.title}",
        f"見出し（{len(result.headings)} 件）:",
    ]
    if not result.headings:
        lines.append("  （見出しなし: 文書全体が 1 つのセクション）")
    for h in result.headings:
        indent = "  " * len(h.path)
        lines.append(f"{indent}{'#' * h.level} {h.title}  [{h.start}-{h.end}]")
    lines.append(
        f"チャンク（{len(result.chunks)} 件、サイズ {result.chunk_size} 文字・"
        f"重なり {result.chunk_overlap} 文字）:"
    )
    for n, c in enumerate(result.chunks):
        path = HEADING_SEPARATOR.join(c.heading_path) or "（見出しなし）"
        mark = "  ［リンク一覧: 検索では順位を下げる］" if c.navigation else ""
        lines.append(f"  [{n}] {path}  {c.start}-{c.end}（{c.chars} 文字）{mark}")
        lines.append(f"      {c.preview}")
    return "\n".join(lines)
