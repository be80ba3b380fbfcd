"""Text columns on a PDF page: which column each line sits in, and where that column ends.

A playbook or a vendor's guide set in two columns wraps its lines at the column's edge, half
way across the page. Measured against the page's right edge every line of the left column
looks short, so a paragraph of two lines, or the piece of a paragraph at a column's foot, is
read as lines that end their paragraphs. A list item's indent is measured from the column's
left edge, not the page's, and a paragraph or item the left column's foot breaks goes on at
the top of the right column.

A page has two columns when a gutter splits it: lines of prose (not code, not table rows)
start at one place in the middle of the text's width, at least ``_MIN_LINES`` of them, at least
as many end before it with a gap, the two groups stand side by side (their heights overlap),
and few lines cross it (a title or a heading set across the page above the columns). Each line
then gets its ``Column``: its index, its edges, and ``shift``, how far right of the first
column it starts. A line that crosses the gutter has none. The first line of the right column,
at its top, when the line before it in the page's order is the left column's last, is flagged
``column_top``: it may go on that line (``core.ingest.pdf``). Lines keep the order the page
draws them in; columns only change where lines wrap and how far they are indented.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from core.ingest.pdf_lines import Column, PdfLine

__all__ = ["COLUMN_TOP", "assign_columns", "relative_x0"]

COLUMN_TOP = "column_top"
_MIN_LINES = 3
_GUTTER_SPAN = (0.3, 0.7)  # where a gutter may be, as shares of the text's width
_CROSSING_SHARE = 0.1  # of a page's lines may cross the gutter (titles, wide headings)
_SAME_X = 1.5  # points: lines starting this close start at the same place
_MIN_GAP_EM = 0.5  # a left column's lines end at least this far before the right one starts
_OVERLAP = 0.5  # of the shorter column's height the two must share


def relative_x0(line: PdfLine) -> float:
    """Where ``line`` starts, measured as if its column were the page's first."""
    return line.x0 - (line.column.shift if line.column else 0.0)


def assign_columns(pages: list[list[PdfLine]], dropped: frozenset[str]) -> None:
    """Set ``column`` on the lines of each page set in two columns (module docstring); the
    lines flagged ``dropped`` (running lines, contents) are left out. A page with too little
    prose to tell (a page of code, a page of tables) takes the columns most of the document's
    two-column pages have when none of its lines crosses their gutter."""
    kept = [
        [ln for ln in lines if not ln.flags & dropped and ln.x1 > ln.x0 and ln.text.strip()]
        for lines in pages
    ]
    found = [_two_columns(lines) for lines in kept]
    usual = _usual(found)
    for lines, columns in zip(kept, found, strict=True):
        if columns is None and usual is not None:
            columns = _fitted(lines, usual)
        if columns is None:
            continue
        left, right = columns
        for line in lines:
            if line.x0 >= right.x0:
                line.column = right
            elif line.x1 <= left.x1:
                line.column = left
        _flag_column_top(lines, left, right)


def _usual(found: list[tuple[Column, Column] | None]) -> tuple[Column, Column] | None:
    """The columns most of the two-column pages have (where the left one ends, how far right
    the right one starts)."""
    layouts = [columns for columns in found if columns is not None]
    if not layouts:
        return None
    counts = Counter((round(left.x1), round(right.shift)) for left, right in layouts)
    key = counts.most_common(1)[0][0]
    return next(c for c in layouts if (round(c[0].x1), round(c[1].shift)) == key)


def _fitted(lines: list[PdfLine], columns: tuple[Column, Column]) -> tuple[Column, Column] | None:
    """``columns`` for a page whose lines sit in them, some in each and none across the gutter
    (the left one ending where this page's lines on that side do)."""
    left, right = columns
    in_left = [ln for ln in lines if ln.x1 <= left.x1 + _SAME_X and ln.x0 < right.x0]
    in_right = [ln for ln in lines if ln.x0 >= right.x0]
    if not in_left or not in_right or len(in_left) + len(in_right) < len(lines):
        return None
    return replace(left, x1=max(left.x1, *(ln.x1 for ln in in_left))), right


def _two_columns(lines: list[PdfLine]) -> tuple[Column, Column] | None:
    """The page's two columns, or ``None`` when no gutter splits it (module docstring); the
    three places in the middle most prose lines start at are tried as the right column's."""
    prose = [ln for ln in lines if not ln.code and not ln.cells and not ln.heading]
    if len(prose) < 2 * _MIN_LINES:
        return None
    start = min(ln.x0 for ln in lines)
    end = max(ln.x1 for ln in lines)
    width = end - start
    low, high = (start + share * width for share in _GUTTER_SPAN)
    starts = Counter(round(ln.x0) for ln in prose if low <= ln.x0 <= high)
    for at, count in starts.most_common(3):
        if count < _MIN_LINES:
            break
        gutter = min(ln.x0 for ln in prose if abs(ln.x0 - at) <= _SAME_X)
        left = [ln for ln in lines if ln.x0 < low and ln.x1 <= gutter - _MIN_GAP_EM * ln.size]
        if not left:
            continue
        # the right column: all that starts past the left one's end (a table's border is set
        # out a little from the column's text, an item's text set in from its bullet)
        left_end = max(ln.x1 for ln in left)
        right = [ln for ln in lines if ln.x0 >= left_end]
        left_prose = [ln for ln in prose if ln.x0 < low and ln.x1 <= left_end]
        right_prose = [ln for ln in prose if ln.x0 >= left_end]
        if (
            len(left_prose) < _MIN_LINES
            or len(right_prose) < _MIN_LINES
            or len(lines) - len(left) - len(right) > _CROSSING_SHARE * len(lines)
            or not _side_by_side(left, right)
        ):
            continue
        shift = _text_edge(right_prose) - _text_edge(left_prose)
        return Column(0, start, left_end, 0.0), Column(1, left_end, end, shift)
    return None


def _text_edge(lines: list[PdfLine]) -> float:
    """Where a column's text starts: the leftmost place two of its prose ``lines`` or more start
    at (one line set out into the margin does not move it; items set in do not either)."""
    starts = Counter(round(ln.x0) for ln in lines)
    at = min((x for x, n in starts.items() if n >= 2), default=min(starts))
    return min(ln.x0 for ln in lines if abs(ln.x0 - at) <= _SAME_X)


def _side_by_side(left: list[PdfLine], right: list[PdfLine]) -> bool:
    """Whether the two groups of lines share most of the shorter one's height."""
    top = min(max(ln.y for ln in left), max(ln.y for ln in right))
    bottom = max(min(ln.y for ln in left), min(ln.y for ln in right))
    shorter = min(max(ln.y for ln in group) - min(ln.y for ln in group) for group in (left, right))
    return shorter > 0 and top - bottom >= _OVERLAP * shorter


def _flag_column_top(lines: list[PdfLine], left: Column, right: Column) -> None:
    first = next((i for i, ln in enumerate(lines) if ln.column is right), None)
    if not first:
        return  # no right column, or the page draws it first: nothing before it to go on
    above = lines[first - 1]
    in_left = [ln.y for ln in lines if ln.column is left]
    in_right = [ln.y for ln in lines if ln.column is right]
    if (
        above.column is left
        and above.y <= min(in_left) + _SAME_X
        and lines[first].y >= max(in_right) - _SAME_X
    ):
        lines[first].flags.add(COLUMN_TOP)
