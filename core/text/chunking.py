"""Cut a normalized ``Document`` into ``Chunk``s: sections by headings, then windows.

Every span is a pair of character offsets into ``Document.text``; a chunk's body is exactly
``document.text[chunk.start:chunk.end]``.

Sections (``split_sections``)
-----------------------------
- ``markdown``: ATX headings ``#``, ``##``, ``###`` (up to 3 spaces of indentation, a blank or
  the end of line after the ``#``s, an optional closing ``#`` sequence) start a section; deeper
  headings (``####``) and empty headings (a lone ``#``) stay in the body; lines inside fenced
  code blocks (``````` or ``~~~``, closed by a fence of the same character at least as long) are
  never headings. Setext headings (underlined by ``===``) are not recognized.
- ``pdf``: numbered heading lines (see ``pdf_heading_level``).
- ``article``: the whole text is one section.

The heading path is a stack: a heading of level L pops every open heading of level >= L, then
is pushed, so ``# A`` / ``## B`` gives ("A", "B") and a following ``## C`` gives ("A", "C"). A
heading whose body is empty produces no chunk but stays in the path of the sections under it.
Text before the first heading is a section with an empty heading path.

Windows (``window_spans``)
--------------------------
A window is at most ``size`` characters. Where the rest of the span is longer than ``size``, the
cut is searched for in the last 20 % of the window (at least one character, never in the first
``overlap + 1`` characters), in this order of preference: just after the last newline; just after
the last sentence end (``。 ! ?``, including closing brackets that follow it); just after the last
``、``, ``,`` or blank; else a hard cut at ``size``. The next window starts ``overlap`` characters
before the cut. Windows are then trimmed of edge whitespace, so:

- consecutive windows share exactly ``overlap`` characters, less any whitespace trimmed at the
  edges of the shared part (the overlap is never larger than ``overlap``), whether the cut is hard
  or at a boundary: the boundary decides where the cut is, not how much is shared;
- every non-whitespace character of the span lies in some window (only whitespace at a cut can be
  left out); windows are non-empty, strictly increasing in start and end, and never start or end
  with whitespace.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.schemas.documents import Chunk, Document, Heading

__all__ = [
    "Section",
    "chunk_document",
    "passage_windows",
    "pdf_heading_level",
    "split_sections",
    "vector_texts",
    "window_spans",
]

BOUNDARY_FRACTION = 0.2
_SENTENCE_ENDS = "。!?"
_CLOSING = "」』)]）】〕"
_SOFT_BREAKS = "、, \t\u3000"
_SENTENCE_CUT = re.compile(r"[。!?][」』)\]）】〕]*|\n")


@dataclass(frozen=True, slots=True)
class Section:
    """A heading (or none) and the span of its body in the text."""

    heading_path: tuple[str, ...]
    level: int  # 0 for the text before the first heading and for articles
    heading_start: int  # the heading line's span; equal to body_start when there is no heading
    heading_end: int
    body_start: int  # from after the heading line to the start of the next heading line
    body_end: int

    @property
    def body_span(self) -> tuple[int, int]:
        return (self.body_start, self.body_end)

    @property
    def heading_span(self) -> tuple[int, int] | None:
        if self.level == 0:
            return None
        return (self.heading_start, self.heading_end)


# --- headings ----------------------------------------------------------------------------------

_MD_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_MD_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")

_PDF_MAX_HEADING_CHARS = 40
# "1. 目的", "1.目的", "2 初動対応", "2.1 影響範囲の確認", "2.1.3 ...", "2.1. ...".
_PDF_NUMBERED = re.compile(r"(\d{1,2}(?:\.\d{1,2}){0,2})(\.?)([ \t]*)(.*)")
# "第3章 復旧", "第2節", "第十章 ...".
_PDF_CHAPTER = re.compile(r"第([0-9]{1,3}|[一二三四五六七八九十百]{1,4})([章節項])(?:[ \t:：]|$).*")
_CHAPTER_LEVEL = {"章": 1, "節": 2, "項": 3}
# A title starting with a counter is a quantity, not a heading: "10 件のアラート", "1.5 倍".
_COUNTER_START = re.compile(r"[年月日時分秒件回個台人名本行字枚倍割%度歳週か箇ヶ]")
_NOT_HEADING_END = "。.!?、,:：;；"


def pdf_heading_level(line: str) -> int:
    """The heading level of a line of PDF text, or 0 when it is not a heading.

    Headings: ``1. 目的``, ``1.目的``, ``2 初動対応`` (level 1), ``2.1 影響範囲の確認`` (2),
    ``2.1.3 ...`` (3), ``第3章 復旧`` (章 1, 節 2, 項 3). Conservative: the stripped line is at
    most 40 characters, does not end with 。 . ! ? 、 , : or ; and does not contain 。; a number
    is at most 2 digits per part and is followed by a title (a dot and/or a blank, then a
    character that is neither a digit, a dot nor a counter such as 件 or 年). Steps are not
    headings: ``(1) ...``, ``1) ...``, ``手順1:``, ``①``, ``1. ファイルを削除する。``.
    """
    stripped = line.strip()
    if not stripped or len(stripped) > _PDF_MAX_HEADING_CHARS:
        return 0
    if stripped[-1] in _NOT_HEADING_END or "。" in stripped:
        return 0
    match = _PDF_CHAPTER.fullmatch(stripped)
    if match:
        return _CHAPTER_LEVEL[match.group(2)]
    match = _PDF_NUMBERED.fullmatch(stripped)
    if match is None:
        return 0
    number, dot, blank, title = match.groups()
    if not title or not (dot or blank):
        return 0
    if title[0].isdigit() or title[0] in ".)）" or _COUNTER_START.match(title):
        return 0
    return number.count(".") + 1


def _iter_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of every line, without its newline."""
    spans = []
    start = 0
    length = len(text)
    while start <= length:
        end = text.find("\n", start)
        if end < 0:
            end = length
        spans.append((start, end))
        start = end + 1
    return spans


