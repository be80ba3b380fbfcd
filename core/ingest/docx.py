"""Word documents (.docx) -> normalized text with headings from the paragraph styles.

python-docx opens the package (zip, content types, relationships, the main document part,
styles and numbering); the body is then read from its XML in document order:

- headings: paragraphs whose style is ``Heading 1``..``Heading 4`` (``heading n`` / ``見出し n``,
  also a custom style based on one, or an explicit outline level 1-4); ``Title`` (``表題``) is
  the document title and, when present, a level-1 heading above the Heading n levels (n + 1),
  as ``#`` above ``##`` in Markdown. Deeper headings stay as lines. A document typed without
  heading styles has its headings read from their look (``_formatted_headings``);
- lists: paragraphs with numbering (their own or their style's) become ``- item`` or
  ``1. item`` lines by the level's number format, numbered per list and level, indented two
  spaces per level;
- tables: one line per row, cells joined by ``" | "`` (a cell's paragraphs and nested tables
  folded into it);
- text in tracked insertions is kept and tracked deletions are not; a table of contents (TOC
  styles or a TOC content control, or typed by hand: a 「目次」 / Contents paragraph and the
  entries after it that end in a page number) and the fallback copy of text boxes are skipped; page
  headers, footers, comments and footnotes are not read.

Bad files raise ``SourceFileError`` naming the file: not a zip (an old binary ``.doc`` is named
as such), a zip that is not a Word document, or one whose parts would unpack to more than
``MAX_UNZIPPED_FACTOR`` times the file size limit (a zip bomb).
"""

from __future__ import annotations

import io
import logging
import re
import zipfile
from collections import Counter
from dataclasses import dataclass

from core.errors import SourceFileError
from core.ingest.contents import ends_in_page_number, is_contents_title, is_leader_entry
from core.ingest.textbuild import TextBuilder
from core.ingest.typed import heading_text, typed_level
from core.schemas.documents import Heading
from core.text.diagrams import is_mermaid, read_mermaid

log = logging.getLogger(__name__)

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
MC_NS = "http://schemas.openxmlformats.org/markup-compatibility/2006"
MAX_UNZIPPED_FACTOR = 10
MAX_HEADING_LEVEL = 4
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_HEADING_NAME = re.compile(r"(?:heading|見出し)\s*(\d)", re.IGNORECASE)
_TITLE_NAMES = frozenset({"title", "表題"})
_TOC_NAME = re.compile(r"(?:toc|目次)\s*(?:\d|heading|見出し)?", re.IGNORECASE)
_LIST_STYLE_LEVEL = re.compile(r"list(?: bullet| number)? ([2-9])")
_UNORDERED_FORMATS = frozenset({"bullet", "none", ""})
_OFF = frozenset({"0", "false", "off", "none"})
_WORD_DEFAULT_SIZE = 20.0  # half-points: Word's size when neither a style nor a default sets one


def _style_id(p) -> str | None:
    ppr = p.find(_w("pPr"))
    return _val(ppr.find(_w("pStyle"))) if ppr is not None else None


def _w(tag: str) -> str:
    return f"{{{W_NS}}}{tag}"


def _val(el) -> str | None:
    return None if el is None else el.get(_w("val"))


@dataclass(frozen=True, slots=True)
class DocxText:
    title: str | None  # the Title paragraph, else the first heading, else the core property
    text: str
    headings: tuple[Heading, ...]


@dataclass(frozen=True, slots=True)
class _Style:
    name: str
    based_on: str | None
    outline: int | None  # 0-based outline level from the style's paragraph properties
    num_id: str | None
    ilvl: int
    size: float | None = None  # half-points, from the style's run properties
    bold: bool | None = None


def _run_look(rpr) -> tuple[float | None, bool | None]:
    """(size in half-points, bold) a run-properties element sets, ``None`` where it is silent."""
    if rpr is None:
        return None, None
    size = _val(rpr.find(_w("sz")))
    bold_el = rpr.find(_w("b"))
    bold = None if bold_el is None else (_val(bold_el) or "true").lower() not in _OFF
    return (float(size) if size and size.replace(".", "", 1).isdigit() else None), bold


