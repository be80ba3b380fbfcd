"""Plain-text runbooks (``.txt``): headings, lists, tables and paragraphs from the layout alone.

Teams keep runbooks as plain text too: notes typed in an editor (``【連絡先】``, ``■ 初動対応``,
``1. 目的`` / ``1.1 範囲``, ``・`` items, a title underlined with ``====``), and documents
published as text (an RFC such as RFC 3227 on evidence collection: pages split by form feeds
under a running header and over a running footer, a table of contents with dotted leaders,
numbered sections at the margin over indented body text, paragraphs wrapped at 72 columns).
Without markup, the reader recovers the structure from the layout:

- **Pages.** A line repeated at the top or the bottom of most pages split by form feeds (digits
  aside: page numbers, dates) is a running header or footer and is dropped; the pages are read
  as one text, so a paragraph a page break cuts is joined again.
- **Contents.** A table of contents (``core.ingest.contents``: a 「目次」 / Contents line and the
  entries after it that end in a page number, and any entry with a dotted leader) is dropped.
- **Headings.** A line underlined with ``===`` / ``---`` (``~``, ``*``, ``─``, ``＝`` …); a line
  that is all ``【…】``, or a short line led by a heading mark (``■ □ ◆ ◇ ● ○ ▼ ▽ ★ ☆ ◎ ▶``)
  that no line next to it shares (a run of such lines is a list); a numbered line at the text's
  margin (``1. 目的``, ``2.1 Order of Volatility``, 第3章: the numbered headings of
  ``core.text.chunking.pdf_heading_level``; ``Part 2``, ``Appendix A``, 「付録1」 at the top),
  unless the lines next to it are its siblings (a run of numbered lines, or numbered lines with
  nothing but blank lines between, is a list of steps); a short line alone at the margin when
  the body text is indented (an RFC's "Abstract"); in a file with a paragraph on each line
  (Word's "save as text"), a short line that a paragraph, a list, code or a labelled field
  follows, after a sentence, an item, a heading or a blank line (``_plain_heading``). Each
  heading is short and not a sentence (``core.ingest.typed``), no line of code (a command, a
  shell comment, a diagram's source) and no label with its value (「委任先: 広報」); a line
  that wraps into the next is none. A numbered heading's level is its depth; another's is its
  style's rank among the styles first met under the same numbered heading (by the weight its
  mark carries, then by first appearance); "Step 2: …" or 「手順3」 sits under the heading
  before it. The title is the first line, or a centred line before the first heading: level 1,
  every section a level below it.
- **Lists.** ``-``, ``*``, ``・``, ``•``, ``o`` lead ``- item``; ``1.``, ``1)``, ``(1)``,
  ``①``, ``a.`` lead numbered items as written. Items nest by the column their mark stands at.
- **Tables.** ``| a | b |`` lines are rows (cells joined by ``" | "``); border lines
  (``+---+``, ``|---|``) are dropped.
- **Paragraphs.** In a file wrapped by hand (``_wrap_width``: many lines end in a narrow band of
  columns, 40 to 100, mostly inside a sentence, and hardly any line of prose runs far past it
  where it could have broken), a line is joined to the one before when the one before was
  wrapped: the new line's first word would not have fit on it
  (``core.ingest.pdf_lines.first_word``, East Asian characters two columns wide; a 。 or 、 an
  editor lets hang past the edge does not count). Pieces are joined with the script's separator
  (``script_join``: nothing between Japanese characters); lines of code never join. A file not
  wrapped by hand keeps each line as it is.

A ``.txt`` file written in Markdown (YAML front matter; ATX headings, one of them ``##`` or
deeper; or a heading with a code fence) is read as Markdown by the loader
(``looks_like_markdown``).
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass

from core.ingest.contents import ends_in_page_number, is_contents_title, is_leader_entry
from core.ingest.pdf_lines import first_word, is_cjk, script_join
from core.ingest.textbuild import TextBuilder
from core.ingest.typed import MAX_HEADING_CHARS, MAX_LEVEL, heading_text
from core.schemas.documents import Heading
from core.text.chunking import pdf_heading_level
from core.text.normalize import display_width, safe_nfkc

__all__ = ["PlainText", "looks_like_markdown", "read_plaintext"]

_RUNNING_MIN_PAGES = 3
_RUNNING_SHARE = 0.5
_RUNNING_DEPTH = 2  # lines looked at at the top and the bottom of a page
_MAX_WRAP = 100  # a file wrapped wider than this is not wrapped by hand
_WRAP_SLACK = 8  # a wrapped line ends within this many columns of the wrap width
_MIN_WRAP = 40  # nor narrower than this
_MIN_NEAR = 2  # lines that end near the width, at least
_NEAR_SHARE = 0.3  # of the lines at least as wide as _MIN_WRAP
_BAND = 10  # columns around the commonest end
_OVERLONG_SHARE = 0.1
_SENTENCE_ENDS = tuple("。．.!?！？:：")
_TITLE_LINES = 40  # the title stands within the first lines
_CENTRE_SLACK = 6

_ATX = re.compile(r"#{1,6}\s+\S.*")
_RULE = re.compile(r"\s*([-=_*~#+^─━═―])(?:\s?\1){2,}\s*")
_TABLE_BORDER = re.compile(r"\s*[+|][-=:+| ]*[-=][-=:+| ]*[+|]\s*")
_TABLE_ROW = re.compile(r"\s*\|(.*)\|\s*")
_BRACKETED = re.compile(r"【([^】]{1,40})】\s*(.*)")
_HEADING_MARKS = "■□◆◇●○▼▽★☆◎▶▷"
_MARKED = re.compile(rf"([{_HEADING_MARKS}])\s*(.+)")
# a part, a chapter or an appendix by its number, Roman numeral or capital letter: the top of a
# numbered outline ("Part 2 — Contain", "Appendix A. Checklist", 「付録1」; not "Part of the team")
_PART = re.compile(
    r"(?:(?:[Aa]ppendix|APPENDIX|[Aa]nnex|ANNEX|[Pp]art|PART|[Cc]hapter|CHAPTER)\s+"
    r"(?:\d{1,3}|[IVXLC]{1,5}|[A-Z])(?![a-z])|(?:付録|別紙|別添|第\d{1,2}部)\s*[A-Z0-9]{0,3})"
    r"(?:[.:：]\s*|\s+|$).*"
)
_BULLET = re.compile(r"(?:[-*+・•◦▪‣⁃∙]|o(?=\s))\s*(?=\S)")
_NUMBERED_ITEM = re.compile(r"(?:\d{1,2}[.)]|\(\d{1,2}\)|[①-⑳]|[a-zA-Z][.)]|\([a-z]\))\s*(?=\S)")
# a Japanese label and its value (「委任先: マーケティングチーム」): a field, not a heading
_LABEL = re.compile(r"(?=[^:]{0,11}[\u3040-\u30ff\u3400-\u9fff])[^:\s][^:]{0,11}:\s*\S")
_INNER_GAP = re.compile(r"\S {3,}\S")
# shell and code: a comment, a command, a diagram's source (Mermaid), a continued line, a pipe,
# a tree's branch, braces, variables, an option
_CODE_LIKE = re.compile(
    r"^#|^(?:sudo|echo|cd|ls|cat|grep|export|docker|kubectl|aws|az|gcloud|git|curl|wget|python3?"
    r"|bash|sh|pip|npm|systemctl|journalctl|chmod|chown|mkdir|rm|cp|mv|tar|ssh|scp|find|done|fi"
    r"|then|else|esac|Get-\w+|Set-\w+|Remove-\w+"
    r"|flowchart|graph|sequenceDiagram|classDiagram|stateDiagram|erDiagram|gantt|mindmap)\b"
    r"|[\\|│├└┌┐┘┤┬┴┼{}$<>;=]|\s--?\w"
)


@dataclass(frozen=True, slots=True)
class PlainText:
    title: str | None
    text: str
    headings: tuple[Heading, ...]


@dataclass(slots=True)
class _Line:
    text: str  # safe-NFKC, stripped
    indent: int  # display columns before the text, as the file sets it
    end: int  # display column the line ends at
    kind: str = "text"  # text | blank | heading | title | item | row | drop
    style: str = ""  # a heading's: "num", "under:=", "mark:■", "【】", "margin", "plain"
    depth: int = 0  # a numbered heading's depth
    marker: str = ""  # an item's mark, as the text gets it ("- ", "1. ", "(1) ")
    body: str = ""  # a heading's title, an item's text without its mark, a row's cells
    gapped: bool = False  # columns set apart by runs of spaces (an RFC's header block)

    @property
    def blank(self) -> bool:
        return self.kind == "blank"


def looks_like_markdown(text: str) -> bool:
    """A ``.txt`` file written in Markdown: YAML front matter, or ATX headings (two or more,
    one of them ``##`` or deeper, or one with a code fence: a shell's ``# comment`` lines are no
    headings)."""
    if text.lstrip("\ufeff").startswith("---\n"):
        return True
    lines = text.splitlines()
    atx = [line for line in lines if _ATX.fullmatch(line)]
    if not atx:
        return False
    if len(atx) >= 2 and any(line.startswith("##") for line in atx):
        return True
    return any(line.lstrip().startswith("```") for line in lines)


def _key(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.split()))


def _pages(source: str) -> list[str]:
    """The file's lines with running headers and footers dropped, pages read as one text (the
    blank lines around a page break dropped)."""
    pages = [page.split("\n") for page in source.split("\f")]
    running: set[str] = set()
    if len(pages) >= _RUNNING_MIN_PAGES:
        seen: Counter[str] = Counter()
        for page in pages:
            filled = [line for line in page if line.strip()]
            ends = filled[:_RUNNING_DEPTH] + filled[-_RUNNING_DEPTH:]
            seen.update({_key(line) for line in ends})
        needed = max(_RUNNING_MIN_PAGES, math.ceil(_RUNNING_SHARE * len(pages)))
        running = {key for key, n in seen.items() if n >= needed}
    lines: list[str] = []
    for n, page in enumerate(pages):
        filled = [i for i, line in enumerate(page) if line.strip()]
        ends = set(filled[:_RUNNING_DEPTH] + filled[-_RUNNING_DEPTH:])
        kept = [line for i, line in enumerate(page) if not (i in ends and _key(line) in running)]
        if n:  # a page break: no blank lines around it
            while lines and not lines[-1].strip():
                lines.pop()
            start = next((i for i, line in enumerate(kept) if line.strip()), len(kept))
            kept = kept[start:]
        lines.extend(kept)
    return lines


def _read_lines(raw: list[str]) -> list[_Line]:
    out: list[_Line] = []
    for line in raw:
        line = line.expandtabs(8).rstrip()
        stripped = line.lstrip(" \u3000")
        if not stripped:
            out.append(_Line("", 0, 0, kind="blank"))
            continue
        indent = display_width(line[: len(line) - len(stripped)])
        text = " ".join(safe_nfkc(stripped).split())
        out.append(
            _Line(
                text,
                indent,
                indent + display_width(stripped),
                gapped=bool(_INNER_GAP.search(stripped)),
            )
        )
    return out


def _drop_contents(lines: list[_Line]) -> None:
    """A table of contents: its title and the entries after it; any dotted-leader entry."""
    n = 0
    while n < len(lines):
        line = lines[n]
        if line.blank:
            n += 1
            continue
        if is_leader_entry(line.text):
            line.kind = "drop"
        elif is_contents_title(line.text):
            following = [i for i in range(n + 1, min(n + 6, len(lines))) if not lines[i].blank]
            if following and (
                is_leader_entry(lines[following[0]].text)
                or ends_in_page_number(lines[following[0]].text)
            ):
                line.kind = "drop"
                m = n + 1
                while m < len(lines) and (
                    lines[m].blank
                    or is_leader_entry(lines[m].text)
                    or ends_in_page_number(lines[m].text)
                ):
                    if not lines[m].blank:
                        lines[m].kind = "drop"
                    m += 1
                n = m
                continue
        n += 1


def _next_filled(lines: list[_Line], n: int, step: int, through_blanks: bool) -> _Line | None:
    m = n + step
    while 0 <= m < len(lines):
        if lines[m].kind == "drop":
            m += step
            continue
        if lines[m].blank:
            if not through_blanks:
                return None
            m += step
            continue
        return lines[m]
    return None


def _mark_tables_and_rules(lines: list[_Line]) -> None:
    for n, line in enumerate(lines):
        if line.kind != "text":
            continue
        if _RULE.fullmatch(line.text):
            above = lines[n - 1] if n else None
            if (
                above is not None
                and above.kind == "text"
                and heading_text(above.text)
                and not _RULE.fullmatch(above.text)
            ):
                above.kind, above.style, above.body = "heading", f"under:{line.text[0]}", above.text
            line.kind = "drop"
        elif _TABLE_BORDER.fullmatch(line.text):
            line.kind = "drop"
        elif row := _TABLE_ROW.fullmatch(line.text):
            line.kind, line.body = "row", row.group(1)


def _margin(lines: list[_Line]) -> tuple[int, int]:
    """(the text's margin, the body's usual indent): the leftmost column lines start at, and
    the column most lines of running text (no list items) start at."""
    text = [line for line in lines if line.kind == "text"]
    if not text:
        return 0, 0
    prose = Counter(
        line.indent
        for line in text
        if not (_BULLET.match(line.text) or _NUMBERED_ITEM.match(line.text))
    )
    margin = min(line.indent for line in text)
    return margin, prose.most_common(1)[0][0] if prose else margin


def _mark_headings(lines: list[_Line], width: int | None) -> None:
    margin, body = _margin(lines)
    for n, line in enumerate(lines):
        if line.kind != "text":
            continue
        above = _next_filled(lines, n, -1, through_blanks=False)
        below = _next_filled(lines, n, 1, through_blanks=False)
        if below is not None and below.kind == "text" and _wrapped(line, below, width):
            continue  # a line wrapped by hand goes on in the next: no heading
        bracketed = _BRACKETED.fullmatch(line.text)
        marked = _MARKED.fullmatch(line.text)
        if bracketed and heading_text(line.text):
            title = " ".join(part for part in bracketed.groups() if part)
            line.kind, line.style, line.body = "heading", "【】", title
        elif marked and heading_text(marked.group(2)):
            mark = marked.group(1)
            if not any(x is not None and x.text.startswith(mark) for x in (above, below)):
                line.kind, line.style, line.body = "heading", f"mark:{mark}", marked.group(2)
        elif line.indent <= margin and (depth := _numbered_depth(line.text)):
            line.kind, line.style, line.depth, line.body = "heading", "num", depth, line.text
        elif (
            body > margin
            and line.indent == margin
            and heading_text(line.text)
            and not line.gapped
            and ((above is None and below is None) or (below is not None and below.indent > margin))
        ):
            line.kind, line.style, line.body = "heading", "margin", line.text
        elif line.indent == margin and _plain_heading(lines, n, margin):
            line.kind, line.style, line.body = "heading", "plain", line.text
    _steps_are_items(lines)


def _short(line: _Line, margin: int) -> bool:
    """A line that could be a heading, a label or a table cell: short, at the margin, no item."""
    return (
        line.kind == "text"
        and line.indent == margin
        and heading_text(line.text)
        and not line.gapped
        and not _BULLET.match(line.text)
        and not _NUMBERED_ITEM.match(line.text)
        and not _CODE_LIKE.search(line.text)
    )


def _ends_block(line: _Line) -> bool:
    """A line a section may end on: a sentence, a list item, a heading."""
    return (
        line.kind in ("heading", "title", "item")
        or line.text.endswith(_SENTENCE_ENDS)
        or bool(_BULLET.match(line.text) or _NUMBERED_ITEM.match(line.text))
    )


def _plain_heading(lines: list[_Line], n: int, margin: int) -> bool:
    """In a file with a paragraph on each line (Word's or an editor's "save as text"), a heading
    is a short line that a paragraph, a list, code or a labelled field (「委任先: …」) follows,
    after a blank line, a sentence, a list item or a heading, or at the top after at most two
    short lines (a title and a subtitle). A table's cells, one on each line, follow cells that
    end in no sentence; a table right under a heading leaves the heading unfound (its first
    cell would read as one just as well)."""
    line = lines[n]
    if not _short(line, margin) or is_contents_title(line.text) or _LABEL.match(line.text):
        return False
    below = _next_filled(lines, n, 1, through_blanks=True)
    if below is None:
        return False
    width = line.end - line.indent
    paragraph = below.kind == "text" and (
        below.text.endswith(_SENTENCE_ENDS) or below.end - below.indent >= max(_MIN_WRAP, 2 * width)
    )
    listed = below.kind == "text" and (
        below.indent > margin or bool(_BULLET.match(below.text) or _NUMBERED_ITEM.match(below.text))
    )
    coded = below.kind == "text" and bool(_CODE_LIKE.search(below.text))
    labelled = below.kind == "text" and bool(_LABEL.match(below.text))
    if not (paragraph or listed or coded or labelled):
        return False
    above = _next_filled(lines, n, -1, through_blanks=False)
    if above is None or _ends_block(above):
        return True
    top: list[_Line] = []
    for x in itertools.islice(lines, n):
        if x.kind not in ("blank", "drop"):
            top.append(x)
            if len(top) > 2:
                return False
    return all(_short(x, margin) for x in top)


_STEP_HEADING = re.compile(
    r"(?:[A-Za-z]+\s+)?(?:step|phase|stage|method|pattern|option|scenario|case)\s*\d+\b"
    r"|(?:手順|ステップ|方法|パターン|ケース|フェーズ)\s*\d+",
    re.IGNORECASE,
)
_BARE_NUMBER = re.compile(r"\d{1,2}\s+(\S)")


def _numbered_depth(text: str) -> int:
    """A numbered heading's depth (``core.text.chunking.pdf_heading_level``); a number without
    a dot leads one only before Japanese (「1 目的」): "4 business days" is a table's cell."""
    if _PART.fullmatch(text) and heading_text(text):
        return 1
    bare = _BARE_NUMBER.match(text)
    if bare and not is_cjk(bare.group(1)):
        return 0
    return pdf_heading_level(text, max_chars=MAX_HEADING_CHARS)


