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

Windows (``core.text.windows``)
-------------------------------
Each section body is cut into windows of at most ``chunk_size`` content units, with
``chunk_overlap`` units shared by consecutive windows (``window_spans``): a unit is a Japanese
character, a capital, a digit or a punctuation mark; a lowercase Latin letter counts 1/2 and a
space between Latin words 1/4, so that 500 units hold about as much English as Japanese for the embedder (the
measurement is in ``core.text.windows``). Cuts prefer newlines, then sentence ends (Japanese and
English), then clause marks and blanks, and never fall inside a Latin word, a number, a URL or
an identifier when the window has any other place to cut.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from core.schemas.documents import Chunk, Document, Heading
from core.text.windows import (
    BOUNDARY_FRACTION,
    content_units,
    passage_windows,
    sentence_spans,
    window_spans,
)

__all__ = [
    "BOUNDARY_FRACTION",
    "CHUNKER_VERSION",
    "Section",
    "chunk_document",
    "content_units",
    "passage_windows",
    "pdf_heading_level",
    "sentence_spans",
    "split_sections",
    "vector_texts",
    "window_spans",
]

# Changes whenever the same document and parameters give different chunks; an index records it
# (``core.ingest.indexer``) and is rebuilt when it differs. 2: content units, word boundaries,
# English sentence ends. 3: navigation chunks marked (``extra["navigation"]``). 4: a title that
# is only the file name is not indexed (``extra["title_from_name"]``). 5: Markdown list items made
# of references to other documents (a file name, a URL) count as navigation like link-led ones.
# 6: Markdown task list boxes ("- [ ] …", "- [x] …") read as ☐ / ☑. 7: the page chrome of
# Confluence and MediaWiki exports (metadata, attachments, categories) dropped from HTML.
# 8: Markdown ``####`` headings are sections, as ``h4`` in HTML and Heading 4 in Word.
# 9: PDF read anew: real hyphens kept at line ends of word-processor exports, subset fonts
# measured through their /ToUnicode map (paragraphs joined), the contents' heading dropped, a
# cover title wrapped over lines, table rows and callouts never headings. 10: a bold clause
# ending in a colon is a PDF heading ("If the credential is a console password:"). 11: Markdown
# template statements on a line of their own ({% note %}, {% endif %}) dropped. 12: PDF: a
# contents bookmark (目次) heads nothing, Japanese lines broken early (kinsoku) are joined, a
# Japanese cover title over two lines joined without a space. 13: PDF: Kangxi radicals read as
# ideographs (「⼿順」), code in a monospaced font does not set the body size, a bold Japanese
# heading may open on a lower-case word (「cronジョブ設定」). 14: Word: a table of contents typed
# by hand (a 「目次」 paragraph and its page-numbered entries) dropped. 15: PDF: a cover title
# wrapped over lines is one line of text. 16: a window after the first opens on a line or a
# sentence (the overlap is whole lines and sentences, or none), not inside one. 17: Markdown
# block quotes read without their markers, GitHub alerts (> [!NOTE]) lead with their label,
# backslash escapes shown as the character. 18: Markdown template markup read inline (Liquid data
# references as the words of their name, Hugo shortcodes as their text, the rest removed).
# 19: a window that opens inside a fenced code block says so (``Chunk.opens_in_code``). 20: PDF:
# the strings of one TJ array that pypdf reports at its start follow each other, and Kangxi
# radicals join as ideographs (Chromium's Japanese PDFs read 「正確な行動 | を特定」「非 難」). 21:
# PDF: a browser's print stamp (date and time, address) in a page margin is dropped on any page.
# 22: PDF: list bullets drawn as shapes (Chromium's disc and ring) make list items, nested items
# are indented under theirs, a line opening on a Latin word before Japanese is no wrapped line.
# 23: PDF: a heading style used once after running text ranks on its own (a short page's h2).
# 24: PDF: numbered headings set smaller than the unnumbered heading above them are its
# sub-sections, not chapters (「1. 新システム準備」 under 「完全システム復旧手順」).
# 25: PDF: ruled tables read by their cells (a row a line, wrapped cells whole); code lines
# keep their statements (line pitch by text size); a running line keeps its place on the page.
# 26: PDF: the title on the first page heads the document (level 1, sections below it), as
# a Markdown h1 does; a row a browser's print cuts at a page break is read as a row; an
# indented bold line (a callout's title) is no heading.
# 27: PDF: a numbered bold question set in as a list is (an FAQ) still heads its answer.
# 28: PDF: a closepath (``h``) draws a table's rule too (cell borders as closed paths).
# 29: PDF: ruled table rows that differ in their numbers (a schedule's dates opening every
# page) are no running line unless a cell holds the page's number.
# 30: PDF: pages set in two columns wrap at each column's edge, a paragraph, item or table row
# the left column's foot breaks goes on at the right one's top, and indents are measured from
# the column; tables side by side keep their own rows.
# 31: Markdown: directive containers (:::type title … :::) read as admonitions; MDX imports out,
# JSX tabs' labels lead their parts; Markdown in UTF-16, CP932 or EUC-JP is read.
# 32: PDF: a "|" the text writes is no cell (wrapped lines with one join); a line of a text
# drawing in code (an ASCII table, a tree) starts its own line.
# 33: Markdown: GitBook hints lead with their style's label.
# 34: Word: a document typed without heading styles has its headings read from their look.
# 35: PDF: a heading or a cell broken after a hyphen joins without a space ("Backup-First").
# 36: HTML: a page without h1-h4 has its bold short paragraphs as headings (typed by hand).
# 37: HTML typed by hand: headings ranked by their inline font sizes when each has one.
# 38: plain-text runbooks (.txt): headings, lists, tables and wrapped paragraphs from the layout;
#     a numbered heading may open on 本 as "this" (「1.1 本書の目的」).
# 39: PDF: a bookmarked heading wrapped over lines joins by its script (「管理ポー」「トを」 with
#     no space between, as body lines already did).
# 43: PDF: a ruled table's rows do not count toward the body's size (a page mostly of a
#     smaller table made its paragraphs "larger than the body" and their first lines headings).
# 44: Markdown: .mdx pages; a heading's anchor id ("## Title [#id]") out of its title; a tag
#     written over several lines (an image, a component) leaves no attribute lines.
# 45: Markdown: an MDX heading's escaped id ("## Disable access logs \{#disable}") out of its
#     title, with its backslash.
# 46: HTML: an ``aside`` styled as a callout (a note, a caution box) is read, not dropped.
CHUNKER_VERSION = 46