def _styles(document) -> dict[str, _Style]:
    out: dict[str, _Style] = {}
    for el in document.styles.element.iterchildren(_w("style")):
        style_id = el.get(_w("styleId"))
        if not style_id:
            continue
        ppr = el.find(_w("pPr"))
        outline = _val(ppr.find(_w("outlineLvl"))) if ppr is not None else None
        num_pr = ppr.find(_w("numPr")) if ppr is not None else None
        num_id = _val(num_pr.find(_w("numId"))) if num_pr is not None else None
        ilvl = _val(num_pr.find(_w("ilvl"))) if num_pr is not None else None
        size, bold = _run_look(el.find(_w("rPr")))
        out[style_id] = _Style(
            name=(_val(el.find(_w("name"))) or style_id).strip(),
            based_on=_val(el.find(_w("basedOn"))),
            outline=int(outline) if outline and outline.isdigit() else None,
            num_id=num_id,
            ilvl=int(ilvl) if ilvl and ilvl.isdigit() else 0,
            size=size,
            bold=bold,
        )
    return out


def _number_formats(document) -> dict[str, dict[int, tuple[str, int]]]:
    """numId -> level -> (number format, start) from the numbering part (empty without one)."""
    try:
        numbering = document.part.numbering_part.element
    except (KeyError, NotImplementedError, AttributeError):
        return {}
    abstract: dict[str, dict[int, tuple[str, int]]] = {}
    for el in numbering.iterchildren(_w("abstractNum")):
        levels = {}
        for lvl in el.iterchildren(_w("lvl")):
            ilvl = lvl.get(_w("ilvl"), "0")
            start = _val(lvl.find(_w("start")))
            levels[int(ilvl) if ilvl.isdigit() else 0] = (
                _val(lvl.find(_w("numFmt"))) or "decimal",
                int(start) if start and start.isdigit() else 1,
            )
        abstract[el.get(_w("abstractNumId"), "")] = levels
    out = {}
    for el in numbering.iterchildren(_w("num")):
        levels = dict(abstract.get(_val(el.find(_w("abstractNumId"))) or "", {}))
        for override in el.iterchildren(_w("lvlOverride")):
            ilvl = override.get(_w("ilvl"), "0")
            lvl = override.find(_w("lvl"))
            if lvl is not None and ilvl.isdigit():
                start = _val(lvl.find(_w("start")))
                levels[int(ilvl)] = (
                    _val(lvl.find(_w("numFmt"))) or "decimal",
                    int(start) if start and start.isdigit() else 1,
                )
        out[el.get(_w("numId"), "")] = levels
    return out