def _steps_are_items(lines: list[_Line]) -> None:
    """Numbered "headings" next to a sibling with nothing but blank lines between are the steps
    of a list, not sections (``1. ログを取得する`` / ``2. 端末を隔離する``)."""
    numbered = [n for n, line in enumerate(lines) if line.kind == "heading" and line.style == "num"]
    steps: set[int] = set()
    for a, b in itertools.pairwise(numbered):
        if lines[a].depth != lines[b].depth or not _follows(lines[a].text, lines[b].text):
            continue
        between = [x for x in lines[a + 1 : b] if x.kind != "drop"]
        filled = [x for x in between if not x.blank]
        # nothing between, or an explanation set in under the step (no blank line after it:
        # a section's body starts after one, as an RFC's indented body does)
        hanging = bool(between) and not between[0].blank
        if not filled or (hanging and all(x.indent > lines[a].indent for x in filled)):
            steps.update((a, b))
    for n in steps:
        lines[n].kind, lines[n].style, lines[n].depth = "text", "", 0


_NUMBER = re.compile(r"(\d{1,2}(?:\.\d{1,2})*)")


def _follows(a: str, b: str) -> bool:
    """Whether ``b``'s number is the one after ``a``'s (``2.`` after ``1.``, ``2.4`` after
    ``2.3``)."""
    first, second = _NUMBER.match(a), _NUMBER.match(b)
    if first is None or second is None:
        return False
    *head_a, last_a = first.group(1).split(".")
    *head_b, last_b = second.group(1).split(".")
    return head_a == head_b and int(last_b) == int(last_a) + 1


