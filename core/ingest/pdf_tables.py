"""Ruled tables on a PDF page: the cells a table's drawn rules make, to read a row as one line.

A word processor or a browser sets a table's text cell by cell: a cell's text wraps inside its
column (「金融データ、顧客情報、特許性を有する製」 / 「品や技術情報を取り扱うシステム」), so the
page's lines hold pieces of several cells. Read line by line, a row becomes a first line of
cells and loose pieces after it, and a cell set close to the next loses the boundary between
them (「docker/, config/ 高」). The borders say where the cells are: ``Rules`` collects the
horizontal and vertical rules a page strokes or fills (pypdf's ``visitor_operand_before``, in
page space through the CTM), and ``ruled_rows`` finds the rows they draw. Two horizontal rules
one above the other, with at least three vertical rules running between them (two columns or
more), make a row; the vertical rules are its column edges. A single box (a note, a code block
in a frame) has two vertical rules and is no table. A table drawn without rules is left to the
gaps between runs (``pdf_lines``).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

__all__ = ["Row", "Rules", "page_point", "ruled_rows"]

_MIN_RULE = 6.0  # points: shorter strokes are marks, ticks or glyph-like drawings
_THIN = 2.0  # points: a filled rectangle at most this thick is a rule
_SAME = 1.5  # points: rules this close are one line (a border drawn per cell, or doubled)
_STROKE = frozenset((b"S", b"s", b"B", b"B*", b"b", b"b*"))
_FILL = frozenset((b"f", b"F", b"f*", b"B", b"B*", b"b", b"b*"))


@dataclass(frozen=True, slots=True)
class _Segment:
    """An axis-aligned rule: ``at`` is its y (horizontal) or x (vertical), ``low``/``high`` its
    extent along the other axis."""

    at: float
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class Row:
    """A row of a ruled table: between ``bottom`` and ``top``, columns split at ``edges``."""

    top: float
    bottom: float
    edges: tuple[float, ...]

    def column(self, x: float, y: float) -> int | None:
        """The column a point is in, or ``None`` when it lies outside the row."""
        if not (self.bottom < y < self.top) or not (self.edges[0] <= x <= self.edges[-1]):
            return None
        return min(bisect_right(self.edges, x) - 1, len(self.edges) - 2)


class Rules:
    """The rules painted on a page, from the operators pypdf visits.

    Stroked straight segments (``m``/``l``/``h``, and the sides of a stroked ``re``) and filled thin
    rectangles, both at least ``_MIN_RULE`` long and axis-aligned. Curves and other paths only
    end the current subpath.
    """

    def __init__(self) -> None:
        self.horizontal: list[_Segment] = []
        self.vertical: list[_Segment] = []
        self._lines: list[tuple[float, float, float, float]] = []
        self._boxes: list[tuple[float, float, float, float]] = []
        self._point: tuple[float, float] | None = None
        self._start: tuple[float, float] | None = None  # where the current subpath began

    def visit(self, op: bytes, args: Any, cm: Any, tm: Any) -> None:
        try:
            if op == b"m" and len(args) >= 2:
                self._point = self._start = page_point(cm, float(args[0]), float(args[1]))
            elif op == b"h":  # closepath: a segment back to where the subpath began
                if self._point is not None and self._start is not None:
                    self._lines.append((*self._point, *self._start))
                self._point = self._start
            elif op == b"l" and len(args) >= 2:
                point = page_point(cm, float(args[0]), float(args[1]))
                if self._point is not None:
                    self._lines.append((*self._point, *point))
                self._point = point
            elif op == b"re" and len(args) >= 4:
                x, y, w, h = (float(a) for a in args[:4])
                corners = [page_point(cm, x, y), page_point(cm, x + w, y + h)]
                xs, ys = [c[0] for c in corners], [c[1] for c in corners]
                self._boxes.append((min(xs), min(ys), max(xs), max(ys)))
                self._point = None
            elif op in (b"c", b"v", b"y"):
                self._point = None
            elif op in _STROKE or op in _FILL or op == b"n":
                self._paint(stroke=op in _STROKE, fill=op in _FILL)
        except (TypeError, ValueError):  # an operand that is no number: not a path we read
            self._lines.clear()
            self._boxes.clear()
            self._point = None

    def _paint(self, *, stroke: bool, fill: bool) -> None:
        if stroke:
            for x0, y0, x1, y1 in self._lines:
                self._add(x0, y0, x1, y1)
            for x0, y0, x1, y1 in self._boxes:
                for side in (
                    (x0, y0, x1, y0),
                    (x0, y1, x1, y1),
                    (x0, y0, x0, y1),
                    (x1, y0, x1, y1),
                ):
                    self._add(*side)
        if fill:
            for x0, y0, x1, y1 in self._boxes:
                if y1 - y0 <= _THIN:
                    self._add(x0, (y0 + y1) / 2, x1, (y0 + y1) / 2)
                elif x1 - x0 <= _THIN:
                    self._add((x0 + x1) / 2, y0, (x0 + x1) / 2, y1)
        self._lines.clear()
        self._boxes.clear()
        self._point = self._start = None

    def _add(self, x0: float, y0: float, x1: float, y1: float) -> None:
        if abs(y1 - y0) <= 0.5 and abs(x1 - x0) >= _MIN_RULE:
            self.horizontal.append(_Segment((y0 + y1) / 2, min(x0, x1), max(x0, x1)))
        elif abs(x1 - x0) <= 0.5 and abs(y1 - y0) >= _MIN_RULE:
            self.vertical.append(_Segment((x0 + x1) / 2, min(y0, y1), max(y0, y1)))


def page_point(cm: Any, x: float, y: float) -> tuple[float, float]:
    """A point of a path in page space: through the current transformation matrix ``cm``."""
    return cm[0] * x + cm[2] * y + cm[4], cm[1] * x + cm[3] * y + cm[5]


def _merged(segments: list[_Segment]) -> list[_Segment]:
    """Collinear rules that touch or overlap as one (a row's border drawn cell by cell).

    Rules within ``_SAME`` of each other's level are collinear; among them, those whose
    extents touch are one. Rules at one level that do not touch (two tables side by side)
    stay apart."""
    out: list[_Segment] = []
    level: list[_Segment] = []
    for seg in sorted(segments, key=lambda s: s.at):
        if level and seg.at - level[0].at > _SAME:
            out.extend(_touching(level))
            level = []
        level.append(seg)
    out.extend(_touching(level))
    return out


def _touching(level: list[_Segment]) -> list[_Segment]:
    out: list[_Segment] = []
    for seg in sorted(level, key=lambda s: s.low):
        last = out[-1] if out else None
        if last is not None and seg.low <= last.high + _SAME:
            out[-1] = _Segment(last.at, last.low, max(last.high, seg.high))
        else:
            out.append(seg)
    return out


def ruled_rows(rules: Rules) -> list[Row]:
    """The rows the page's rules draw, top to bottom (see the module's docstring)."""
    horizontal = _merged(rules.horizontal)
    vertical = _merged(rules.vertical)
    if len(horizontal) < 2 or len(vertical) < 3:
        return []
    rows: list[Row] = []
    for upper in horizontal:
        # the next rule down across the same width: tables side by side (a page of two text
        # columns) have rules at levels of their own
        below = [h for h in horizontal if h.at < upper.at - _SAME and _shared(upper, h)]
        if not below:
            # a row a page break cuts: a browser draws no border at the break, and the table's
            # vertical rules run on from its last horizontal rule to the edge of the page's text
            rows.extend(_open_row(vertical, upper, down=True))
            continue
        if not any(h.at > upper.at + _SAME and _shared(upper, h) for h in horizontal):
            rows.extend(_open_row(vertical, upper, down=False))  # or above its first one
        bottom = max(h.at for h in below)
        if upper.at - bottom < _MIN_RULE:
            continue
        spanning = [v for v in vertical if v.low <= bottom + _SAME and v.high >= upper.at - _SAME]
        for lower in (h for h in below if abs(h.at - bottom) <= _SAME):
            low, high = max(upper.low, lower.low), min(upper.high, lower.high)
            columns = _columns(spanning, low, high)
            if high - low >= _MIN_RULE and len(columns) >= 3:
                rows.append(Row(upper.at, lower.at, tuple(v.at for v in columns)))
    return sorted(rows, key=lambda r: -r.top)


def _shared(a: _Segment, b: _Segment) -> bool:
    """Whether two horizontal rules run across a common width (a rule's length or more)."""
    return min(a.high, b.high) - max(a.low, b.low) >= _MIN_RULE


def _open_row(vertical: list[_Segment], rule: _Segment, *, down: bool) -> list[Row]:
    """The row below the lowest horizontal ``rule`` of a table (``down``) or above its highest
    that the table's vertical rules, three or more, draw without a rule to close it."""
    level = rule.at
    if down:  # from the rule (or above it) on down past it
        running = [v for v in vertical if v.high >= level - _SAME and v.low < level - _MIN_RULE]
    else:
        running = [v for v in vertical if v.low <= level + _SAME and v.high > level + _MIN_RULE]
    columns = _columns(running, rule.low, rule.high)
    if len(columns) < 3:
        return []
    edges = tuple(v.at for v in columns)
    if down:
        return [Row(level, max(v.low for v in columns), edges)]
    return [Row(min(v.high for v in columns), level, edges)]


def _columns(vertical: list[_Segment], low: float, high: float) -> list[_Segment]:
    """The vertical rules between ``low`` and ``high``, left to right, one for each column edge
    (rules closer than ``_SAME`` are one edge)."""
    out: list[_Segment] = []
    for v in vertical:
        if low - _SAME <= v.at <= high + _SAME and (not out or v.at - out[-1].at > _SAME):
            out.append(v)
    return out
