"""Read a PDF into normalized text plus the headings of its structure.

``read_pdf`` works from the page, not from line patterns:

1. **Lines with their look**: ``core.ingest.pdf_lines``.
2. **Running headers and footers.** A line among the two top-most or two bottom-most lines of a
   page, in the outer 15 % of the page height, is removed when its text with every digit and
   roman numeral folded occurs in the same zone, as far from the page's edge (within its size),
   on at least 40 % of the pages (and two pages), or when it is a page number on its own (``4``,
   ``iv``, ``- 4 -``, ``Page 3 of 10``, ``3 / 10``). A list step that ends one page and starts
   the next, the same text but its number, is text, and so are a ruled table's rows that
   differ in their numbers (dates in a schedule) unless a cell holds the page's number.
   A ruled table's row that a page break splits is one row again (``_join_split_rows``).
3. **Tables of contents.** A line ending in a page number after a dotted leader
   (``Title ........ 12``) is a contents entry; after a heading line named 目次 / Contents /
   Table of Contents / List of Tables / List of Figures, the lines of that page ending in a page
   number are entries too, up to the first line that is none and is not followed by one, and so
   is a line followed by an entry (a wrapped entry). Entries are
   dropped from the text: they repeat the titles that the headings already carry and, indexed,
   they match every question without answering any. The contents' own heading goes with them
   when entries follow it on its page: kept, it would head whatever comes after the contents
   (a cover's version and disclaimer, the first section's lead). So does an outline entry
   named like it: a word processor nests under that bookmark every section a level below it,
   and those move up a level.
4. **Headings.** With an outline (bookmarks), each entry is placed on its destination page: its
   title is looked for, compared without case, blanks, punctuation or leading numbering, at the
   start of one to four consecutive lines (nearest to the bookmark's ``/Top`` when several
   match); the matched part becomes the heading line, the rest of the line stays body text. An
   entry found nowhere is written as a line of its own at its ``/Top`` position. Levels come from
   the outline's nesting, deepened by numbers where the outline is flatter than they are
   (``2.3.1`` under ``2.3``). Without an outline: the body size is the size that carries the most
   characters outside code fonts (a runbook of shell scripts in a smaller monospaced font);
   a line of code is never a heading; a short line (at most 120 characters, not ending in a comma, colon, semicolon,
   ``!`` or a sentence-ending period; a question may be a heading, and so may a bold clause of
   three words or more ending in a colon) set larger than the body, or bold at the body size
   (at least 90 % of its characters) and starting at the text's left edge or numbered (an
   indented bold line is a callout's title or a quoted line), is a heading, unless it is a table row, a callout, a
   piece of a wrapped cell or two sentences (``_looks_like_a_title``); a style (size, weight) that occurs once on the first page as its largest text is
   the document's title (with an outline, the same largest first-page text is the title:
   ``_cover_title``). The title heads the document, as a page's h1 or a Word document's Title
   style does: it is the first heading, level 1, and every section sits a level below it (a
   PDF without a title line on its first page has none). A numbered heading's level is its
   depth (``2.3.1`` is 3, 章/節/項 1/2/3; one more under a title); any other's is the rank of
   its style (size, then bold first) among the
   styles used by two headings or more (see ``_style_levels``). A heading set over two lines is
   one heading. A PDF in one font gets the numbered headings of
   ``core.text.chunking.pdf_heading_level``.
5. **Paragraphs.** A line is joined to the one before when neither is a heading or a table row
   (a ruled table's, or one cut into cells at wide gaps: a "|" the text writes, a shell's
   pipe, is no cell), the new one does not start a list item or a step nor a line of a text
   drawing in code (an ASCII table's border, a tree's branch), they have the same size, the vertical gap is not wider than
   1.3 times the line pitch of that size (or the line starts the next page: see ``_Pitch``), an
   indented line of code does not start it, and the first
   line was wrapped: the next line's first word would not have fit before the right edge (of the
   page, or of a narrower column or box: see ``_right_edges``). On a page set in two columns
   (``core.ingest.pdf_columns``) the edge is the line's column's, the right column's first line
   may go on the left column's last (a paragraph, an item or a table row the column's foot
   breaks), and list items nest by their indent from their column's edge. A Japanese line's first "word" is
   its first character with those that may not open a line (「は、」: 行頭禁則) and the Latin
   runs glued to them (「は、https://…」: no break between the scripts), and a line
   ending in a Japanese character inside a sentence may end up to two characters early
   (kinsoku and the justification of mixed Latin runs). A line opening on a bare number
   (``3 以下`` after "Severity") is an item only after a sentence end or an unwrapped line. The
   separator is a space between Latin characters and nothing when either side is Japanese (or
   another script written without spaces). A hyphen at the end of a line before a lower-case
   word is read from the document itself (see ``_Hyphens``): kept when the document writes the
   hyphenated form elsewhere and never the joined one (``follow-`` / ``up``), dropped when it
   writes the joined form and never the hyphenated one (``inci-`` / ``dent``); otherwise
   dropped only where the document hyphenates words at line ends (its own joined forms
   outnumber its real hyphens there: typeset text), or where neither part is a word of the
   document and the first is no usual prefix (``inci-`` / ``dent``). Word processors and
   browsers do not hyphenate: there ``on-`` / ``premises`` and ``describe-`` / ``volumes`` are
   real hyphens. Before a capital or a digit the hyphen stays (``COVID-`` / ``19``).
6. **Lists and clean-up.** A bullet glyph at the start of a line (private-use U+E000-U+F8FF
   glyphs of symbol fonts, ``▪ • ● ◦ ■ □ ◆ ◇ ► ➢ ✓ ・`` and a lone ``o``) becomes ``- ``; other
   private-use glyphs are dropped; a missing space after a sentence end between Latin words
   (``attack.Don't``) is put back. Each line is normalized with ``normalize_text``, so the whole
   text is already normal and heading spans index into it.

Bad input (encrypted, broken, no text layer) raises ``SourceFileError`` with a Japanese message
naming the file.
"""

from __future__ import annotations

import functools
import io
import itertools
import logging
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from core.errors import SourceFileError
from core.ingest.contents import (
    ROMAN,
    ends_in_page_number,
    is_contents_title,
    is_leader_entry,
)
from core.ingest.pdf_columns import COLUMN_TOP, assign_columns, relative_x0
from core.ingest.pdf_lines import (
    GAPPED,
    FontWidths,
    PdfLine,
    estimate_width,
    first_word,
    is_cjk,
    page_lines,
    script_join,
)
from core.schemas.documents import CELL_SEPARATOR, Heading
from core.text.chunking import pdf_heading_level
from core.text.diagrams import is_mermaid, read_mermaid
from core.text.normalize import normalize_text

log = logging.getLogger(__name__)

__all__ = ["PdfText", "read_pdf", "structure"]

_MARGIN_ZONE = 0.15
_REPEAT_SHARE = 0.4
_MAX_HEADING_CHARS = 120
_PITCH_FACTOR = 1.3
_DROPPED = frozenset({"running", "contents"})


@dataclass(frozen=True, slots=True)
class PdfText:
    """A PDF read: normalized text, headings as spans into it, and its title if it has one."""

    text: str
    headings: tuple[Heading, ...]
    title: str | None  # the metadata title, else the title line found by font size


# --- opening ----------------------------------------------------------------------------------


def _open(data: bytes, name: str, path: str) -> Any:
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise SourceFileError(
                path,
                f"「{name}」はパスワードで保護されているため読み込めません。スキップしました。",
            )
        _ = len(reader.pages)
    except SourceFileError:
        raise
    except Exception as exc:  # pypdf raises many types on broken files
        raise _broken(name, path, exc) from exc
    return reader