def _mark_items(lines: list[_Line]) -> None:
    for line in lines:
        if line.kind != "text":
            continue
        bullet = _BULLET.match(line.text)
        if bullet and not _RULE.fullmatch(line.text):
            line.kind, line.marker, line.body = "item", "- ", line.text[bullet.end() :]
            continue
        numbered = _NUMBERED_ITEM.match(line.text)
        if numbered:
            mark = line.text[: numbered.end()].strip()
            line.kind, line.marker, line.body = "item", mark + " ", line.text[numbered.end() :]


def _title(lines: list[_Line], wrapped: bool) -> int | None:
    """The index of the title line: the first line, when it is a heading of a style used once
    or a short line (standing alone, in a file wrapped by hand); else a centred line before
    the first heading."""
    filled = [n for n, line in enumerate(lines) if line.kind not in ("blank", "drop")]
    if not filled:
        return None
    first = lines[filled[0]]
    styles = Counter(line.style for line in lines if line.kind == "heading")
    if first.kind == "heading" and first.style != "num" and styles[first.style] == 1:
        return filled[0]
    alone = _next_filled(lines, filled[0], 1, through_blanks=False) is None or not wrapped
    if (
        first.kind in ("text", "heading")
        and first.style in ("", "plain")
        and alone
        and heading_text(first.text)
        and not first.gapped
    ):
        return filled[0]
    width = max((line.end for line in lines if line.kind == "text"), default=0)
    for n in filled[:_TITLE_LINES]:
        line = lines[n]
        if line.kind == "heading":
            return None
        left, right = line.indent, width - line.end
        if (
            line.kind == "text"
            and left >= 4
            and abs(left - right) <= _CENTRE_SLACK
            and heading_text(line.text)
            and not line.gapped
        ):
            return n
    return None