class _Reader:
    def __init__(self, document, looks: dict[int, int] | None = None) -> None:
        self.looks = looks or {}  # paragraph index -> heading level by its look (0: title)
        self.index = -1  # of the body paragraph being read
        self.styles = _styles(document)
        self.formats = _number_formats(document)
        self.counters: dict[tuple[str, int], int] = {}
        self.out = TextBuilder()
        self.has_title = False
        self.title: str | None = None
        self.first_heading: str | None = None
        self.in_contents = False  # after a typed 「目次」 title, among its entries

    # --- style lookups -------------------------------------------------------------------
    def _chain(self, style_id: str | None):
        seen = set()
        while style_id and style_id in self.styles and style_id not in seen:
            seen.add(style_id)
            yield self.styles[style_id]
            style_id = self.styles[style_id].based_on

    def paragraph_role(self, p, style_id: str | None) -> tuple[str, int]:
        """("title" | "heading" | "toc" | "body", level) of a paragraph."""
        ppr = p.find(_w("pPr"))
        outline = _val(ppr.find(_w("outlineLvl"))) if ppr is not None else None
        for style in self._chain(style_id):
            name = style.name.lower()
            if name in _TITLE_NAMES:
                return "title", 1
            if _TOC_NAME.fullmatch(name):
                return "toc", 0
            match = _HEADING_NAME.fullmatch(name)
            if match:
                return "heading", int(match.group(1))
        if outline is None:
            outline = next(
                (str(s.outline) for s in self._chain(style_id) if s.outline is not None), None
            )
        if outline is not None and outline.isdigit() and int(outline) < 9:
            return "heading", int(outline) + 1
        return "body", 0

    def numbering(self, p, style_id: str | None) -> tuple[str, int, int] | None:
        """(numId, level, nesting depth) of a numbered or bulleted paragraph, else None."""
        ppr = p.find(_w("pPr"))
        num_pr = ppr.find(_w("numPr")) if ppr is not None else None
        num_id = ilvl = None
        if num_pr is not None:
            num_id = _val(num_pr.find(_w("numId")))
            level = _val(num_pr.find(_w("ilvl")))
            ilvl = int(level) if level and level.isdigit() else None
        if num_id is None:
            style = next((s for s in self._chain(style_id) if s.num_id), None)
            if style is not None:
                num_id, ilvl = style.num_id, ilvl if ilvl is not None else style.ilvl
                # "List Bullet 2" and the like: built-in styles that nest by their name
                nested = _LIST_STYLE_LEVEL.fullmatch(style.name.lower())
                if nested and not ilvl:
                    return num_id, 0, int(nested.group(1)) - 1
        if not num_id or num_id == "0":
            return None
        return num_id, ilvl or 0, ilvl or 0

    def marker(self, num_id: str, ilvl: int) -> str:
        fmt, start = self.formats.get(num_id, {}).get(ilvl, ("bullet", 1))
        for key in [k for k in self.counters if k[0] == num_id and k[1] > ilvl]:
            del self.counters[key]  # a higher level item restarts the deeper levels
        if fmt in _UNORDERED_FORMATS:
            return "- "
        number = self.counters.get((num_id, ilvl), start - 1) + 1
        self.counters[(num_id, ilvl)] = number
        return f"{number}. "

    # --- body ----------------------------------------------------------------------------
    def block_items(self, parent):
        """Paragraphs and tables of ``parent`` in order, through content controls (not TOCs)."""
        for child in parent.iterchildren():
            if child.tag in (_w("p"), _w("tbl")):
                yield child
            elif child.tag == _w("sdt"):
                pr = child.find(_w("sdtPr"))
                gallery = (
                    pr.find(f"{_w('docPartObj')}/{_w('docPartGallery')}")
                    if pr is not None
                    else None
                )
                if gallery is not None and "content" in (_val(gallery) or "").lower():
                    continue  # "Table of Contents"
                content = child.find(_w("sdtContent"))
                if content is not None:
                    yield from self.block_items(content)
            elif child.tag in (_w("customXml"), _w("ins")):
                yield from self.block_items(child)

    def read(self, body) -> None:
        items = list(self.block_items(body))
        i = 0
        while i < len(items):
            if items[i].tag == _w("tbl"):
                self.table(items[i])
                i += 1
            elif (after := self.diagram(items, i)) is not None:
                i = after
            else:
                self.paragraph(items[i])
                i += 1

    def diagram(self, items: list, i: int) -> int | None:
        """A Mermaid diagram's source in code paragraphs from ``items[i]`` (a page pasted with
        its mermaid block unrendered) read as its edges or messages, one list item each
        (``core.text.diagrams``); the index after it, or None."""
        first = paragraph_text(items[i])
        if not is_mermaid(first.split("\n")[:1]):
            return None
        style = _style_id(items[i])
        end = i + 1
        while end < len(items) and items[end].tag != _w("tbl") and _style_id(items[end]) == style:
            end += 1
        lines = [ln for p in items[i:end] for ln in paragraph_text(p).split("\n")]
        read = read_mermaid(lines)
        if read is None:
            return None
        self.index += end - i  # paragraphs counted as ``paragraph`` counts them (``looks``)
        for item in read:
            self.out.line(item, marker="- ")
        return end

    def paragraph(self, p) -> None:
        self.index += 1
        style_id = _style_id(p)
        text = paragraph_text(p)
        role, level = self.paragraph_role(p, style_id)
        if role == "body" and self.index in self.looks:
            level = self.looks[self.index]
            role = "heading" if level else "title"
        if role == "toc" or self._typed_contents(role, text):
            return
        if role == "title" and text.strip():
            if self.title is None:
                self.title = " ".join(text.split())
            self.has_title = True
            self.out.heading(1, text)
            return
        if role == "heading" and level <= MAX_HEADING_LEVEL and text.strip():
            if self.first_heading is None:
                self.first_heading = " ".join(text.split())
            self.out.heading(level + (1 if self.has_title else 0), text)
            return
        numbering = self.numbering(p, style_id)
        for n, line in enumerate(text.split("\n")):
            if numbering is not None and n == 0:
                num_id, ilvl, depth = numbering
                self.out.line(line, indent=2 * depth, marker=self.marker(num_id, ilvl))
            else:
                self.out.line(line, indent=2 * numbering[2] + 2 if numbering else 0)

    def _typed_contents(self, role: str, text: str) -> bool:
        """A table of contents typed by hand (not Word's TOC field): a 「目次」 paragraph, the
        entries after it that end in a page number, and any entry with a dotted leader. The
        title kept as a heading would head the whole document (``core.ingest.contents``)."""
        if role in ("heading", "body") and is_contents_title(text):
            self.in_contents = True
            return True
        if role != "body":
            self.in_contents = False
            return False
        if not text.strip():
            return self.in_contents
        if is_leader_entry(text) or (self.in_contents and ends_in_page_number(text)):
            return True
        self.in_contents = False
        return False

    def table(self, tbl) -> None:
        for tr in tbl.iterchildren(_w("tr")):
            cells = []
            for tc in tr.iterchildren(_w("tc")):
                cells.append(" ".join(paragraph_text(p) for p in tc.iter(_w("p"))))
            self.out.row(cells)