# The deepest Markdown heading that starts a section: four levels, as the HTML (``h1``-``h4``)
# and Word (Heading 1-4) readers. Playbooks put their per-case steps under level 4 ("#### If the
# credential is a console password:"); levels 5 and 6 are rare and stay in the body.
MARKDOWN_HEADING_LEVELS = 4

# A chunk is a navigation list when at least this share of its lines (one at least) are list
# items led by a link or made of references to other documents (``Document.link_lines``): a
# MkDocs index, a wiki hub, "see also", a runbook's 関連手順.
NAVIGATION_SHARE = 0.6


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
# 本 is also the prefix "this" (「1.1 本書の目的」, 「1.1 本ガイドラインの目的」): a counter only
# before a particle, a mark or the end ("3 本の", "2 本").
_COUNTER_START = re.compile(
    r"[年月日時分秒件回個台人名行字枚倍割%度歳週か箇ヶ]|本(?=$|[のをがはでにもと、。,.\s)）])"
)
_NOT_HEADING_END = "。.!?、,:：;；"


def pdf_heading_level(line: str, max_chars: int = _PDF_MAX_HEADING_CHARS) -> int:
    """The heading level of a line of PDF text, or 0 when it is not a heading.

    Headings: ``1. 目的``, ``1.目的``, ``2 初動対応`` (level 1), ``2.1 影響範囲の確認`` (2),
    ``2.1.3 ...`` (3), ``第3章 復旧`` (章 1, 節 2, 項 3). Conservative: the stripped line is at
    most ``max_chars`` (40) characters, does not end with 。 . ! ? 、 , : or ; and does not
    contain 。; a number is at most 2 digits per part and is followed by a title (a dot and/or a
    blank, then a character that is neither a digit, a dot nor a counter such as 件 or 年). Steps are not
    headings: ``(1) ...``, ``1) ...``, ``手順1:``, ``①``, ``1. ファイルを削除する。``.
    """
    stripped = line.strip()
    if not stripped or len(stripped) > max_chars:
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