def _levels(lines: list[_Line]) -> None:
    """A numbered heading's level is its depth; another's is its style's rank (by weight, then
    first appearance: ``_style_weight``) among the styles first met under the same numbered
    heading, below it. A heading that names a step, a phase or a method by its number
    ("Step 2: …", 「手順3」) sits under the heading before it."""
    first_under: dict[str, int] = {}  # style -> the numbered depth it is first met under
    depth = 0
    for line in lines:
        if line.kind == "heading" and line.style == "num":
            depth = line.depth
        elif line.kind == "heading" and not _STEP_HEADING.match(line.body):
            first_under.setdefault(line.style, depth)
    ranks: dict[str, int] = {}
    for depth in set(first_under.values()):
        met = [style for style, under in first_under.items() if under == depth]
        met.sort(key=_style_weight)  # stable: first met first among equals
        for rank, style in enumerate(met, start=1):
            ranks[style] = depth + rank
    last = 0  # the level of the last heading that is no step
    for line in lines:
        if line.kind != "heading":
            continue
        if line.style == "num":
            last = line.depth
        elif _STEP_HEADING.match(line.body):
            line.depth = last + 1  # "Step 2: …" is under the section it is a step of
        else:
            line.depth = last = ranks[line.style]


# Styles met under the same heading rank by the weight their marks carry by convention
# (【】 over an underline of "=" over one of "-", a filled mark over a hollow one), then by
# first appearance.
_FILLED = "■◆●▼★◎▶"


