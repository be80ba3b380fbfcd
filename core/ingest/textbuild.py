"""Normalized text with heading spans, assembled line by line from a structured source.

Word and HTML readers know their headings from the source's structure (paragraph styles, ``h1``
to ``h4``), not from the text. They emit lines, list items, table rows and headings to a
``TextBuilder``, which normalizes the lines (safe NFKC, whitespace folded, empty lines dropped)
and records the span of every heading line in the final text, so that ``Document.headings``
points exactly into ``Document.text``.

Layout of the text: one line per paragraph, list item or table row; list items as ``- item`` or
``1. item``, indented two spaces per nesting level; table cells joined by ``" | "``; a heading is
its title alone on a line, after a blank line.
"""

from __future__ import annotations

from core.schemas.documents import CELL_SEPARATOR, Heading
from core.text.diagrams import read_mermaid
from core.text.normalize import safe_nfkc

__all__ = ["CELL_SEPARATOR", "TextBuilder"]


def _fold(text: str) -> str:
    return " ".join(text.split())


class TextBuilder:
    def __init__(self) -> None:
        # (indent, text, heading level or 0, keep leading whitespace); normalized in ``build``
        self._lines: list[tuple[int, str, int, bool]] = []
        self._linked: set[int] = set()  # indexes of list items led by a link
        self._built: tuple[str, tuple[Heading, ...]] | None = None
        self._link_lines: frozenset[str] = frozenset()

    def line(self, text: str, indent: int = 0, marker: str = "", linked: bool = False) -> None:
        """One line of running text (whitespace folded); ``marker`` is a list marker;
        ``linked``: a list item led by a link (``Document.link_lines``)."""
        folded = _fold(text)
        if folded:
            if linked:
                self._linked.add(len(self._lines))
            self._lines.append((indent, marker + folded, 0, False))

    def row(self, cells: list[str]) -> None:
        """One table row: the cells' text joined by ``" | "``; a row of empty cells is dropped."""
        folded = [_fold(cell) for cell in cells]
        if any(folded):
            self._lines.append((0, CELL_SEPARATOR.join(folded), 0, False))

    def preformatted(self, text: str) -> None:
        """Preformatted text (code, ``pre``): its lines and indentation are kept; a Mermaid
        diagram's source is read as its edges or messages, one list item each
        (``core.text.diagrams``)."""
        lines = text.expandtabs(4).splitlines()
        diagram = read_mermaid(lines)
        if diagram is not None:
            for item in diagram:
                self.line(item, marker="- ")
            return
        for line in lines:
            if line.strip():
                self._lines.append((0, line.rstrip(), 0, True))

    def heading(self, level: int, title: str) -> None:
        folded = _fold(title)
        if folded:
            self._lines.append((0, folded, level, False))

    def build(self) -> tuple[str, tuple[Heading, ...]]:
        """(text, headings), normalized once for all lines."""
        if self._built is not None:
            return self._built
        if not self._lines:
            return "", ()
        # One safe-NFKC pass over all lines (line breaks inside a line were folded already, and
        # safe_nfkc maps no character to a newline that str.split() did not remove).
        normalized = safe_nfkc("\n".join(text for _, text, _, _ in self._lines)).split("\n")
        out: list[str] = []
        headings: list[Heading] = []
        length = 0
        linked: set[str] = set()
        for n, ((indent, _, level, keep), text) in enumerate(
            zip(self._lines, normalized, strict=True)
        ):
            text = text.rstrip() if keep else _fold(text)
            if n in self._linked and text.strip():
                linked.add(text.strip())
            if not text.strip():
                continue
            if level and out and out[-1]:
                out.append("")
                length += 1
            line = " " * indent + text
            start = length + (1 if out else 0)
            out.append(line)
            length = start + len(line)
            if level:
                headings.append(Heading(level=level, start=start, end=length, title=text))
        self._built = ("\n".join(out), tuple(headings))
        self._link_lines = frozenset(linked)
        return self._built

    @property
    def link_lines(self) -> frozenset[str]:
        """The built lines (stripped) that are list items led by a link."""
        self.build()
        return self._link_lines

    @property
    def headings(self) -> tuple[Heading, ...]:
        return self.build()[1]

    def text(self) -> str:
        return self.build()[0]
