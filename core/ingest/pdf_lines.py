"""A PDF page as lines that keep their look: text, position, size and weight.

pypdf's ``extract_text(visitor_text=...)`` gives every text run with its font, size and
position; the runs are grouped into lines carrying their page, baseline, left and right edge
(run widths from the font's metrics, see ``FontWidths``), dominant size and weight. A gap of more
than ``_CELL_GAP_EM`` between two runs of a line is a table cell boundary and becomes ``" | "``
(the line is flagged ``GAPPED``: a ``|`` of the text itself makes no row);
a smaller gap with no blank at the junction becomes a space (after a list's number set on its
own, "10.", any gap does: a word processor tabs the item's text close to it). A line knows
whether it is set in a code font for the most part (``code``), and Kangxi radicals that a CJK
font's /ToUnicode table gives for some ideographs read as those ideographs.

A list bullet that is drawn, not written (Chromium draws a ``disc`` or ``circle`` marker as a
path; no character of the text says "item"), is found from the page's paths: a small round or
square mark just before a line's first character, at its height, makes the line a list item
(``drawn_bullet``), as a bullet glyph does.

A table drawn with rules is read by its cells (``core.ingest.pdf_tables``): each row is one line,
its cells joined by ``" | "``, a cell's text whole however it wraps inside its column, at the
place of the row's first piece of text (``cells`` keeps each cell's text, ``room`` the space
left on its last line, to join a row a page break splits: ``core.ingest.pdf``). The gaps
between runs only split cells outside them.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from core.ingest.pdf_tables import Row, Rules, page_point, ruled_rows
from core.schemas.documents import CELL_SEPARATOR

__all__ = [
    "GAPPED",
    "Column",
    "FontWidths",
    "PdfLine",
    "estimate_width",
    "first_word",
    "is_cjk",
    "page_lines",
    "script_join",
]

GAPPED = "gapped"  # a line's flag: cut into cells at wide gaps between its runs
_CELL_GAP_EM = 2.5
_SPACE_GAP_EM = 0.2
_BOLD_SHARE = 0.9


@dataclass(frozen=True, slots=True)
class Column:
    """A text column of a page set in two (``core.ingest.pdf_columns``)."""

    index: int
    x0: float  # the left column's text starts here; the right one's past it
    x1: float
    shift: float  # where its text starts less where the first one's does: indents match


@dataclass(slots=True)
class PdfLine:
    text: str
    page: int
    y: float  # baseline, PDF user space (grows upwards)
    x0: float
    x1: float
    size: float
    bold: bool
    first_word_width: float  # width of the first word, to tell a wrapped line from a short one
    symbol_start: bool = False  # the first run is a single glyph of a symbol font
    drawn_bullet: bool = False  # a small mark is drawn just before the line (``_Mark``)
    code: bool = False  # set in a monospaced font for the most part (a code block, a command)
    cells: tuple[str, ...] = ()  # a ruled table's row: the text of each cell
    room: tuple[float, ...] = ()  # and the space left at the end of each cell's last line
    heading: int = 0  # level when the line is a heading
    title: bool = False
    flags: set[str] = field(default_factory=set)
    column: Column | None = None  # the text column it sits in on a page of two


_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi|[-,]bd\b|w[6-9]\b", re.IGNORECASE)
_SYMBOL_FONT = re.compile(r"symbol|dingbat|wingding|webding", re.IGNORECASE)
# Kangxi radicals and CJK radical supplements as the ideographs they stand for: CJK fonts map
# some ideographs' glyphs to them in their /ToUnicode tables (Chromium's and LibreOffice's PDFs
# of Noto CJK: 「⼿順」「⽬次」), and they are symbols (category So), not letters
_RADICALS = {
    code: unicodedata.normalize("NFKC", chr(code))
    for code in [*range(0x2E80, 0x2EF4), *range(0x2F00, 0x2FD6)]
    if len(unicodedata.normalize("NFKC", chr(code))) == 1
    and unicodedata.normalize("NFKC", chr(code)) != chr(code)
}
# The radical supplements NFKC leaves alone, as the ideographs Unicode names their equivalents
# (EquivalentUnifiedIdeograph.txt): Noto CJK JP in Chromium's PDFs gives 長 as U+2ED1
# (「⻑期間」), and the Japanese simplified forms (麦, 黄, 斉, 歯, 竜, 亀) likewise.
_RADICALS |= {
    code: ideograph
    for code, ideograph in {
        0x2EA0: "民", 0x2EAC: "示", 0x2EC4: "西", 0x2EC6: "角", 0x2ED1: "長", 0x2ED3: "长",
        0x2ED7: "雨", 0x2ED8: "青", 0x2EDD: "食", 0x2EE3: "骨", 0x2EE4: "鬼", 0x2EE8: "麦",
        0x2EE9: "黄", 0x2EEB: "斉", 0x2EED: "歯", 0x2EEF: "竜", 0x2EF2: "亀",
    }.items()
}  # fmt: skip
# a hyphenation point (U+2027) next to Japanese: the katakana middle dot 「・」 that Noto CJK's
# /ToUnicode table in Chromium's PDFs gives as U+2027, which shares its glyph
# (「フォロー‧ザ‧サン」, 「開発‧運用」: no keyword with 「・」 would match them)
_HYPHENATION_POINT = "\u2027"


def _middle_dots(text: str) -> str:
    if _HYPHENATION_POINT not in text:
        return text
    chars = list(text)
    for i, ch in enumerate(chars):
        if ch == _HYPHENATION_POINT and (
            (i > 0 and is_cjk(chars[i - 1])) or (i + 1 < len(chars) and is_cjk(chars[i + 1]))
        ):
            chars[i] = "\u30fb"
    return "".join(chars)


# the code fonts of word processors and browsers, by name: a fixed-pitch flag would also take
# the Japanese body fonts set on a grid (MS Gothic, MS Mincho, IPAGothic)
_CODE_FONT = re.compile(
    r"mono|courier|consol|menlo|inconsolata|code|fixedsys|lucidatypewriter", re.IGNORECASE
)
# C0 controls but the line break and the tab, and DEL: never text
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class FontWidths:
    """Text widths from the font's own metrics (pypdf), and the font's name and weight, cached
    per font dictionary.

    pypdf keys a font's widths by character *code*. The text it extracts is Unicode, which is the
    code only in a font with a standard encoding: a subset font (what Word, LibreOffice and
    browsers embed) numbers its glyphs 1, 2, 3… and maps them to Unicode in its ``/ToUnicode``
    map, so its widths are re-keyed through that map (a width looked up by the Unicode character
    would be another glyph's, and lines would seem to end past the page). The same map leads
    from the text to the glyph ids of a composite (Type0, CID) font. Without such a map, and
    whenever metrics are missing, the width is estimated: 1 em for Japanese and other
    full-width characters, half an em for the rest.
    """

    def __init__(self) -> None:
        # per font dictionary: its widths by Unicode character and its default width, or None
        self._cache: dict[int, tuple[dict[str, float], float] | None] = {}
        self._faces: dict[int, tuple[str, bool]] = {}  # per font dictionary: ``_font_face``
        self._keep: list[Any] = []  # the dictionaries, so that their ids are not reused

    def face(self, font_dict: Any) -> tuple[str, bool]:
        """The font's name and whether it is bold (``_font_face``), read once per font."""
        key = id(font_dict)
        if key not in self._faces:
            self._faces[key] = _font_face(font_dict)
            self._keep.append(font_dict)
        return self._faces[key]

    def width(self, font_dict: Any, text: str, size: float) -> float:
        key = id(font_dict)
        if key not in self._cache:
            metrics = None
            try:
                from pypdf.generic._font import Font

                font = Font.from_font_resource(font_dict)
                # a composite font without a map: widths by glyph id, no way from text to glyph
                if font_dict.get("/Subtype") != "/Type0" or font.character_map:
                    metrics = (_unicode_widths(font), font.character_widths.get("default", 500))
            except Exception:  # private API or an odd font: estimate instead
                metrics = None
            self._cache[key] = metrics
            self._keep.append(font_dict)
        metrics = self._cache[key]
        if metrics is None:
            return estimate_width(text, size)
        widths, default = metrics
        return sum(widths.get(ch, default) for ch in text) / 1000 * size


def _unicode_widths(font: Any) -> dict[str, float]:
    """The font's widths by Unicode character: re-keyed through its ``/ToUnicode`` map where it
    has one, else as pypdf keys them (the code is the character)."""
    by_code = font.character_widths
    widths = dict(by_code)
    for code, char in (font.character_map or {}).items():
        if isinstance(code, str) and isinstance(char, str) and len(char) == 1 and code in by_code:
            widths[char] = by_code[code]
    return widths


def estimate_width(text: str, size: float) -> float:
    return sum(size if is_cjk(ch) else size * 0.5 for ch in text)


def is_cjk(char: str) -> bool:
    """A character of a script written without spaces between words (Japanese, Chinese), and
    the CJK and Kangxi radicals that some fonts give for ideographs (read as those later)."""
    code = ord(char)
    return (
        0x2E80 <= code <= 0x2FDF
        or 0x3000 <= code <= 0x9FFF
        or 0xF900 <= code <= 0xFAFF
        or 0xFF00 <= code <= 0xFFEF
        or 0x20000 <= code <= 0x2FFFF
    )


@dataclass(slots=True)
class _Run:
    text: str
    x0: float
    x1: float
    y: float
    size: float
    bold: bool
    symbol: bool
    font: Any = None  # the font dictionary and the horizontal size, to measure a part of it
    em: float = 0.0
    code: bool = False


@dataclass(frozen=True, slots=True)
class _Mark:
    """The box of a small shape painted on the page (a candidate list bullet)."""

    x0: float
    y0: float
    x1: float
    y1: float


# a drawn mark larger than this (points) is no bullet: a rule, a box, a picture
_MAX_MARK = 12.0
_PATH_POINTS = {b"m": 2, b"l": 2, b"c": 6, b"v": 4, b"y": 4}
_PAINT = frozenset((b"f", b"F", b"f*", b"S", b"s", b"B", b"B*", b"b", b"b*"))
_PATH_OPERATORS = frozenset((*_PATH_POINTS, b"re", b"h", b"n", *_PAINT))


class _Marks:
    """Small painted shapes of a page, from the operators pypdf visits (``visitor_operand_before``):
    the path being built is kept in page space and, when it is filled or stroked, its box is a
    mark if it is small."""

    def __init__(self) -> None:
        self.found: list[_Mark] = []
        self._xs: list[float] = []
        self._ys: list[float] = []

    def _point(self, cm: Any, x: float, y: float) -> None:
        px, py = page_point(cm, x, y)
        self._xs.append(px)
        self._ys.append(py)

    def visit(self, op: bytes, args: Any, cm: Any, tm: Any) -> None:
        try:
            if op in _PATH_POINTS and len(args) >= _PATH_POINTS[op]:
                values = [float(a) for a in args[: _PATH_POINTS[op]]]
                for i in range(0, len(values), 2):
                    self._point(cm, values[i], values[i + 1])
            elif op == b"re" and len(args) >= 4:
                x, y, w, h = (float(a) for a in args[:4])
                self._point(cm, x, y)
                self._point(cm, x + w, y + h)
            elif op in _PAINT or op == b"n":
                if op != b"n" and self._xs:
                    box = _Mark(min(self._xs), min(self._ys), max(self._xs), max(self._ys))
                    if box.x1 - box.x0 <= _MAX_MARK and box.y1 - box.y0 <= _MAX_MARK:
                        self.found.append(box)
                self._xs.clear()
                self._ys.clear()
        except (TypeError, ValueError):  # an operand that is no number: not a shape we read
            self._xs.clear()
            self._ys.clear()


class _MarkIndex:
    """A page's marks by the height of their middle, to look up those beside one line."""

    def __init__(self, marks: list[_Mark]) -> None:
        self.marks = sorted(marks, key=lambda m: m.y0 + m.y1)
        self.middles = [(m.y0 + m.y1) / 2 for m in self.marks]

    def bullet_before(self, x0: float, y: float, size: float) -> bool:
        """Whether a mark is a list bullet for a line starting at ``x0`` on baseline ``y``: round
        or square, 0.15–0.8 em across, ending up to two em before the first character, its
        middle between the baseline and the top of the line."""
        low = bisect_left(self.middles, y - 0.1 * size)
        high = bisect_right(self.middles, y + 0.9 * size)
        for m in self.marks[low:high]:
            w, h = m.x1 - m.x0, m.y1 - m.y0
            if not (0.15 * size <= max(w, h) <= 0.8 * size) or min(w, h) < 0.6 * max(w, h):
                continue
            if x0 - 2.0 * size <= m.x1 <= x0 - 0.05 * size:
                return True
        return False


def _font_face(font_dict: Any) -> tuple[str, bool]:
    """The font's name, and whether its descriptor says it is bold (weight 600 or more, or the
    ForceBold flag). A Type 3 font has no /BaseFont (Chromium embeds Noto CJK so): its name is
    the descriptor's /FontName (「AAAAAA+NotoSansCJKjp-Bold」)."""
    if not font_dict:
        return "", False
    try:
        name = font_dict.get("/BaseFont")
        descriptor = font_dict.get("/FontDescriptor")
        descriptor = descriptor.get_object() if descriptor is not None else None
        if descriptor is None and "/DescendantFonts" in font_dict:  # a composite font
            descendants = font_dict["/DescendantFonts"]
            descendant = descendants.get_object()[0].get_object()
            descriptor = descendant.get("/FontDescriptor")
            descriptor = descriptor.get_object() if descriptor is not None else None
        heavy = False
        if descriptor is not None:
            name = name or descriptor.get("/FontName")
            weight = descriptor.get("/FontWeight")
            flags = descriptor.get("/Flags")
            heavy = (weight is not None and float(weight) >= 600) or (
                flags is not None and int(flags) & (1 << 18) != 0
            )
        return str(name or ""), heavy
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        return str(font_dict.get("/BaseFont", "") or ""), False


def _page_runs(page: Any, fonts: FontWidths) -> tuple[list[_Run | None], list[_Mark], list[Row]]:
    """Runs in pypdf's reading order (``None`` where pypdf breaks the line), the small shapes
    painted on the page, and the rows of its ruled tables."""
    runs: list[_Run | None] = []
    marks = _Marks()
    rules = Rules()

    def shapes(op: bytes, args: Any, cm: Any, tm: Any) -> None:
        if op in _PATH_OPERATORS:  # text operators, most of a page's, draw no shape
            marks.visit(op, args, cm, tm)
            rules.visit(op, args, cm, tm)

    def visit(text: str, cm: Any, tm: Any, font_dict: Any, font_size: float) -> None:
        # NULs and other control characters carry nothing (some fonts' two-byte codes come out
        # as "\x00■\x00 \x00ア…"); left in, they hide bullets and contents entries from the
        # line patterns
        text = _CONTROL.sub("", text) if text else text
        if not text:
            return
        scale_x = abs(tm[0] * cm[0]) or 1.0
        scale_y = abs(tm[3] * cm[3]) or scale_x
        size = round(float(font_size) * scale_y, 1)
        x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        name, heavy = fonts.face(font_dict)
        parts = text.split("\n")
        for number, part in enumerate(parts):
            if number:
                runs.append(None)
                x = None  # text after a newline inside one run: position unknown
            if not part:
                continue
            width = fonts.width(font_dict, part, float(font_size) * scale_x) if font_dict else 0
            x0 = x if x is not None else float("nan")
            runs.append(
                _Run(
                    part,
                    x0,
                    x0 + width,
                    y,
                    size,
                    heavy or bool(_BOLD_NAME.search(name)),
                    bool(_SYMBOL_FONT.search(name)),
                    font_dict,
                    float(font_size) * scale_x,
                    bool(_CODE_FONT.search(name)),
                )
            )

    page.extract_text(visitor_text=visit, visitor_operand_before=shapes)
    return runs, marks.found, ruled_rows(rules)


# a list's number set as a run of its own: a word processor tabs the item's text to the indent,
# and a wide number ("10.") leaves less than a space's width before it
_LIST_MARKER = re.compile(r"^\s*(?:\d{1,3}(?:\.\d{1,3})*[.)]|\(\d{1,3}\)|[A-Za-z][.)])$")


def _join_runs(runs: list[_Run]) -> str:
    out = ""
    prev: _Run | None = None
    for run in runs:
        text = run.text
        if prev is not None and run.x0 == run.x0 and text.strip():
            gap = run.x0 - prev.x1
            em = max(run.size, prev.size, 1.0)
            if gap > _CELL_GAP_EM * em and out.strip():
                out = out.rstrip() + CELL_SEPARATOR
                text = text.lstrip()
            elif (
                (gap > _SPACE_GAP_EM * em or (gap > 0.05 * em and _LIST_MARKER.match(out)))
                and out
                and not out[-1].isspace()
                and not text[0].isspace()
                and not (is_cjk(out[-1]) and is_cjk(text[0]))
            ):
                out += " "
        out += text
        if text.strip():
            prev = run
    return out


# Characters a Japanese line may not start with (JIS X 4051 行頭禁則, the common set): closing
# brackets and punctuation, small kana, the prolonged sound mark, iteration marks.
_NO_LINE_START = frozenset(
    "、。，．,.）)」』】〕〉》］]｝}〙〗！!？?‐゠–〜～ー・：:；;"
    "ぁぃぅぇぉっゃゅょゎゕゖァィゥェォッャュョヮヵヶㇰㇱㇲㇳㇴㇵㇶㇷㇸㇹㇺㇻㇼㇽㇾㇿゝゞヽヾ々〻"
)


def _continue_from(run: _Run, last: _Run) -> None:
    """A run on the line of ``last`` that does not start after it: pypdf reports every string
    of one ``TJ`` array at the array's start (Chromium prints Japanese as 「正」「確」「な」… in
    one array), so the run follows ``last``. Without this, the real position of the next
    array, four characters on, read as a gap: a table cell (「正確な行動 | を特定」) or a
    space inside a word (「非 難」)."""
    width = run.x1 - run.x0
    run.x0 = last.x1
    run.x1 = run.x0 + width


def script_join(a: str, b: str) -> str:
    """Two pieces of one line of text: nothing between them where either side is Japanese
    (or another script written without spaces), a space between Latin words, and nothing after
    a hyphen a word broke at (a heading or a cell wrapped in a narrow column: "Backup-" /
    "First Approach", "IRP-" / "STSTokenAbuse": word processors break after a hyphen, and keep
    it)."""
    if a and b and (is_cjk(a[-1]) or is_cjk(b[0])):
        return a + b
    if len(a) >= 2 and a[-1] == "-" and a[-2].isalnum() and b[:1].isalnum():
        return a + b
    return a + " " + b if a and b else a + b


def first_word(text: str) -> str:
    """The first piece of a line a line break could not have split (see ``_NO_LINE_START``)."""
    word = text.strip().split(" ")[0] if text.strip() else ""
    if word and is_cjk(word[0]):
        # one character, with those that may not start a line (行頭禁則: 「は、」「き、」
        # 「ー」「ッ」): the line before broke earlier to keep them together; Latin runs set
        # right after them go too, up to the next Japanese letter (a word processor breaks
        # neither 「し、~Infrastructure」 nor 「は、http://…、http://…」 between the scripts)
        n = 1
        while n < len(word) and (word[n] in _NO_LINE_START or not is_cjk(word[n])):
            n += 1
        return word[:n]
    # a Latin word runs up to the first Japanese character (「rootパスワードを…」: the line
    # before could have broken after "root")
    return word[: next((i for i, ch in enumerate(word) if is_cjk(ch)), len(word))]


def _line(runs: list[_Run], number: int, fonts: FontWidths, marks: _MarkIndex) -> PdfLine | None:
    """The line a run of text pieces makes, or ``None`` when it holds no text."""
    body = [r for r in runs if r.text.strip()]
    if not body:
        return None
    text = _middle_dots(_join_runs(runs).translate(_RADICALS))
    size, bold, code = _style(body)
    first = body[0]
    word = first_word(text)
    positioned = [r for r in body if r.x0 == r.x0]
    x0 = min((r.x0 for r in positioned), default=0.0)
    return PdfLine(
        text=text,
        page=number,
        y=first.y,
        x0=x0,
        x1=max((r.x1 for r in positioned), default=0.0),
        size=size,
        bold=bold,
        first_word_width=(
            fonts.width(first.font, word, first.em)
            if first.font is not None and word in first.text
            else estimate_width(word, first.size)
        ),
        symbol_start=first.symbol and len(first.text.strip()) == 1,
        code=code,
        drawn_bullet=bool(positioned) and marks.bullet_before(x0, first.y, size),
        # split into cells at wide gaps (a table drawn without rules), not a "|" of the text
        flags={GAPPED} if text.count("|") > sum(r.text.count("|") for r in runs) else set(),
    )


def _style(body: list[_Run]) -> tuple[float, bool, bool]:
    """The size that carries most of the characters of some runs of text, whether they are
    bold (``_BOLD_SHARE`` of them) and whether most are in a code font."""
    sizes: Counter[float] = Counter()
    bold = code = 0
    for run in body:
        chars = len(run.text.strip())
        sizes[run.size] += chars
        bold += chars if run.bold else 0
        code += chars if run.code else 0
    total = sum(sizes.values())
    return sizes.most_common(1)[0][0], bold >= _BOLD_SHARE * total, code > total / 2


def _cell_text(runs: list[_Run], right: float) -> tuple[str, float]:
    """A cell's text: its lines joined for their script where the cell wraps them (the next
    line's first word would not have fit before ``right``, the cell's right rule, less an em
    of padding). A line that ends short of that was broken by hand (``<br>``, a new paragraph
    in the cell) and is kept apart by a space. With the text, where its last line ends."""
    pieces: list[list[_Run]] = []
    for run in runs:
        if pieces and _on_line_of(run, pieces[-1][-1]):
            pieces[-1].append(run)
        else:
            pieces.append([run])
    text, end = "", 0.0
    for piece in pieces:
        part = _join_runs(piece).replace(CELL_SEPARATOR, " ").strip()
        if text and part:
            size = max(r.size for r in piece)
            space = 0.0 if is_cjk(text[-1]) or is_cjk(part[0]) else 0.25 * size
            if end + space + estimate_width(first_word(part), size) < right - size:
                text += " "
        text = text + part if text.endswith("-") else script_join(text, part)
        end = max((r.x1 for r in piece if r.x1 == r.x1), default=right)
    return text, end


def _row_line(row: Row, cells: list[list[_Run]], number: int) -> PdfLine | None:
    """A ruled table's row as one line: its cells, each read whole, joined by ``" | "``."""
    runs = [r for cell in cells for r in cell if r.text.strip()]
    if not runs:
        return None
    read = [_cell_text(cell, right) for cell, right in zip(cells, row.edges[1:], strict=True)]
    texts = tuple(_middle_dots(text.translate(_RADICALS)) for text, _ in read)
    room = tuple(
        right - end if text else right - left
        for (_, end), text, left, right in zip(
            read, texts, row.edges[:-1], row.edges[1:], strict=True
        )
    )
    size, bold, code = _style(runs)
    return PdfLine(
        text=CELL_SEPARATOR.join(texts).strip(),
        page=number,
        y=max(r.y for r in runs),
        x0=row.edges[0],
        x1=row.edges[-1],
        size=size,
        bold=bold,
        first_word_width=0.0,
        code=code,
        cells=texts,
        room=room,
    )


def _cell_of(rows: list[Row], run: _Run, last: tuple[int, int] | None) -> tuple[int, int] | None:
    """The ruled table cell (row, column) a run is set in. A run whose position pypdf does not
    know (text after a line break inside one run) stays in the cell of the run before it."""
    if run.x0 != run.x0:
        if last is not None and rows[last[0]].bottom < run.y < rows[last[0]].top:
            return last
        return None
    middle = (run.x0 + run.x1) / 2
    for number, row in enumerate(rows):
        column = row.column(middle, run.y)
        if column is not None:
            return number, column
    return None


def _on_line_of(run: _Run, last: _Run) -> bool:
    """Whether ``run`` goes on the line of ``last`` (its baseline within half a size). One
    that does not start after ``last`` is placed after it (``_continue_from``)."""
    if abs(run.y - last.y) > 0.5 * max(run.size, last.size):
        return False
    if run.x0 <= last.x0:
        _continue_from(run, last)
    return True


def page_lines(page: Any, number: int, fonts: FontWidths) -> list[PdfLine]:
    """The page's lines in reading order; a row of a ruled table is one line of cells, where
    the row's first piece of text comes."""
    lines: list[PdfLine | None] = []
    current: list[_Run] = []
    runs, found, rows = _page_runs(page, fonts)
    marks = _MarkIndex(found)
    cells: dict[int, list[list[_Run]]] = {}
    slots: dict[int, int] = {}  # row -> its place among the lines
    last_cell: tuple[int, int] | None = None

    def close() -> None:
        line = _line(current, number, fonts, marks)
        if line is not None:
            lines.append(line)
        current.clear()

    for run in runs:
        if run is None:
            close()
            last_cell = None
            continue
        cell = _cell_of(rows, run, last_cell) if rows else None
        if cell is not None:
            close()
            row, column = cell
            if row not in slots:
                slots[row] = len(lines)
                lines.append(None)
                cells[row] = [[] for _ in rows[row].edges[1:]]
            cells[row][column].append(run)
            last_cell = cell
            continue
        last_cell = None
        if current and run.text.strip():
            last = next((r for r in reversed(current) if r.text.strip()), None)
            if last is not None and not _on_line_of(run, last):
                close()
        current.append(run)
    close()
    for row, at in slots.items():
        lines[at] = _row_line(rows[row], cells[row], number)
    return [line for line in lines if line is not None]