def _style_weight(style: str) -> int:
    if style == "【】":
        return 0
    if style.startswith("under:"):
        return {"=": 1, "-": 2}.get(style[-1], 3)
    if style.startswith("mark:"):
        return 4 if style[-1] in _FILLED else 5
    return 6


def _wrap_width(lines: list[_Line]) -> int | None:
    """The width the file was wrapped at by hand, or None when it was not: the lines of prose
    at least 40 columns wide end in a band around their commonest end (the width: the band's
    90th percentile, at most 100), hardly any runs far past it where it could have broken, and
    most that end at it and go on in a line of text end inside a sentence (a file with a
    paragraph on each line has its long lines end in one)."""
    prose = [
        n
        for n, line in enumerate(lines)
        if line.kind in ("text", "item") and not line.gapped and not _CODE_LIKE.search(line.text)
    ]
    if not prose:
        return None
    long = [edge for edge in (_edge(lines[n]) for n in prose) if edge >= _MIN_WRAP]
    fitting = [end for end in long if end <= _MAX_WRAP]
    if len(fitting) < _MIN_NEAR:
        return None
    # lines wrapped by hand end in a narrow band below the width (a URL or a command that does
    # not break may run past it): the band around the commonest end, and its 90th percentile
    common = max(Counter(fitting).items(), key=lambda item: (item[1], item[0]))[0]
    band = sorted(end for end in fitting if abs(end - common) <= _BAND)
    if len(band) < max(_MIN_NEAR, _NEAR_SHARE * len(long)):
        return None
    width = band[math.ceil(0.9 * (len(band) - 1))]
    # a line of prose far past the width that could have broken before it (at a space, or
    # anywhere in Japanese) was not wrapped by hand: a file with a few is not
    overlong = sum(
        1
        for n in prose
        if lines[n].end > width + _BAND and _breakable(lines[n].text, width - lines[n].indent)
    )
    if overlong > _OVERLONG_SHARE * len(fitting):
        return None
    near = [
        lines[n].text
        for n in prose
        if width - _WRAP_SLACK <= lines[n].end <= width + 2
        and n + 1 < len(lines)
        and lines[n + 1].kind == "text"
    ]
    inside = sum(1 for text in near if not text.endswith(_SENTENCE_ENDS))
    return width if inside and 2 * inside >= len(near) else None