# --- headings set by hand ----------------------------------------------------------------------
# A document typed without heading styles (Japanese business documents often are: every
# heading a paragraph of Normal, set bold or larger, numbered by hand) has its headings read
# from their look, as a PDF's are: a short paragraph, not a list item and not a sentence, set
# larger than the body or bold all through. Its level is the rank of its look (size, then bold)
# among the headings', or its number's depth when that is deeper (``2.1`` set as large as
# ``2.`` is still under it; 第3章 1, 第2節 2). The first paragraph, set alone in the largest
# look, is the title.

_BOLD_SHARE = 0.9


def _formatted_headings(reader: _Reader, body, defaults: tuple[float | None, bool | None]):
    """Paragraph index -> heading level (0: the title) by the paragraphs' look; empty when a
    paragraph's style or outline level makes it a heading (the styles say what the headings
    are)."""
    looks: list[tuple[int, str, float, bool]] = []  # index, text, size, bold
    weights: Counter[float] = Counter()
    has_title = False
    paragraphs = [item for item in reader.block_items(body) if item.tag == _w("p")]
    for index, p in enumerate(paragraphs):
        ppr = p.find(_w("pPr"))
        style_id = _val(ppr.find(_w("pStyle"))) if ppr is not None else None
        role = reader.paragraph_role(p, style_id)[0]
        if role == "heading":
            return {}
        text = " ".join(paragraph_text(p).split())
        has_title = has_title or (role == "title" and bool(text))
        if not text or role != "body":
            continue
        size, bold = _paragraph_look(reader, p, style_id, defaults)
        weights[size] += len(text)
        if reader.numbering(p, style_id) is None:
            looks.append((index, text, size, bold))
    if not weights:
        return {}
    body_size = weights.most_common(1)[0][0]
    candidates = [
        (index, text, (size, bold))
        for index, text, size, bold in looks
        if heading_text(text) and (size >= body_size + 2 or (bold and size >= body_size))
    ]
    if not candidates:
        return {}
    out: dict[int, int] = {}
    largest = max(look for _, _, look in candidates)
    first = candidates[0]
    if (
        not has_title
        and first[0] == min(index for index, *_ in looks)
        and first[2] == largest
        and sum(look == largest for _, _, look in candidates) == 1
    ):
        out[first[0]] = 0
        candidates = candidates[1:]
    ranks = {
        look: rank for rank, look in enumerate(sorted({c[2] for c in candidates}, reverse=True))
    }
    for index, text, look in candidates:
        out[index] = typed_level(text, ranks[look] + 1)
    return out