def _markdown_headings(text: str) -> list[tuple[int, int, int, str]]:
    """(level, line start, line end, heading text) of the section headings of Markdown text."""
    headings = []
    fence: str | None = None
    for start, end in _iter_lines(text):
        line = text[start:end]
        if "`" in line or "~" in line:
            fence_match = _MD_FENCE.fullmatch(line)
            if fence_match:
                marker = fence_match.group(1)
                if fence is None:
                    if not (marker[0] == "`" and "`" in fence_match.group(2)):
                        fence = marker
                    continue
                if (
                    marker[0] == fence[0]
                    and len(marker) >= len(fence)
                    and not fence_match.group(2).strip()
                ):
                    fence = None
                continue
        if fence is not None or "#" not in line:
            continue
        match = _MD_HEADING.fullmatch(line)
        if match is None:
            continue
        level = len(match.group(1))
        title = (match.group(2) or "").strip()
        if level <= 3 and title.strip("#"):
            headings.append((level, start, end, title))
    return headings


def _pdf_headings(text: str) -> list[tuple[int, int, int, str]]:
    headings = []
    for start, end in _iter_lines(text):
        line = text[start:end]
        if line and (line.lstrip()[:1].isdigit() or "第" in line):
            level = pdf_heading_level(line)
            if level:
                headings.append((level, start, end, " ".join(line.split())))
    return headings


def split_sections(text: str, kind: str, given: Sequence[Heading] | None = None) -> list[Section]:
    """Sections of ``text`` by headings; ``kind`` is "markdown", "pdf" or "article".

    ``given``: headings the loader read from the source's structure (used as they are, in text
    order); otherwise they are found in ``text`` by ``kind``.
    The first section is the text before the first heading (empty heading path, level 0); it is
    returned even when empty, so that the sections' bodies and heading lines tile the text.
    """
    if given is not None:
        headings = [
            (h.level, h.start, h.end, h.title) for h in sorted(given, key=lambda h: h.start)
        ]
    elif kind == "article":
        return [Section((), 0, 0, 0, 0, len(text))]
    elif kind == "markdown":
        headings = _markdown_headings(text)
    elif kind == "pdf":
        headings = _pdf_headings(text)
    else:
        raise ValueError(f"unknown document kind {kind!r}; expected markdown, pdf or article")

    first = headings[0][1] if headings else len(text)
    sections = [Section((), 0, 0, 0, 0, first)]
    stack: list[tuple[int, str]] = []
    for number, (level, start, end, title) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        body_start = min(end + 1, len(text))
        body_end = headings[number + 1][1] if number + 1 < len(headings) else len(text)
        path = tuple(heading for _, heading in stack)
        sections.append(Section(path, level, start, end, body_start, body_end))
    return sections


# --- windows -----------------------------------------------------------------------------------


def _cut(text: str, low: int, high: int) -> int:
    """The preferred cut in (low, high]: an end offset just after a boundary, or ``high``."""
    newline = text.rfind("\n", low - 1, high)
    if newline >= 0:
        return newline + 1
    sentence_end = max(text.rfind(char, low - 1, high) for char in _SENTENCE_ENDS)
    if sentence_end >= 0:
        cut = sentence_end + 1
        while cut < high and text[cut] in _CLOSING:
            cut += 1
        return cut
    soft = max(text.rfind(char, low - 1, high) for char in _SOFT_BREAKS)
    if soft >= 0:
        return soft + 1
    return high