_HANGING = frozenset("。、，．」』）】〕")


def _edge(line: _Line) -> int:
    """Where the line's text reaches the wrap edge: a comma or full stop an editor lets hang
    past the edge (ぶら下げ) does not count."""
    if line.text and line.text[-1] in _HANGING:
        return line.end - display_width(line.text[-1])
    return line.end


def _breakable(text: str, columns: int) -> bool:
    """Whether ``text`` could break within its first ``columns`` columns: at a space, or
    between Japanese characters."""
    used = 0
    for n, char in enumerate(text):
        used += display_width(char)
        if used > columns:
            return False
        if n and (char == " " or is_cjk(char)):
            return True
    return False


def _wrapped(before: _Line, line: _Line, width: int | None) -> bool:
    if width is None or before.end > width + 2 or before.gapped or line.gapped:
        return False
    if _CODE_LIKE.search(before.text) or _CODE_LIKE.search(line.text):
        return False  # a command and its comment are lines of their own
    word = first_word(line.text)
    gap = 0 if word and before.text and (is_cjk(word[0]) or is_cjk(before.text[-1])) else 1
    return before.end + gap + display_width(word) > width


def _joined(pieces: list[str]) -> str:
    """The lines of one paragraph as one line, each break replaced by its script's separator
    (``script_join``), in time linear in the paragraph's length."""
    out = [pieces[0]]
    for piece in pieces[1:]:
        tail = out[-1][-2:]
        joined = script_join(tail, piece[:1])
        out.append(joined[len(tail) : len(joined) - len(piece[:1])])
        out.append(piece)
    return "".join(out)


