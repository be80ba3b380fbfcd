"""The typed path for source data: a loaded ``Document`` is cut into ``Chunk``s.

Spans are character offsets into ``Document.text`` (the normalized text), so that a chunk's
body is always ``document.text[chunk.start:chunk.end]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

HEADING_SEPARATOR = " > "
# How the document readers join the cells of a table row in ``Document.text``.
CELL_SEPARATOR = " | "


@dataclass(frozen=True, slots=True)
class Heading:
    """A section heading found by the loader from the document's own structure.

    ``start``/``end`` are the heading line's span in ``Document.text``; the section's body runs
    from after that line to the next heading's ``start``. Levels start at 1.
    """

    level: int
    start: int
    end: int
    title: str


@dataclass(frozen=True, slots=True)
class Document:
    doc_id: str  # stable id: the path relative to the corpus root, or "jawiki:<title>"
    source: str  # what citations show: file name relative to the corpus root, or jawiki:<title>
    title: str
    text: str  # normalized text; chunk spans index into it
    updated_at: str  # ISO-8601 (file mtime for files)
    content_hash: str  # sha256 of the raw source bytes
    kind: str  # "markdown" | "pdf" | "article" (loaders may add formats)
    # Headings read from the source's structure (PDF outline or fonts, Word styles, HTML tags).
    # ``None``: the chunker finds them in ``text`` by ``kind`` (Markdown ``#`` lines, articles none).
    headings: tuple[Heading, ...] | None = None
    # Lines of ``text`` (stripped) that are list items led by a link (Markdown and HTML readers):
    # a chunk made of them is a navigation list, not an answer.
    link_lines: frozenset[str] = frozenset()
    # The source names no title (no front matter title, no first-level heading, no PDF title):
    # ``title`` is the file name, shown in citations but not indexed with the text (an English
    # file name such as "during_an_incident" is not what a Japanese page says).
    title_from_name: bool = False


@dataclass(frozen=True, slots=True)
class Chunk:
    chunk_id: str
    doc_id: str
    source: str
    title: str
    heading_path: tuple[str, ...]
    body: str  # == document.text[start:end]
    start: int
    end: int
    chunk_index: int
    updated_at: str
    doc_hash: str
    extra: dict[str, str] = field(default_factory=dict)  # index-time metadata ("collection")

    @property
    def collection(self) -> str:
        """The runbook collection set at index time ("" for corpora without collections and for
        chunks indexed before collections existed: visible to no restricted principal)."""
        return self.extra.get("collection", "")

    @property
    def navigation(self) -> bool:
        """A list of links to other pages (``core.text.chunking.is_navigation``)."""
        return self.extra.get("navigation") == "1"

    @property
    def opens_in_code(self) -> bool:
        """The chunk starts inside a fenced code block (a window's overlap): its first fence
        closes the block (``core.text.chunking.fenced_blocks``)."""
        return self.extra.get("opens_in_code") == "1"

    @property
    def heading(self) -> str:
        return HEADING_SEPARATOR.join(self.heading_path)

    @property
    def text(self) -> str:
        """The indexed text: the heading path (or the title, unless it is only the file name:
        ``Document.title_from_name``) at the head, then the body."""
        head = self.heading or ("" if self.extra.get("title_from_name") == "1" else self.title)
        return f"{head}\n{self.body}" if head else self.body