def _broken(name: str, path: str, exc: Exception) -> SourceFileError:
    return SourceFileError(
        path,
        f"「{name}」は壊れているか PDF として読み込めません。スキップしました。",
        detail=f"{type(exc).__name__}: {exc}",
    )


# --- running headers, footers and page numbers ------------------------------------------------

_ROMAN = ROMAN
_PAGE_NUMBER = re.compile(
    rf"(?:page|p\.|ページ|頁)?\s*[-–—(]?\s*(?:\d{{1,4}}|{_ROMAN})\s*[-–—)]?\s*"
    rf"(?:(?:of|/|／)\s*\d{{1,4}})?\s*(?:ページ|頁)?",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")
_ROMAN_TOKEN = re.compile(rf"\b{_ROMAN}\b", re.IGNORECASE)


def _fold(text: str) -> str:
    text = _ROMAN_TOKEN.sub("#", _DIGITS.sub("#", text.lower()))
    return "".join(text.split())


def _margin_lines(
    lines: list[PdfLine], height: float, low: float
) -> list[tuple[PdfLine, str, float]]:
    """The two top-most and two bottom-most lines of a page that lie in its outer zones.

    Each with its zone ("top" or "bottom") and its distance from that edge of the page.
    """
    ordered = sorted(lines, key=lambda ln: -ln.y)
    zone = _MARGIN_ZONE * height
    top = [(ln, "top", low + height - ln.y) for ln in ordered[:2] if ln.y >= low + height - zone]
    chosen = {id(ln) for ln, _, _ in top}
    bottom = [
        (ln, "bottom", ln.y - low)
        for ln in ordered[-2:]
        if ln.y <= low + zone and id(ln) not in chosen
    ]
    return top + bottom


# A browser's print stamp in the margin of every page, even a document of one page: the date and
# time ("11/26/26, 1:14 PM", "2026/11/26 13:14") beside the page title, the address beside the
# page counter ("https://wiki.example/ir | 1/3"). An address alone is a footnote's, and stays.
_STAMP_TIME = re.compile(
    r"\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4},?\s+\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AP]M)?", re.IGNORECASE
)
_STAMP_ADDRESS = re.compile(r"(?:https?|file)://\S+", re.IGNORECASE)


def _print_stamp(text: str) -> bool:
    cells = [c.strip() for c in unicodedata.normalize("NFKC", text).split(CELL_SEPARATOR)]
    if any(_STAMP_TIME.fullmatch(c) for c in cells):  # ("ﬁle://": NFKC undoes the ligature)
        return True
    return any(_STAMP_ADDRESS.fullmatch(c) for c in cells) and any(
        _PAGE_NUMBER.fullmatch(c) for c in cells
    )


def _drop_running_lines(pages: list[list[PdfLine]], boxes: list[tuple[float, float]]) -> None:
    """Flag running headers, footers and page numbers: ``"running"``.

    A running line comes back in the same margin at the same distance from the page's edge. A
    list step that happens to end one page and start the next (「13. コールが終了したら…」 at
    the foot of page 1, 「22. コールが終了したら…」 under the header of page 2) is text.
    """
    margins = [_margin_lines(lines, h, low) for lines, (low, h) in zip(pages, boxes, strict=True)]
    places: dict[tuple[str, str], list[tuple[PdfLine, float]]] = {}
    for found in margins:
        for line, zone, offset in found:
            places.setdefault((zone, _fold(line.text)), []).append((line, offset))
    needed = max(2, _REPEAT_SHARE * len(pages))
    running: set[int] = set()
    if len(pages) > 1:
        for group in places.values():
            offsets = sorted(offset for _, offset in group)
            middle = offsets[len(offsets) // 2]
            near = [ln for ln, off in group if abs(off - middle) <= max(ln.size, 2.0)]
            if len({ln.page for ln in near}) >= needed and _repeats(near):
                running.update(id(ln) for ln in near)
    for found in margins:
        for line, _, _ in found:
            text = line.text.strip()
            if _PAGE_NUMBER.fullmatch(text) or _print_stamp(text) or id(line) in running:
                line.flags.add("running")


def _repeats(lines: list[PdfLine]) -> bool:
    """Whether lines alike but for their numbers are one running line: a table's rows only when
    they are the same row (a header table with the page's number in a cell, or a header row
    repeated on every page), not rows of dates or counts that happen to open every page."""
    if not any(line.cells for line in lines):
        return True
    if len({line.text for line in lines}) == 1:
        return True
    return all(
        any(_PAGE_NUMBER.fullmatch(cell.strip()) for cell in line.cells if cell.strip())
        for line in lines
    )


# --- table rows split by a page break ---------------------------------------------------------


def _join_split_rows(pages: list[list[PdfLine]]) -> None:
    """A ruled table's row that a page break splits is one row.

    The last line of a page (before its footer) and the first of the next (after its header),
    or the last of a left column and the first of the right one (``_breaks``), are rows of a
    table as wide, with as many cells, and a cell of the first ends its page (or column) with no
    room for the first word its part on the next page starts with: a word processor
    carried the rest of the row over (「P2 — High | Confirmed … scope」 / 「 | unclear, or
    credential exposed publicly」; "VPC Flow Logs (data" / "transfer volumes)"). When the next
    page's row has a first cell, that cell is the one carried over (it goes on in lower case,
    or in Japanese): a new row starts with its own label. A header row that ends one page is
    no row split by it: its cells are short.
    """
    for tail, after, at in _breaks(pages):
        head = after[at]
        if not tail.cells or len(tail.cells) != len(head.cells) or head.bold != tail.bold:
            continue
        if abs(relative_x0(tail) - relative_x0(head)) > 2.0 or not math.isclose(
            tail.x1 - tail.x0, head.x1 - head.x0, abs_tol=4.0
        ):
            continue  # not as wide, or not in the same place of its column
        carried = [
            bool(part) and room < estimate_width(first_word(part), head.size) + head.size
            for part, room in zip(head.cells, tail.room, strict=True)
        ]
        # a carried row opens on nothing, or on the rest of its label; a new row opens on a
        # label of its own, in Latin script with a capital or a digit ("Amazon GuardDuty",
        # "UK (ICO)", "YYYY-MM-DD": the widths of such short labels are too close to tell)
        label = head.cells[0]
        if label and label[0].isascii() and (label[0].isupper() or label[0].isdigit()):
            continue
        if not (carried[0] if label else any(carried)):
            continue
        tail.cells = tuple(script_join(a, b) for a, b in zip(tail.cells, head.cells, strict=True))
        tail.text = CELL_SEPARATOR.join(tail.cells).strip()
        del after[at]


def _breaks(pages: list[list[PdfLine]]) -> Iterator[tuple[PdfLine, list[PdfLine], int]]:
    """Where the text breaks to go on: at the foot of a page's left column (the line before,
    the page's lines and the index of the right column's first line) and at the end of each
    page (its last line, the next page's lines and the index of their first). The caller may
    delete the line at the index; what comes after is found after it did."""
    for number, lines in enumerate(pages):
        top = next((i for i, ln in enumerate(lines) if COLUMN_TOP in ln.flags), None)
        if top is not None:
            before = next((ln for ln in reversed(lines[:top]) if not ln.flags & _DROPPED), None)
            if before is not None:
                yield before, lines, top
        tail = next((ln for ln in reversed(lines) if not ln.flags & _DROPPED), None)
        after = pages[number + 1] if number + 1 < len(pages) else []
        at = next((i for i, ln in enumerate(after) if not ln.flags & _DROPPED), None)
        if tail is not None and at is not None:
            yield tail, after, at


# --- tables of contents -----------------------------------------------------------------------


def _drop_contents(pages: list[list[PdfLine]]) -> None:
    for lines in pages:
        body = [ln for ln in lines if "running" not in ln.flags]
        texts = [" ".join(ln.text.split()) for ln in body]
        in_contents = False
        for number, (line, text) in enumerate(zip(body, texts, strict=True)):
            if is_contents_title(text):
                in_contents = True
                line.flags.add("contents-title")
                continue
            if is_leader_entry(text) or (in_contents and ends_in_page_number(text)):
                line.flags.add("contents")
            elif in_contents:  # a wrapped entry goes on; anything else ends the contents
                nxt = body[number + 1] if number + 1 < len(body) else None
                in_contents = (
                    nxt is not None
                    and abs(nxt.size - line.size) <= 0.6
                    and ends_in_page_number(texts[number + 1])
                )
        for number, line in enumerate(body[:-1]):  # a wrapped entry: the line before an entry
            nxt = body[number + 1]
            if (
                "contents" in nxt.flags
                and not line.flags
                and len(line.text) < 120
                and abs(nxt.size - line.size) <= 0.6
            ):
                has_entries = sum("contents" in ln.flags for ln in body) >= 3
                if has_entries and not line.text.rstrip().endswith((".", "。")):
                    line.flags.add("contents")
        # the contents' own heading goes with its entries: kept, it would head what follows
        for number, line in enumerate(body):
            if "contents-title" in line.flags and any(
                "contents" in ln.flags for ln in body[number + 1 :]
            ):
                line.flags.add("contents")


# --- headings ---------------------------------------------------------------------------------

_LEADING_NUMBER = re.compile(
    r"^(?:(?i:appendix|annex|chapter|section|part)\s+)?"
    r"(?:\d{1,3}(?:[.\-]\d{1,3})*|[A-Z](?:\.\d{1,3})+|[A-Z](?=\s*[.)—–:-])|[IVX]+(?=[.)])"
    r"|第[0-9一二三四五六七八九十]{1,4}[章節項部])"
    r"[.):]?\s*[—–-]?\s*(?=\S)"
)


def _key(text: str) -> str:
    """Compare form: lower case, letters, digits and CJK only."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).lower() if ch.isalnum())


def _outline_entries(reader: Any) -> list[tuple[int, int, float | None, str]]:
    """(level, page, top, title) of every outline entry whose page resolves, in outline order."""
    entries: list[tuple[int, int, float | None, str]] = []

    def walk(items: Any, level: int) -> None:
        contents = False  # the entry before was the contents' own: its children move up
        for item in items:
            if isinstance(item, list):
                walk(item, level if contents else level + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
                title = " ".join(str(item.title or "").split())
            except Exception:
                continue
            # a bookmark to the table of contents (目次, Contents) is no heading: kept, it
            # would head every section a word processor nested under it
            contents = is_contents_title(title)
            if page is None or page < 0 or not title or contents:
                continue
            top = item.get("/Top")
            try:
                top_value = float(top) if top is not None else None
            except (TypeError, ValueError):
                top_value = None
            entries.append((level, page, top_value, title))

    try:
        walk(reader.outline, 1)
    except Exception as exc:  # a broken outline: read the PDF as if it had none
        log.info("unreadable PDF outline: %s", exc)
        return []
    return _nest_by_numbers(entries)


_DOTTED_NUMBER = re.compile(r"(\d{1,3}(?:\.\d{1,3})*)\.?\s")
_APPENDIX = re.compile(
    r"(?:Appendix|Annex|APPENDIX|ANNEX|付録|附録)\s*[A-Z0-9]|[A-Z](\.\d{1,2})+\.?\s"
)


def _nest_by_numbers(
    entries: list[tuple[int, int, float | None, str]],
) -> list[tuple[int, int, float | None, str]]:
    """Deepen a flat outline by its numbers: ``2.3.1`` goes one level under the entry ``2.3``
    wherever the outline put it (many outlines list every subsection at one level)."""
    levels: dict[str, int] = {}
    chapters = [lv for lv, _, _, t in entries if re.match(r"\d{1,2}\.?\s", t)]
    top_level = min(chapters) if chapters else None
    out = []
    for level, page, top, title in entries:
        if _BULLET_START.match(title):
            continue  # a list item some converters put in the outline ("\uf03c Blank media")
        match = _DOTTED_NUMBER.match(title + " ")
        if top_level is not None and _APPENDIX.match(title):
            # "Appendix A—…" sits beside the chapters, whatever level the converter gave it;
            # "A.1 …" goes under its appendix
            level = top_level if not _APPENDIX.match(title).group(1) else top_level + 1
        elif match:
            number = match.group(1)
            parent = number.rsplit(".", 1)[0] if "." in number else None
            if parent is not None and parent in levels:
                level = max(level, levels[parent] + 1)
            levels[number] = level
        out.append((level, page, top, title))
    return out


def _title_keys(title: str) -> list[str]:
    title = title.rstrip(".… ").strip()
    title = "".join(ch for ch in title if not 0xE000 <= ord(ch) <= 0xF8FF).strip()
    keys = [_key(title), _key(_LEADING_NUMBER.sub("", title, count=1))]
    return [k for k in dict.fromkeys(keys) if k]


def _split_at_key(text: str, key_len: int) -> int:
    """The character offset in ``text`` just after its first ``key_len`` key characters."""
    count = 0
    for offset, ch in enumerate(text):
        if _key(ch):
            count += len(_key(ch))
            if count >= key_len:
                end = offset + 1
                while end < len(text) and not text[end].isspace() and not _key(text[end]):
                    end += 1  # the title's closing punctuation: "incidents." "(DHS)"
                return end
    return len(text)


def _place_outline(
    entries: list[tuple[int, int, float | None, str]], pages: list[list[PdfLine]]
) -> None:
    """Mark or insert the heading line of every outline entry (see the module docstring)."""
    for level, page_no, top, title in entries:
        if page_no >= len(pages):
            continue
        lines = pages[page_no]
        keys = _title_keys(title)
        if not keys:
            continue
        best: tuple[float, int, int, int] | None = None  # (distance, first, last, key length)
        candidates = [i for i, ln in enumerate(lines) if not ln.flags & _DROPPED and not ln.heading]
        for position, first in enumerate(candidates):
            text = lines[first].text
            stripped = _LEADING_NUMBER.sub("", text.strip(), count=1)
            full_key = _key(text)
            for start_key in dict.fromkeys((full_key, _key(stripped))):
                skip = len(full_key) - len(start_key)  # key characters of a leading number
                found = _match_lines(lines, candidates[position : position + 4], keys, start_key)
                if found is None:
                    continue
                last, tail_len = found
                if last == first:
                    tail_len += skip
                distance = abs(lines[first].y - top) if top is not None else 0.0
                if best is None or distance < best[0]:
                    best = (distance, first, last, tail_len)
                break
        if best is None:
            _insert_heading(lines, page_no, top, title, level)
            continue
        _, first, last, tail_len = best
        tail = lines[last]
        truncated = title.rstrip().endswith(("...", "…"))
        cut = len(tail.text) if truncated else _split_at_key(tail.text, tail_len)
        rest = tail.text[cut:]
        if rest.strip() and _key(rest):
            tail.text = tail.text[:cut]
            lines.insert(last + 1, _split_copy(tail, rest))
        if last > first:  # a title wrapped over several lines: one heading line, joined
            # by its script (「…管理ポー」/「トを…」 has no space between)
            lines[first].text = functools.reduce(
                script_join, (lines[i].text.strip() for i in range(first, last + 1))
            )
            del lines[first + 1 : last + 1]
        lines[first].heading = level


def _match_lines(
    lines: list[PdfLine], run: list[int], keys: list[str], start_key: str
) -> tuple[int, int] | None:
    """(last line, key characters of the title in it) when ``keys`` start the lines ``run``."""
    joined = ""
    for number, index in enumerate(run):
        line_key = start_key if number == 0 else _key(lines[index].text)
        if not line_key:
            return None
        joined += line_key
        match = next((k for k in keys if joined.startswith(k)), None)
        if match is not None:
            return index, len(match) - (len(joined) - len(line_key))
        if not any(k.startswith(joined) for k in keys):
            return None
    return None


def _split_copy(line: PdfLine, text: str) -> PdfLine:
    return PdfLine(
        text=text.lstrip(),
        page=line.page,
        y=line.y - 0.01,
        x0=line.x0,
        x1=line.x1,
        size=line.size,
        bold=line.bold,
        first_word_width=0.0,
        flags={"split"},
        column=line.column,
    )


def _insert_heading(
    lines: list[PdfLine], page_no: int, top: float | None, title: str, level: int
) -> None:
    index = 0
    if top is not None:
        index = next(
            (i for i, ln in enumerate(lines) if not ln.flags & _DROPPED and ln.y < top - 1),
            len(lines),
        )
    size = lines[index].size if index < len(lines) else 0.0
    y = (top if top is not None else lines[index].y + 1) if index < len(lines) else 0.0
    clean = "".join(ch for ch in title if not 0xE000 <= ord(ch) <= 0xF8FF).strip()
    lines.insert(index, PdfLine(clean, page_no, y, 0.0, 0.0, size, True, 0.0, heading=level))


_NOT_HEADING_END = tuple("。．!！:：;；,，、")  # a question may be a heading (FAQ)


_HEADING_NUMBER = re.compile(
    r"(\d{1,2}(?:\.\d{1,2}){0,5}|[A-Z](?:\.\d{1,2}){1,5})\.?\s+\S|第\S{1,4}([章節項])"
    r"|(?:Appendix|Annex|APPENDIX|ANNEX|付録|附録)\s*[A-Z0-9Ａ-Ｚ０-９]"
)
# a plain "7." heading: a chapter when it continues the chapter numbers, else a numbered item
_PLAIN_NUMBER = re.compile(r"(\d{1,2})\.?\s+\S")


def _style_levels(
    candidates: list[tuple[PdfLine, tuple[float, bool]]], sections: frozenset[int] = frozenset()
) -> list[int]:
    """Levels of font-found headings: a numbered heading's depth (``2.3.1`` is 3, 章 1 節 2
    項 3); otherwise the rank of its style (size, then bold first) among the styles used by at
    least two headings, or by a heading in ``sections`` (by ``id``: one that heads a section, see
    ``_sections_after_text``); another style used once (cover-page lettering) takes the rank of
    the next recurring style not larger than it (one past the last when it is smaller than all)."""
    counts = Counter(s for _, s in candidates)
    own = {s for line, s in candidates if id(line) in sections}
    order = sorted(counts, key=lambda s: (-s[0], not s[1]))
    if any(counts[s] >= 2 for s in order):
        recurring = [s for s in order if counts[s] >= 2 or s in own]
    else:  # no style repeats: each ranks by itself
        recurring = order

    def rank(style: tuple[float, bool]) -> int:
        for number, other in enumerate(recurring):
            if (-other[0], not other[1]) >= (-style[0], not style[1]):
                return number + 1
        return len(recurring) + 1

    levels: list[int] = []
    chapter = 0  # the last chapter number ("3. Handling an Incident")
    listed: tuple[int, int] | None = None  # (level, number) of a run of numbered items
    for line, style in candidates:
        text = line.text.strip()
        match = _HEADING_NUMBER.match(text)
        plain = _PLAIN_NUMBER.match(text)
        if plain and levels:
            number = int(plain.group(1))
            if listed and number == listed[1] + 1:  # the run of items goes on
                listed = (listed[0], number)
                levels.append(listed[0])
                continue
            if number not in (chapter, chapter + 1) or (
                number == 1 and not chapter and rank(style) > levels[-1]
            ):
                # "1. What is an incident?" under an appendix: numbered items of the section
                # above, not chapter 1 again; 「1. 新システム準備」 in a smaller style than the
                # unnumbered heading above it: its first numbered sub-section, no chapter
                listed = (min(levels[-1] + 1, 6), number)
                levels.append(listed[0])
                continue
        if match and match.group(1):
            level = match.group(1).count(".") + 1
            if plain:
                chapter = int(plain.group(1))
        elif match and match.group(2):
            level = _CHAPTER_LEVEL[match.group(2)]
        elif match:  # Appendix A, 付録 B
            level = 1
        else:
            level = rank(style)
        listed = None
        levels.append(min(level, 6))
    return levels


_CHAPTER_LEVEL = {"章": 1, "節": 2, "項": 3}
_URL_LIKE = re.compile(r"://|^www\.|\bdoi\.org/", re.IGNORECASE)


# a sentence ends inside the line ("destroyed. Proceed", "P1. Proceed"; not "10. Recovery")
_SENTENCE_INSIDE = re.compile(r"(?:[a-z)]|(?<=[A-Za-z])[0-9]+)[.!?]\s+[A-Z]")


def _looks_like_a_title(text: str) -> bool:
    """What a bold or large line must look like to be a heading: not a table row (``a | b``),
    not a number alone (``33/34``), not a callout (a leading symbol: ⚠ 📌), not one line of a
    wrapped sentence or cell (a parenthesis left open or closed: ``SOC 2 (Trust Services``),
    not two sentences (``… → P1 immediately. If the activity…``)."""
    if " | " in text or not any(ch.isalpha() for ch in text):
        return False
    if unicodedata.category(text[0]) == "So" or text[0] in "⚠⚡✅❗❕":
        return False
    if text.count("(") != text.count(")") or text.count("[") != text.count("]"):
        return False
    return not _SENTENCE_INSIDE.search(text)


def _size_counts(lines: list[PdfLine]) -> Counter[float]:
    """Characters set in each size (to the half point): the most common is the body's. Lines
    in a code font and a ruled table's rows count only when there is nothing else: a runbook of
    shell scripts in a smaller monospaced font, or a severity matrix whose table is set smaller
    than its paragraphs, would make every line of prose "larger than the body"."""
    prose = [ln for ln in lines if not ln.code and not ln.cells] or lines
    sizes: Counter[float] = Counter()
    for line in prose:
        sizes[round(line.size * 2) / 2] += len(line.text.strip())
    return sizes


def _font_headings(pages: list[list[PdfLine]]) -> None:
    """Headings by size and weight, or by numbering in a one-font PDF (module docstring)."""
    body = [ln for lines in pages for ln in lines if not ln.flags & _DROPPED]
    sizes = _size_counts(body)
    if not sizes:
        return
    body_size = sizes.most_common(1)[0][0]
    left = _left_edges(body, body_size)

    def style(line: PdfLine) -> tuple[float, bool] | None:
        text = line.text.strip()
        if len(text) > _MAX_HEADING_CHARS or line.code or line.drawn_bullet or line.symbol_start:
            return None  # too long, a line of code, or a list item (its bullet drawn or a glyph)
        size = round(line.size * 2) / 2
        larger = size >= body_size + max(0.5, 0.08 * body_size)
        if text.endswith(_NOT_HEADING_END) and not (
            (text.endswith((":", "：")) and line.bold and len(text.split()) >= 3)
            # an exclamation set larger than the body heads a section (「落ち着いて!」)
            or (larger and text.endswith(("!", "！")))
        ):
            # a bold clause ending in a colon heads what follows it ("If the credential is a
            # console password:"); a run-in label of a word or two does not ("Owners:")
            return None
        if text.endswith(".") and not re.search(r"(?:^|\s)(?:\d+|[A-Z])(?:\.\d+)*\.$", text):
            return None  # a sentence set in bold, not a heading ("Chapter 3." and "A." are)
        if _BULLET_START.match(text) or text.startswith(("- ", "* ")) or _URL_LIKE.search(text):
            return None  # a list item in bold, or a URL in a large font
        if text[:1].islower() and not any(is_cjk(ch) for ch in text):
            return None  # the wrapped end of a bold sentence ("and applications"); not 「cron設定」
        if not _looks_like_a_title(text):
            return None
        if larger:
            return (size, line.bold)
        if line.bold and abs(size - body_size) < 0.75 and _key(text):
            x0 = relative_x0(line)
            indented = x0 > left.get(line.page, x0) + _INDENT_EM * body_size
            if indented and not _HEADING_NUMBER.match(text):
                # set in from the text's edge: a callout's title, a quoted line (a numbered
                # question of an FAQ, set in as a list is, still heads its answer)
                return None
            return (size, True)
        return None

    styled = [(line, style(line)) for line in body]
    wrapped = _wrapped_lines(pages, {id(line) for line, s in styled if s is not None})
    candidates = [(line, s) for line, s in styled if s is not None and id(line) not in wrapped]
    if candidates:
        counts = Counter(s for _, s in candidates)
        first_page = [c for c in candidates if c[0].page == min(ln.page for ln in body)]
        if first_page:
            top_line, top_style = max(first_page, key=lambda c: (c[1][0], c[0].y))
            largest = max(s[0] for s in counts)
            # the largest style, used on the first page only and at most three lines in a row
            # there: the document's title, set over one line or wrapped over a few
            title_lines = [line for line, s in first_page if s == top_style]
            if (
                top_style[0] == largest
                and counts[top_style] == len(title_lines) <= _MAX_TITLE_LINES
                and _consecutive(pages[top_line.page], title_lines)
            ):
                for line in title_lines:
                    line.title = True
                candidates = [c for c in candidates if not c[0].title]
        sections = _sections_after_text(pages, {id(c[0]) for c in candidates})
        levels = _style_levels(candidates, sections)
        for line, level in zip((c[0] for c in candidates), levels, strict=True):
            line.heading = level
        if candidates:
            _merge_wrapped_headings(pages)
            return
    for line in body:  # one font: numbering is all there is
        if not line.title:
            line.heading = pdf_heading_level(line.text)


_INDENT_EM = 0.8


def _left_edges(body: list[PdfLine], body_size: float) -> dict[int, float]:
    """Where each page's text starts: the leftmost edge two lines at the body size or more
    start at (pages of a book have mirrored margins; a page may hold more quoted or listed
    lines than running text)."""
    edges: dict[int, Counter[float]] = {}
    for line in body:
        if abs(line.size - body_size) < 0.75 and line.x1 > line.x0:
            edges.setdefault(line.page, Counter())[round(relative_x0(line))] += 1
    out: dict[int, float] = {}
    for page, counts in edges.items():
        shared = [x for x, n in counts.items() if n >= 2]
        if shared:
            out[page] = min(shared)
    return out


def _wrapped_lines(pages: list[list[PdfLine]], styled: set[int]) -> set[int]:
    """``id`` of the ``styled`` lines (bold or large) that go on a wrapped line of text: a bold
    phrase inside a paragraph or a list item, wrapped onto lines of its own (「…注意: Slackが利用
    できな」 / 「い場合や代替の通信手段が…」), is no heading, nor are the bold lines after it."""
    kept = [[ln for ln in lines if not ln.flags & _DROPPED] for lines in pages]
    pitch = _line_pitch(kept)
    edges = _right_edges(kept, pitch)
    wrapped: set[int] = set()
    for lines in kept:
        for a, b in itertools.pairwise(lines):
            if id(b) not in styled or (id(a) in styled and id(a) not in wrapped):
                continue
            if _joins(a, b, pitch, edges.get(id(a), 0.0)):
                wrapped.add(id(b))
    return wrapped


_MAX_TITLE_LINES = 3
_SENTENCE_CHARS = 30  # running text, not lettering: lines this long in all, ending a sentence


def _sections_after_text(pages: list[list[PdfLine]], candidates: set[int]) -> frozenset[int]:
    """``id`` of the heading candidates that come after running text: on a page after the
    first, or below a paragraph that ends a sentence on the first (「…について説明します。」).
    Such a heading heads a section even when its style is used once (a short page's one h2);
    lettering on a cover comes before any sentence."""
    out: set[int] = set()
    for number, lines in enumerate(pages):
        seen_text = number > 0
        paragraph = 0  # characters of the lines of text since the last heading candidate
        for line in lines:
            if id(line) in candidates:
                if seen_text:
                    out.add(id(line))
                paragraph = 0
            elif not line.flags & _DROPPED and not line.title:
                text = line.text.strip()
                paragraph += len(text)
                if paragraph >= _SENTENCE_CHARS and text.endswith(_SENTENCE_ENDS):
                    seen_text = True
    return frozenset(out)


def _consecutive(lines: list[PdfLine], chosen: list[PdfLine]) -> bool:
    """Whether ``chosen`` follow one another in ``lines`` with nothing kept between them."""
    kept = [ln for ln in lines if not ln.flags & _DROPPED and ln.text.strip()]
    where = [i for i, ln in enumerate(kept) if any(ln is c for c in chosen)]
    return bool(where) and where == list(range(where[0], where[0] + len(where)))


def _cover_title(pages: list[list[PdfLine]]) -> None:
    """With an outline: the lines of the first page set in the document's largest size, when
    that size is larger than the body's and used there only, in at most three lines in a row,
    and no outline entry was placed on them, are its title (a cover title wrapped over two
    lines is one title, not its first line)."""
    body = [ln for lines in pages for ln in lines if not ln.flags & _DROPPED and ln.text.strip()]
    sizes = _size_counts(body)
    if not sizes:
        return
    body_size = sizes.most_common(1)[0][0]
    largest = max(sizes)
    if largest < body_size + max(0.5, 0.08 * body_size):
        return
    chosen = [ln for ln in body if round(ln.size * 2) / 2 == largest]
    first = chosen[0].page
    if (
        len(chosen) <= _MAX_TITLE_LINES
        and all(ln.page == first and not ln.heading for ln in chosen)
        and _consecutive(pages[first], chosen)
    ):
        for line in chosen:
            line.title = True


def _merge_wrapped_headings(pages: list[list[PdfLine]]) -> None:
    """A heading set over two lines (same level and size, a line apart) is one heading; so is a
    heading whose next line, in the same size and weight, goes on in lower case (a bold
    sentence used as a heading, wrapped: "…should focus on being" / "prepared to handle…") or
    after a hyphen the heading broke at ("…Decision: Backup-" / "First Approach")."""
    for lines in pages:
        number = 0
        while number + 1 < len(lines):
            a, b = lines[number], lines[number + 1]
            close = abs(a.size - b.size) < 0.3 and 0 < a.y - b.y <= 1.6 * a.size
            goes_on = (
                a.heading
                and not b.heading
                and not b.flags & _DROPPED
                and b.bold == a.bold
                and b.text.strip()[:1].islower()
                and not a.text.rstrip().endswith(_NOT_HEADING_END)
            )
            # broken after a hyphen ("…Decision: Backup-" / "First Approach"): the next line is
            # the rest of the word, whatever level its own look gave it
            broken = (
                a.heading
                and _HYPHEN_END.search(a.text.rstrip()) is not None
                and not b.flags & _DROPPED
                and b.bold == a.bold
                and not _HEADING_NUMBER.match(b.text.strip())
            )
            if close and (
                goes_on
                or broken
                or (
                    a.heading
                    and a.heading == b.heading
                    and not _HEADING_NUMBER.match(b.text.strip())
                )
            ):
                a.text = script_join(a.text.rstrip(), b.text.lstrip())
                del lines[number + 1]
            else:
                number += 1


# --- paragraphs and lists ---------------------------------------------------------------------

_BULLETS = "▪•●◦■□◆◇►▸‣⁃∙➢➤✓✔◼◻・"
_BULLET_START = re.compile(rf"^\s*(?:[{_BULLETS}\uE000-\uF8FF]|o(?=\s))\s*")
_ITEM_START = re.compile(
    r"^\s*(?:-\s|\*\s|\(\d+\)|\d+(?:\.\d+)*[.)．]?\s|[a-zA-Z][.)]\s|第\d+|手順\d+|[①-⑳]|Sev\d)"
)
_PRIVATE_USE = re.compile(r"[\uE000-\uF8FF]")
# a line opening on a number and a space ("3 以下のインシデント", the rest of "Severity 3"): an
# item start only when the line before ended a sentence or was not wrapped
_BARE_NUMBER = re.compile(r"^\s*\d+\s")
_SENTENCE_ENDS = ("。", ".", "!", "?", "！", "？", ":", "：")
_MISSING_SPACE = re.compile(
    r"(?<=[a-z]{2}[.!?])(?=[A-Z][a-z’'])|(?<=[a-z]{2}[.!?][”’\"'])(?=[A-Z])"
)
_HYPHEN_END = re.compile(r"([A-Za-z]+)-$")
_WORD = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")


def _clean(line: PdfLine) -> str:
    text = line.text
    bullet = _BULLET_START.match(text)
    if bullet is not None or line.symbol_start:
        rest = text[bullet.end() :] if bullet else text.strip()[1:]
        text = "- " + _PRIVATE_USE.sub("", rest).strip()
    elif line.drawn_bullet and not _ITEM_START.match(text):
        text = "- " + _PRIVATE_USE.sub("", text).strip()
    else:
        text = _PRIVATE_USE.sub("", text)
    text = _MISSING_SPACE.sub(" ", text)
    return normalize_text(text.strip()).replace("\n", " ")


@dataclass(frozen=True)
class _Pitch:
    """The distance between the baselines of two lines of one paragraph, by text size.

    ``usual`` is the document's most common gap, between lines of ``usual_size``. A size whose
    smallest frequent gap is smaller has its own pitch: a word processor's code paragraphs of one
    line each (spacing after every one) are 22 pt apart where a wrapped statement is 12 pt, and
    body text in the same file 17.5 pt. A smaller size without a pitch of its own (no line of it
    wraps) has the usual pitch scaled to its size: code paragraphs at 9 pt, 22 pt apart, in a
    document whose 10.5 pt body is 18 pt apart are statements, not the lines of one. The usual
    gap is the prose's (code's when there is no prose): a runbook mostly of 9 pt code 12 pt
    apart still has its 10.5 pt body lines 17.4 pt apart as lines of one paragraph.
    """

    usual: float
    by_size: dict[float, float]
    usual_size: float = 0.0

    def of(self, size: float) -> float:
        own = self.by_size.get(round(size, 1))
        if own is not None:
            return own
        if 0 < size < self.usual_size:
            return self.usual * size / self.usual_size
        return self.usual


_PITCH_MIN_SHARE = 0.05  # of the gaps of one size, for a gap to count as that size's pitch


def _line_pitch(pages: list[list[PdfLine]]) -> _Pitch:
    found: Counter[tuple[bool, float, float]] = Counter()  # (in code, gap, size)
    sized: dict[float, Counter[float]] = {}
    for lines in pages:
        for a, b in itertools.pairwise(lines):
            if a.heading or b.heading:
                continue
            gap = a.y - b.y
            if 0 < round(gap, 0) < 3 * max(a.size, 1.0):
                found[(a.code or b.code, round(gap, 0), round(a.size, 1))] += 1
            if abs(a.size - b.size) <= 0.6 and 0.9 * a.size <= gap < 3 * a.size:
                sized.setdefault(round(a.size, 1), Counter())[round(2 * gap) / 2] += 1
    in_code = all(code for code, _, _ in found)  # the usual gap is the prose's, if any
    gaps: Counter[float] = Counter()
    for (code, gap, _), count in found.items():
        if code == in_code:
            gaps[gap] += count
    usual = gaps.most_common(1)[0][0] if gaps else 0.0
    sizes: Counter[float] = Counter()
    for (code, gap, size), count in found.items():
        if code == in_code and gap == usual:
            sizes[size] += count
    by_size: dict[float, float] = {}
    for size, counts in sized.items():
        total = sum(counts.values())
        frequent = [g for g, n in counts.items() if n >= max(3, _PITCH_MIN_SHARE * total)]
        if frequent and min(frequent) * _PITCH_FACTOR < usual:
            by_size[size] = min(frequent)
    usual_size = sizes.most_common(1)[0][0] if sizes else 0.0
    return _Pitch(usual, by_size, usual_size)


def _right_edges(pages: list[list[PdfLine]], pitch: _Pitch) -> dict[int, float]:
    """The right edge each line wraps at, by ``id`` of the line.

    A page's edge is the 95th percentile of the line ends of the document (a stray wide line
    does not move it), or the page's widest line when that is narrower. A block of at least
    three lines (same size, line pitch apart, no heading between) whose widest end is reached
    by two of its lines wraps at that end instead: a narrower column or box. A block mostly of
    code is no box: one statement a line (a comment in Japanese among them) ends as close.
    """
    ends = sorted(ln.x1 for lines in pages for ln in lines if ln.x1 > ln.x0 and not ln.heading)
    if not ends:
        return {}
    edge = ends[min(len(ends) - 1, int(0.95 * len(ends)))]
    out: dict[int, float] = {}
    for lines in pages:
        page_edge = min(edge, max((ln.x1 for ln in lines if not ln.heading), default=edge))
        blocks: list[list[PdfLine]] = []
        for line in lines:
            prev = blocks[-1][-1] if blocks else None
            if (
                prev is None
                or line.heading
                or prev.heading
                or abs(line.size - prev.size) > 0.6
                or prev.y - line.y < 0
                or prev.y - line.y > _PITCH_FACTOR * (pitch.of(prev.size) or float("inf"))
            ):
                blocks.append([line])
            else:
                blocks[-1].append(line)
        for block in blocks:
            block_edge = max(ln.x1 for ln in block)
            near = sum(ln.x1 >= block_edge - 1.5 * ln.size for ln in block)
            # lines of code end where their statement ends: similar lengths are no box edge
            code = sum(ln.code for ln in block)
            boxed = len(block) >= 3 and near >= 2 and 2 * code <= len(block)
            local = block_edge if boxed else page_edge
            for line in block:
                column_edge = line.column.x1 if line.column else page_edge
                out[id(line)] = min(page_edge, column_edge, local)
    return out


# the start of a line of a drawing in text: an ASCII table's border ("+----+") or row
# ("| HASH |"), a tree's branch ("├── YES", "│   └──")
_DRAWING_START = re.compile(r"[+|][-=+|]|\|\s|[\u2500-\u257f]")


def _joins(a: PdfLine, b: PdfLine, pitch: _Pitch, edge: float) -> bool:
    if a.heading or b.heading or a.title or b.title or "split" in b.flags:
        return False
    if abs(a.size - b.size) > 0.6 or not a.text.strip() or not b.text.strip():
        return False
    if b.symbol_start or b.drawn_bullet or _BULLET_START.match(b.text):
        return False
    bare_number = _BARE_NUMBER.match(b.text) is not None
    if _ITEM_START.match(b.text) and not bare_number:
        return False
    if a.cells or b.cells or GAPPED in a.flags or GAPPED in b.flags:
        return False  # table rows (a "|" the text writes, a shell's pipe, is no cell)
    if b.code and b.text[:1].isspace():
        return False  # indented code: a wrapped line never starts with the spaces it broke at
    if b.code and _DRAWING_START.match(b.text):
        return False  # a line of a text drawing: a table's border or row, a tree's branch
    # the right column's first line goes on the left one's last as a next page's first does
    next_column = bool(
        COLUMN_TOP in b.flags and a.column and b.column and b.column.index == a.column.index + 1
    )
    if a.page == b.page and not next_column:
        if a.y - b.y > _PITCH_FACTOR * (pitch.of(a.size) or float("inf")):
            return False
        if a.y - b.y < 0:
            return False  # the next line is above: another column or a float
    ends_sentence = a.text.rstrip().endswith(_SENTENCE_ENDS)
    if bare_number and ends_sentence:
        return False  # "3 Restart the service" after a full stop: a step
    space = 0.0 if is_cjk(b.text.strip()[0]) else 0.25 * b.size
    # Japanese word processors break a line up to two characters early (kinsoku, justification
    # of mixed Latin runs); inside a sentence that is still a wrapped line
    slack = 2 * b.size if is_cjk(a.text.rstrip()[-1]) and not ends_sentence else 0.0
    return a.x1 + space + b.first_word_width + slack > edge - 0.5


_STANDALONE = re.compile(r"(?<![A-Za-z-])[A-Za-z]+(?![A-Za-z-])")  # not part of "a-b"
# usual first parts of compounds ("non-", "pre-", "self-", "on-", "off-", "well-")
_PREFIXES = frozenset((
    "anti", "co", "counter", "cross", "de", "re", "pre", "post", "non", "mid", "multi", "self",
    "semi", "sub", "super", "inter", "intra", "over", "under", "un", "ex", "extra", "micro",
    "macro", "meta", "out", "pseudo", "quasi", "trans", "ultra", "on", "off", "well", "all",
    "high", "low", "long", "short", "full", "half",
))  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Hyphens:
    """What a line-end hyphen means in this document: ``hyphenated`` holds the pairs of parts
    its hyphenated words join (``denial-of`` of ``denial-of-service``), ``plain`` the Latin
    words it writes on their own, ``known`` those and the parts of its hyphenated words;
    ``typeset`` is whether it hyphenates words at line ends (its joined forms outnumber its
    real hyphens among the line-end hyphens)."""

    hyphenated: frozenset[str]
    plain: frozenset[str]
    known: frozenset[str]
    typeset: bool

    @classmethod
    def of(cls, lines: list[str]) -> _Hyphens:
        # the two parts of a line-end hyphen are no evidence of themselves
        cut = list(lines)
        for i, (a, b) in enumerate(itertools.pairwise(lines)):
            if _HYPHEN_END.search(a):
                cut[i] = _HYPHEN_END.sub("", cut[i])
                cut[i + 1] = _WORD.sub("", cut[i + 1], count=1) if b[:1].isalpha() else cut[i + 1]
        words = " ".join(cut)
        pairs = frozenset(
            f"{x}-{y}".lower()
            for w in _WORD.findall(words)
            for x, y in itertools.pairwise(w.split("-"))
        )
        plain = frozenset(w.lower() for w in _STANDALONE.findall(words))
        known = plain | {part for pair in pairs for part in pair.split("-")}
        found = cls(pairs, plain, known, typeset=False)
        evidence = [
            found.evidence(parts)
            for a, b in itertools.pairwise(lines)
            if (parts := _split(a, b)) is not None
        ]
        soft, real = evidence.count("joined"), evidence.count("hyphenated")
        return cls(pairs, plain, known, typeset=soft >= 2 and soft > real)

    def evidence(self, parts: tuple[str, str]) -> str | None:
        """ "hyphenated" or "joined" when the document writes the word only one way."""
        head, tail = parts
        word = tail.split("-")[0]
        written = f"{head}-{word}".lower() in self.hyphenated
        joined = (head + word).lower() in self.plain
        if written != joined:
            return "hyphenated" if written else "joined"
        return None

    def keeps(self, parts: tuple[str, str]) -> bool:
        """Whether the hyphen between ``parts`` (``_split``) is a real one."""
        evidence = self.evidence(parts)
        if evidence is not None:
            return evidence == "hyphenated"
        if self.typeset:
            return False
        head, tail = parts
        if "-" in tail or sum(c.isupper() for c in head) >= 2:
            return True  # "denial-" / "of-access" goes on; "ICT-" / "related": an acronym
        # "on-" / "premises": two words of the document, or a usual prefix
        return head.lower() in self.known or head.lower() in _PREFIXES or tail.lower() in self.known


def _split(a: str, b: str) -> tuple[str, str] | None:
    """(first part, second part) when ``a`` ends in a hyphen before the lower-case ``b``."""
    match = _HYPHEN_END.search(a)
    if not (match and b[:1].isalpha() and b[:1].islower()):
        return None
    tail = _WORD.match(b)
    return match.group(1), tail.group(0) if tail else ""


def _join_text(a: str, b: str, hyphens: _Hyphens) -> str:
    parts = _split(a, b)
    if parts is not None:
        return a + b if hyphens.keeps(parts) else a[:-1] + b
    if _HYPHEN_END.search(a) or a.endswith(("—", "–")):
        return a + b  # "COVID-" + "19", "pre-" + "Windows": a real hyphen; a dash
    return script_join(a, b)


# --- assembly ---------------------------------------------------------------------------------


def _assemble(pages: list[list[PdfLine]]) -> tuple[str, tuple[Heading, ...]]:
    pitch = _line_pitch(pages)
    kept = [[ln for ln in page if not ln.flags & _DROPPED] for page in pages]
    edges = _right_edges(kept, pitch)
    lines = [ln for page in kept for ln in page]
    cleaned = [_clean(ln) for ln in lines]
    hyphens = _Hyphens.of(cleaned)

    blocks: list[tuple[PdfLine, str]] = []
    for line, text in zip(lines, cleaned, strict=True):
        if not text:
            continue
        if blocks:
            prev_line, prev_text = blocks[-1]
            if prev_line.title and line.title and prev_line.page == line.page:
                # a cover title wrapped over lines is one line of text, as it is one title
                merged = script_join(prev_text, text)
                carry = PdfLine(merged, line.page, line.y, line.x0, line.x1, line.size, False, 0.0)
                carry.title = True
                blocks[-1] = (carry, merged)
                continue
            edge = edges.get(id(prev_line), 0.0)
            if _joins(prev_line, line, pitch, edge):
                merged = _join_text(prev_text, text, hyphens)
                # the block is its first line (where it starts, whether it is an item, in code)
                # carrying the text so far, ending where the last line does
                carry = replace(
                    prev_line,
                    text=merged,
                    page=line.page,
                    y=line.y,
                    x1=line.x1,
                    size=line.size,
                    bold=False,
                    first_word_width=0.0,
                    flags=set(),
                )
                edges[id(carry)] = edges.get(id(line), edge)
                blocks[-1] = (carry, merged)
                continue
        blocks.append((line, text))

    parts: list[str] = []
    headings: list[Heading] = []
    offset = 0
    titled = False
    for line, text in _nest_items(_diagrams(blocks)):
        if line.heading and parts:
            parts.append("")  # a blank line before each heading
            offset += 1
        if line.heading:
            headings.append(Heading(line.heading + titled, offset, offset + len(text), text))
        elif line.title and not headings and not titled:
            # the cover title heads the document, as a page's h1 or a Word document's Title
            # style does: its sections sit under it
            headings.append(Heading(1, offset, offset + len(text), text))
            titled = True
        parts.append(text)
        offset += len(text) + 1
    return "\n".join(parts), tuple(headings)


def _diagrams(blocks: list[tuple[PdfLine, str]]) -> list[tuple[PdfLine, str]]:
    """A Mermaid diagram's source set as code (a page printed with its ``pre`` block
    unrendered) read as its edges or messages, one list item each (``core.text.diagrams``)."""
    out: list[tuple[PdfLine, str]] = []
    i = 0
    while i < len(blocks):
        line, text = blocks[i]
        if line.code and not line.heading and is_mermaid([text]):
            end = i + 1
            while end < len(blocks) and blocks[end][0].code and not blocks[end][0].heading:
                end += 1
            read = read_mermaid([t for _, t in blocks[i:end]])
            if read is not None:
                out += [(line, f"- {item}") for item in read]
                i = end
                continue
        out.append((line, text))
        i += 1
    return out


# a list item whose nesting is read from where it starts: a bullet, a number or a letter
# ("1.1 | …" is a table row, "3.2.7)" the end of a reference; 「1.手順」 is an item)
_NESTED_ITEM = re.compile(
    r"^(?:- |(?:\d{1,2}[.)]|\(\d{1,2}\))(?:\s|(?=[^\x00-\x7f]))|[①-⑳]\s?|[a-z][.)]\s)"
)
_NEST_TOLERANCE_EM = 0.8


def _nest_items(blocks: list[tuple[PdfLine, str]]) -> list[tuple[PdfLine, str]]:
    """List items indented under the item they are set further right of, as Markdown nests them
    (two spaces under "- ", three under "1. "), so that a nested list stays nested.

    The items of one list start within ``_NEST_TOLERANCE_EM`` of each other (numbers set right
    aligned, 「9.」 and 「10.」, included); an item further right opens a deeper level, one further
    left closes levels. A heading, a table row, a line of code, or a line of text not set
    clearly inside the last item (as the text after a bullet glyph is) ends the list."""
    out: list[tuple[PdfLine, str]] = []
    stack: list[tuple[float, int]] = []  # (left edge, marker width) of the open levels
    for line, text in blocks:
        # a line after a bullet is an item, a line of code too ("- sudo shutdown now"); a line of
        # a code block or a table row that opens on a number or a dash is none
        marked = line.drawn_bullet or line.symbol_start
        item = marked or not (line.code or CELL_SEPARATOR in text)
        match = _NESTED_ITEM.match(text) if item else None
        tolerance = _NEST_TOLERANCE_EM * max(line.size, 1.0)
        x0 = relative_x0(line)  # an item at a column's top goes on the list of the last one
        if line.heading or line.title or match is None:
            # only a line set clearly inside the last item (a glyph's item text) goes on
            if not stack or line.heading or line.title or x0 <= stack[-1][0] + tolerance:
                stack.clear()
            out.append((line, text))
            continue
        while stack and x0 < stack[-1][0] - tolerance:
            stack.pop()
        marker = len(match.group(0)) + (0 if match.group(0).endswith(" ") else 1)
        if not stack or x0 > stack[-1][0] + tolerance:
            stack.append((x0, marker))
        else:
            stack[-1] = (stack[-1][0], marker)
        indent = sum(width for _, width in stack[:-1])
        out.append((line, " " * indent + text))
    return out


def read_pdf(data: bytes, name: str, path: str, *, use_outline: bool = True) -> PdfText:
    """Read ``data`` (a PDF named ``name`` at ``path``) into text, headings and title.

    ``use_outline=False`` finds the headings from the fonts even when the PDF has an outline
    (the benchmark measures the font path against the outline this way)."""
    reader = _open(data, name, path)
    fonts = FontWidths()
    pages: list[list[PdfLine]] = []
    boxes: list[tuple[float, float]] = []
    try:
        for number, page in enumerate(reader.pages):
            pages.append(page_lines(page, number, fonts))
            box = page.mediabox
            boxes.append((float(box.bottom), float(box.height)))
        meta = reader.metadata
        meta_title = str(meta.get("/Title") or "").strip() if meta else ""
        entries = _outline_entries(reader) if use_outline else []
    except SourceFileError:
        raise
    except Exception as exc:
        raise _broken(name, path, exc) from exc
    if not any(ln.text.strip() for lines in pages for ln in lines):
        raise SourceFileError(
            path,
            f"「{name}」からテキストを抽出できませんでした（画像のみの PDF の可能性があります）。"
            "スキップしました。",
        )
    return structure(pages, boxes, entries, meta_title)


def structure(
    pages: list[list[PdfLine]],
    boxes: list[tuple[float, float]],
    entries: list[tuple[int, int, float | None, str]],
    meta_title: str,
) -> PdfText:
    """Steps 2-6 of the module docstring over the lines of every page."""
    _drop_running_lines(pages, boxes)
    _drop_contents(pages)
    assign_columns(pages, _DROPPED)
    _join_split_rows(pages)
    if entries:
        _place_outline(entries, pages)
        _cover_title(pages)
    else:
        _font_headings(pages)
    text, headings = _assemble(pages)
    # a title set over several lines (a title and its subtitle) is one title
    title_line = functools.reduce(
        script_join, (ln.text.strip() for lines in pages for ln in lines if ln.title), ""
    )
    return PdfText(
        text=text, headings=headings, title=_title(meta_title, normalize_text(title_line))
    )


# what a site or an application puts beside a page's title in /Title: "Page - Site",
# "Site | Page", 「ページ｜サイト」
_TITLE_SEPARATOR = r"(?:\s[-–—·:]\s|\s?[|｜]\s?)"
_FILE_NAME_TITLE = re.compile(
    r"\.(?:docx?|xlsx?|pptx?|rtf|odt|txt|md|html?|pdf)\s*$", re.IGNORECASE
)


def _title(meta_title: str, title_line: str) -> str | None:
    """The document's title: the PDF's /Title, unless it is the title set on the first page with
    a site's or an application's name beside it ("Page - Site" from a browser's print) or a
    file's name ("Microsoft Word - page.docx"): then the title the page shows."""
    meta = normalize_text(meta_title).strip()
    if meta and title_line and meta != title_line:
        escaped = re.escape(title_line)
        around = rf"^(?:{escaped}{_TITLE_SEPARATOR}.+|.+{_TITLE_SEPARATOR}{escaped})$"
        if re.match(around, meta) or _FILE_NAME_TITLE.search(meta):
            return title_line
    return meta or title_line or None