def read_plaintext(source: str) -> PlainText:
    """Read a decoded plain-text file (see the module docstring)."""
    source = source.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    lines = _read_lines(_pages(source))
    _drop_contents(lines)
    _mark_tables_and_rules(lines)
    width = _wrap_width(lines)
    _mark_headings(lines, width)
    _mark_items(lines)
    title_at = _title(lines, wrapped=width is not None)
    if title_at is not None:
        lines[title_at].kind = "title"
    _levels(lines)
    out = TextBuilder()
    shift = 1 if title_at is not None else 0
    title = None
    stack: list[int] = []  # columns of the open item levels
    pending: tuple[list[str], int, str] | None = None  # (pieces, indent, marker) being assembled
    before: _Line | None = None  # the last line of the pending paragraph or item
    para_indent = 0

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            pieces, indent, marker = pending
            out.line(_joined(pieces), indent=indent, marker=marker)
            pending = None

    for n, line in enumerate(lines):
        if line.kind == "drop":
            continue
        if line.blank:
            flush()
            before = None
            continue
        if n == title_at:
            flush()
            title = line.body or line.text
            out.heading(1, title)
            before = None
            stack.clear()
            continue
        if line.kind == "heading":
            flush()
            out.heading(min(line.depth + shift, MAX_LEVEL), line.body)
            before = None
            stack.clear()
            continue
        if line.kind == "row":
            flush()
            out.row([cell.strip() for cell in line.body.split("|")])
            before = None
            continue
        if line.kind == "item":
            flush()
            while stack and line.indent < stack[-1] - 1:
                stack.pop()
            if not stack or line.indent > stack[-1] + 1:
                stack.append(line.indent)
            level = len(stack) - 1
            pending = ([line.body], 2 * level, line.marker)
            before, para_indent = line, line.indent
            continue
        # running text: goes on the paragraph or item it wraps from
        if (
            pending is not None
            and before is not None
            and _wrapped(before, line, width)
            and (
                (pending[2] == "" and abs(line.indent - para_indent) <= 4)
                or line.indent > para_indent
            )
        ):
            pending[0].append(line.text)
            before = line
            continue
        flush()
        if stack and line.indent <= stack[0]:
            stack.clear()
        pending = ([line.text], 0, "")
        before, para_indent = line, line.indent
    flush()
    text, headings = out.build()
    return PlainText(title=title, text=text, headings=headings)