def window_spans(text: str, start: int, end: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Windows (start, end) of at most ``size`` characters over ``text[start:end]``.

    See the module docstring for the boundary rule and the overlap and coverage guarantees.
    Raises ``ValueError`` when ``size <= 0``, ``overlap < 0`` or ``overlap >= size``.
    """
    if size <= 0:
        raise ValueError(f"size must be positive, got {size}")
    if overlap < 0 or overlap >= size:
        raise ValueError(f"overlap must be in [0, size), got overlap={overlap}, size={size}")
    start = max(start, 0)
    end = min(end, len(text))
    while end > start and text[end - 1].isspace():
        end -= 1
    slack = max(1, int(size * BOUNDARY_FRACTION))
    windows: list[tuple[int, int]] = []
    position = start
    while True:
        while position < end and text[position].isspace():
            position += 1
        if position >= end:
            return windows
        if end - position <= size:
            windows.append((position, end))
            return windows
        high = position + size
        # Every cut lies past position + overlap, so the next window starts after this one.
        low = max(high - slack + 1, position + overlap + 1)
        cut = _cut(text, low, high)
        window_end = cut
        while text[window_end - 1].isspace():
            window_end -= 1
        # After trimming, a window inside a long blank run may end where the previous one did:
        # its characters are all covered already, so it is dropped.
        if not windows or window_end > windows[-1][1]:
            windows.append((position, window_end))
        position = cut - overlap


def sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentences of ``text[start:end]``: cut after ``。 ! ?`` (and closing brackets) and at
    newlines, trimmed of edge whitespace, empty ones dropped."""
    spans: list[tuple[int, int]] = []
    begin = start
    for match in _SENTENCE_CUT.finditer(text, start, end):
        spans.append((begin, match.end()))
        begin = match.end()
    spans.append((begin, end))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return out


def passage_windows(text: str, size: int) -> list[tuple[int, int]]:
    """Spans of ``text`` packing whole consecutive sentences, each at most ``size`` characters.

    The sub-chunk passages a corpus may embed instead of the whole chunk (``vector_texts``): a
    short passage keeps an embedding focused on what one or two sentences say. A sentence
    longer than ``size`` is cut by ``window_spans`` without overlap. Every non-whitespace
    character of ``text`` lies in exactly one window.
    """
    if size <= 0:
        raise ValueError(f"size must be positive, got {size}")
    windows: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for s, e in sentence_spans(text, 0, len(text)):
        if e - s > size:
            if current:
                windows.append(current)
                current = None
            windows.extend(window_spans(text, s, e, size, 0))
        elif current is None:
            current = (s, e)
        elif e - current[0] <= size:
            current = (current[0], e)
        else:
            windows.append(current)
            current = (s, e)
    if current:
        windows.append(current)
    return windows


def vector_texts(chunk: Chunk, window: int) -> list[str]:
    """The texts embedded for ``chunk``: ``chunk.text`` when ``window`` is 0, else one text per
    ``passage_windows`` span of the body, each with the chunk's heading (or title) at the head,
    as ``Chunk.text`` has."""
    if window <= 0:
        return [chunk.text]
    head = chunk.heading or chunk.title
    parts = [chunk.body[s:e] for s, e in passage_windows(chunk.body, window)] or [chunk.body]
    return [f"{head}\n{part}" if head else part for part in parts]


# --- documents ---------------------------------------------------------------------------------


def chunk_document(doc: Document, chunk_size: int, overlap: int) -> list[Chunk]:
    """Chunks of ``doc``: sections by ``doc.kind``, then windows over each section body.

    Chunk ids are ``f"{doc.doc_id}_{i}"`` with ``i`` the 0-based chunk index in the document.
    Runbooks are cut with 500/50, articles with 450/60 (the callers pass them).
    """
    chunks: list[Chunk] = []
    for section in split_sections(doc.text, doc.kind, doc.headings):
        for start, end in window_spans(
            doc.text, section.body_start, section.body_end, chunk_size, overlap
        ):
            index = len(chunks)
            chunks.append(
                Chunk(
                    chunk_id=f"{doc.doc_id}_{index}",
                    doc_id=doc.doc_id,
                    source=doc.source,
                    title=doc.title,
                    heading_path=section.heading_path,
                    body=doc.text[start:end],
                    start=start,
                    end=end,
                    chunk_index=index,
                    updated_at=doc.updated_at,
                    doc_hash=doc.content_hash,
                )
            )
    return chunks