def fenced_blocks(text: str) -> list[tuple[int, int]]:
    """(start, end) of each fenced code block of Markdown-shaped text: from the start of its
    opening fence line to the end of its closing one (or of the text, when it is not closed).
    A block is closed by a fence of the same character at least as long, with nothing after it;
    a backtick fence whose info string holds a backtick opens none."""
    blocks = []
    fence: str | None = None
    opened = 0
    for start, end in _iter_lines(text):
        line = text[start:end]
        if "`" not in line and "~" not in line:
            continue
        found = _MD_FENCE.fullmatch(line)
        if found is None:
            continue
        marker = found.group(1)
        if fence is None:
            if not (marker[0] == "`" and "`" in found.group(2)):
                fence, opened = marker, start
        elif marker[0] == fence[0] and len(marker) >= len(fence) and not found.group(2).strip():
            blocks.append((opened, end))
            fence = None
    if fence is not None:
        blocks.append((opened, len(text)))
    return blocks


def _markdown_headings(text: str) -> list[tuple[int, int, int, str]]:
    """(level, line start, line end, heading text) of the section headings of Markdown text."""
    headings = []
    blocks = fenced_blocks(text)
    block = 0
    for start, end in _iter_lines(text):
        while block < len(blocks) and blocks[block][1] < start:
            block += 1
        if block < len(blocks) and blocks[block][0] <= start:
            continue  # inside a fenced code block: "# comment" is no heading
        line = text[start:end]
        if "#" not in line:
            continue
        match = _MD_HEADING.fullmatch(line)
        if match is None:
            continue
        level = len(match.group(1))
        title = (match.group(2) or "").strip()
        if level <= MARKDOWN_HEADING_LEVELS and title.strip("#"):
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


# --- passages ----------------------------------------------------------------------------------


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


def is_navigation(body: str, link_lines: frozenset[str]) -> bool:
    """Whether a chunk body is mostly a list of links to other pages (see NAVIGATION_SHARE)."""
    if not link_lines:
        return False
    lines = [line.strip() for line in body.split("\n") if line.strip()]
    linked = sum(line in link_lines for line in lines)
    return linked > 0 and linked >= NAVIGATION_SHARE * len(lines)


def chunk_document(doc: Document, chunk_size: int, overlap: int) -> list[Chunk]:
    """Chunks of ``doc``: sections by ``doc.kind``, then windows over each section body.

    Chunk ids are ``f"{doc.doc_id}_{i}"`` with ``i`` the 0-based chunk index in the document.
    Runbooks are cut with 500/50, articles with 450/60 content units (the callers pass them).
    """
    chunks: list[Chunk] = []
    blocks = fenced_blocks(doc.text) if "```" in doc.text or "~~~" in doc.text else []
    block_starts = [a for a, _ in blocks]
    for section in split_sections(doc.text, doc.kind, doc.headings):
        for start, end in window_spans(
            doc.text, section.body_start, section.body_end, chunk_size, overlap
        ):
            index = len(chunks)
            body = doc.text[start:end]
            extra = {"navigation": "1"} if is_navigation(body, doc.link_lines) else {}
            before = bisect_right(block_starts, start - 1) - 1  # the last block opened earlier
            if before >= 0 and start < blocks[before][1]:
                # a window that opens inside a code block (the overlap): its first fence
                # closes the block, and what follows is no code
                extra["opens_in_code"] = "1"
            if doc.title_from_name:
                extra["title_from_name"] = "1"
            chunks.append(
                Chunk(
                    chunk_id=f"{doc.doc_id}_{index}",
                    doc_id=doc.doc_id,
                    source=doc.source,
                    title=doc.title,
                    heading_path=section.heading_path,
                    body=body,
                    start=start,
                    end=end,
                    chunk_index=index,
                    updated_at=doc.updated_at,
                    doc_hash=doc.content_hash,
                    extra=extra,
                )
            )
    return chunks