def _paragraph_look(reader: _Reader, p, style_id, defaults) -> tuple[float, bool]:
    """The size that carries most of a paragraph's characters, and whether nearly all of them
    are bold: each run's own properties, else its paragraph style's (and those it is based
    on), else the document's defaults."""
    style_size = next((s.size for s in reader._chain(style_id) if s.size is not None), None)
    style_bold = next((s.bold for s in reader._chain(style_id) if s.bold is not None), None)
    sizes: Counter[float] = Counter()
    bold_chars = chars = 0
    for run in p.iter(_w("r")):
        text = "".join(t.text or "" for t in run.iter(_w("t"))).strip()
        if not text:
            continue
        size, bold = _run_look(run.find(_w("rPr")))
        size = size or style_size or defaults[0] or _WORD_DEFAULT_SIZE
        bold = bold if bold is not None else style_bold if style_bold is not None else defaults[1]
        sizes[size] += len(text)
        chars += len(text)
        bold_chars += len(text) if bold else 0
    if not chars:
        return defaults[0] or _WORD_DEFAULT_SIZE, False
    return sizes.most_common(1)[0][0], bold_chars >= _BOLD_SHARE * chars


def _defaults(document) -> tuple[float | None, bool | None]:
    rpr = document.styles.element.find(f"{_w('docDefaults')}/{_w('rPrDefault')}/{_w('rPr')}")
    return _run_look(rpr)


def paragraph_text(p) -> str:
    """The text of a paragraph: runs, hyperlinks, tracked insertions; tabs as spaces, line
    breaks as newlines; deleted text, field instructions and the fallback copy of
    alternate content left out."""
    parts: list[str] = []
    t, tab, br, cr, hyphen = _w("t"), _w("tab"), _w("br"), _w("cr"), _w("noBreakHyphen")
    skip = (_w("del"), f"{{{MC_NS}}}Fallback", _w("pPr"), _w("rPr"))
    stack = [p]
    while stack:
        el = stack.pop()
        tag = el.tag
        if tag == t:
            parts.append(el.text or "")
        elif tag == tab:
            parts.append(" ")
        elif tag in (br, cr):
            parts.append("\n")
        elif tag == hyphen:
            parts.append("-")
        elif tag not in skip:
            stack.extend(reversed(el))
    return "".join(parts)


def _check_package(data: bytes, name: str, path: str, max_bytes: int) -> None:
    if data.startswith(_OLE_MAGIC):
        raise SourceFileError(
            path,
            f"「{name}」は古い Word 形式（.doc）のようです。.docx で保存し直してください。"
            "スキップしました。",
        )
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise SourceFileError(
            path,
            f"「{name}」は Word 文書（.docx）ではありません（zip 形式として読めません）。"
            "スキップしました。",
            detail=str(exc),
        ) from exc
    if unpacked > MAX_UNZIPPED_FACTOR * max_bytes:
        raise SourceFileError(
            path,
            f"「{name}」は展開後のサイズが大きすぎるためスキップしました"
            f"（{unpacked / 1e6:.0f} MB）。",
        )


def read_docx(data: bytes, name: str, path: str, max_bytes: int) -> DocxText:
    """Read a .docx; raises ``SourceFileError`` naming the file when it cannot be read."""
    _check_package(data, name, path, max_bytes)
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
        body = document.element.body
        # typed without heading styles: the headings are those their look makes
        looks = _formatted_headings(_Reader(document), body, _defaults(document))
        reader = _Reader(document, looks)
        reader.read(body)
        core_title = (document.core_properties.title or "").strip()
    except Exception as exc:  # python-docx and lxml raise many types on broken packages
        raise SourceFileError(
            path,
            f"「{name}」は壊れているか Word 文書（.docx）として読み込めません。スキップしました。",
            detail=f"{type(exc).__name__}: {exc}",
        ) from exc
    title = reader.title or reader.first_heading or core_title or None
    return DocxText(title=title, text=reader.out.text(), headings=reader.out.headings)
