"""HTML pages (wiki exports, saved pages) -> normalized text with headings from ``h1``-``h4``.

Parsed with lxml's HTML parser (libxml2: fast, tolerant of broken markup, no network access, no
entity expansion beyond HTML's own). What is kept and how:

- the content root: the page's one ``<main>`` (or ``role="main"``) element, else its one
  ``<article>``, else ``<body>``;
- dropped with everything inside: ``nav``, ``aside`` (unless its class makes it a callout: a
  note, a caution, a warning box), ``script``, ``style``, ``noscript``,
  ``template``, forms and their controls, embedded objects (``iframe``, ``svg``, ...), elements
  that are ``hidden`` or ``aria-hidden``, ARIA navigation/banner/contentinfo/search/complementary
  landmarks, ``header`` and ``footer`` outside ``main``/``article`` (and a word processor's
  running header and footer: LibreOffice's ``<div title="header">``), and the chrome of common
  wiki exports (table of contents, edit-section links, breadcrumbs, permalink anchors);
- ``h1``-``h4`` become headings (``Document.headings``; ``h5``/``h6`` stay as lines); a page
  without any (saved from a document typed by hand) has its short paragraphs set bold all
  through as headings, a numbered one at its number's depth, any other a level under the last
  numbered one, the one that reads as the page's ``<title>`` the title (``core.ingest.typed``);
- list items become ``- item`` / ``1. item`` lines (numbered from ``<ol start>``), nested lists
  indented; table rows become one line each, cells joined by ``" | "``; ``pre`` keeps its lines;
- images are dropped, links keep their text, entities are decoded, comments are dropped.

The walk over the tree is iterative, so deeply nested markup cannot exhaust the stack.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from core.errors import SourceFileError
from core.ingest.encoding import decode_replacing, decode_text
from core.ingest.textbuild import TextBuilder
from core.ingest.typed import heading_text, typed_level
from core.schemas.documents import Heading
from core.text.chunking import pdf_heading_level
from core.text.normalize import normalize_article

log = logging.getLogger(__name__)

HEADING_TAGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4}
DROPPED_TAGS = frozenset(
    [
        "nav",
        "aside",
        "script",
        "style",
        "noscript",
        "template",
        "form",
        "button",
        "select",
        "option",
        "textarea",
        "input",
        "iframe",
        "frame",
        "frameset",
        "object",
        "embed",
        "svg",
        "math",
        "canvas",
        "audio",
        "video",
        "map",
        "dialog",
        "head",
        "title",
        "img",
        "picture",
        "source",
    ]
)
_PAGE_CHROME_TAGS = frozenset({"header", "footer"})
_DROPPED_ROLES = frozenset({"navigation", "banner", "contentinfo", "search", "complementary"})
# Exact class or id tokens of the chrome that wiki exports put inside the content.
_CHROME_TOKENS = frozenset(
    {
        "toc",
        "mw-editsection",
        "headerlink",
        "breadcrumb",
        "breadcrumbs",
        "breadcrumb-section",
        "sidebar",
        "navbar",
        "skip-link",
        # Confluence exports: author and dates, the attachments and comments sections
        "page-metadata",
        "pagesection",
        # MediaWiki: categories, "Retrieved from", "Jump to navigation"
        "catlinks",
        "printfooter",
        "mw-jump-link",
    }
)
BLOCK_TAGS = frozenset(
    [
        "address",
        "article",
        "blockquote",
        "body",
        "center",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "h5",
        "h6",
        "header",
        "hr",
        "html",
        "legend",
        "li",
        "main",
        "ol",
        "p",
        "section",
        "summary",
        "table",
        "tbody",
        "thead",
        "tfoot",
        "ul",
        "caption",
        "menu",
    ]
)
_META_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)


@dataclass(frozen=True, slots=True)
class HtmlText:
    title: str | None  # the first h1, else <title>
    text: str
    headings: tuple[Heading, ...]
    link_lines: frozenset[str] = frozenset()  # list items led by a link (navigation lists)


# --- decoding ----------------------------------------------------------------------------------


def decode_html(data: bytes, name: str, path: str) -> str:
    """The page as text (``core.ingest.encoding``, its ``meta charset`` the declared encoding);
    else UTF-8 with replacement characters (logged). A binary file is refused."""
    match = _META_CHARSET.search(data[:8192])
    declared = match.group(1).decode("ascii").lower() if match else None
    text = decode_text(data, name, path, declared=declared)
    if text is not None:
        return text
    log.warning("%s: not valid in any expected encoding; undecodable bytes replaced", name)
    return decode_replacing(data)


# --- the walk ----------------------------------------------------------------------------------


def _tokens(value: str | None) -> set[str]:
    return set(value.lower().split()) if value else set()


_PAGE_PARTS = frozenset({"header", "footer"})


# An ``aside`` styled as a callout ("msg_caution", "note", "admonition warning") is part of the
# page: a caution box says what to check, where another ``aside`` is a sidebar of links.
_CALLOUT_TOKEN = re.compile(
    r"(?:^|[-_])(?:note|notice|warning|warn|caution|danger|important|tip|hint|info|msg|"
    r"message|alert|admonition|callout)(?:$|[-_])",
    re.IGNORECASE,
)


def _dropped(el, in_content: bool) -> bool:
    tag = el.tag
    if tag == "aside" and any(_CALLOUT_TOKEN.search(t) for t in _tokens(el.attrib.get("class"))):
        return False
    if tag in DROPPED_TAGS:
        return True
    if tag in _PAGE_CHROME_TAGS and not in_content:
        return True
    attrib = el.attrib
    if not attrib:
        return False
    if "hidden" in attrib or attrib.get("aria-hidden", "").lower() == "true":
        return True
    if attrib.get("role", "").lower() in _DROPPED_ROLES:
        return True
    if tag == "div" and not in_content and attrib.get("title", "").lower() in _PAGE_PARTS:
        return True  # a word processor's running header or footer (LibreOffice's export)
    return bool((_tokens(attrib.get("class")) | _tokens(attrib.get("id"))) & _CHROME_TOKENS)


def _inline_text(el, in_content: bool) -> str:
    """The text of ``el`` and its descendants (dropped elements left out), whitespace folded."""
    parts: list[str] = []
    stack = [(el, False)]
    while stack:
        node, closing = stack.pop()
        if closing:
            if node.tag in BLOCK_TAGS or node.tag in ("td", "th"):
                parts.append(" ")
            if node.tail:
                parts.append(node.tail)
            continue
        if not isinstance(node.tag, str) or _dropped(node, in_content):
            if node is not el and node.tail:
                parts.append(node.tail)
            continue
        if node.tag == "br" or node.tag in BLOCK_TAGS or node.tag in ("td", "th"):
            parts.append(" ")
        if node.text:
            parts.append(node.text)
        if node is not el:
            stack.append((node, True))
        stack.extend((child, False) for child in reversed(node))
    return " ".join("".join(parts).split())  # normalized with the rest by the TextBuilder


_EMPHASIS = frozenset({"strong", "b", "em", "i", "span", "p"})


_BOLD_SHARE = 0.9


def _bold_all_through(el) -> bool:
    """Whether nearly all of ``el``'s text is set in ``b`` or ``strong`` (a heading typed by
    hand: ``<p><b>1. 目的</b></p>``, Word's ``<p class=MsoNormal><b><span …>``)."""
    chars = sum(len(t.strip()) for t in el.xpath(".//text()"))
    bold = sum(len(t.strip()) for t in el.xpath(".//text()[ancestor::b or ancestor::strong]"))
    return chars > 0 and bold >= _BOLD_SHARE * chars


_FONT_SIZE = re.compile(r"font-size\s*:\s*([0-9.]+)\s*pt", re.IGNORECASE)


def _font_size(el) -> float:
    """The largest font size (pt) an inline style sets on ``el`` or inside it (Word's and
    LibreOffice's pages set each run's size so); 0 when none does."""
    sizes = [
        float(m.group(1))
        for node in el.iter()
        if isinstance(node.tag, str)
        for m in _FONT_SIZE.finditer(node.get("style", ""))
        if m.group(1).replace(".", "", 1).isdigit()
    ]
    return max(sizes, default=0.0)


def _typed_headings(root, title: str | None) -> tuple[dict, dict[float, int]]:
    """The headings of a page typed by hand: its short paragraphs set bold all through (not in
    a list or a table), each with its text and font size; and the ranks (1 the largest) of the
    sizes they are set in, when two or more sizes tell them apart (a heading without a size of
    its own is in the body's, the smallest; the title's size is left out). Without ranks their
    levels come from their numbers."""
    found: dict = {}  # paragraph element -> (text, size)
    for p in root.iter("p"):
        if next(p.iterancestors("li", "td", "th"), None) is not None:
            continue
        text = _inline_text(p, True)
        if heading_text(text) and _bold_all_through(p):
            found[p] = (text, _font_size(p))
    sizes = {size for text, size in found.values() if normalize_article(text) != title}
    if len(sizes) < 2:
        return found, {}  # one size: the sizes tell nothing
    ranks = {size: rank for rank, size in enumerate(sorted(sizes, reverse=True), start=1)}
    return found, ranks


def _led_by_link(li) -> bool:
    """An ``li`` whose text starts with a link (``<li><a href>Page</a> - about it</li>``),
    possibly inside emphasis or a paragraph."""
    el = li
    while True:
        if (el.text or "").strip():
            return False
        first = next((c for c in el if isinstance(c.tag, str)), None)
        if first is None:
            return False
        if first.tag == "a":
            return bool(first.get("href")) and bool("".join(first.itertext()).strip())
        if first.tag not in _EMPHASIS:
            return False
        el = first


class _Walker:
    """Emits the content of one element tree to a ``TextBuilder``."""

    def __init__(
        self,
        builder: TextBuilder,
        typed: tuple[dict, dict[float, int]] = ({}, {}),
        title: str | None = None,
    ) -> None:
        self.out = builder
        # a page without h1-h4: its bold paragraphs are its headings (``_typed_headings``),
        # the one that reads as the page's <title> its title (level 1, as an h1)
        self.typed, self.size_ranks = typed
        self.title = title
        self.numbered_depth = 0  # of the last heading numbered by hand
        self.buffer: list[str] = []
        self.lists: list[list] = []  # [ordered, next number] per open list
        self.marker = ""  # list marker waiting for the item's first line
        self.linked = False  # the waiting item is led by a link

    def flush(self) -> None:
        if self.buffer:
            text = "".join(self.buffer)
            self.buffer = []
            if text.strip():
                indent = 2 * max(len(self.lists) - 1, 0)
                self.out.line(text, indent=indent, marker=self.marker, linked=self.linked)
                self.marker, self.linked = "", False

    def walk(self, root, in_content: bool) -> None:
        stack = [(root, False, in_content)]
        while stack:
            el, closing, content = stack.pop()
            if closing:
                self.end(el)
                if el is not root and el.tail:
                    self.buffer.append(el.tail)
                continue
            if not isinstance(el.tag, str) or _dropped(el, content):
                if el is not root and el.tail:
                    self.buffer.append(el.tail)
                continue
            if self.start(el, content):  # the element was emitted whole
                if el is not root and el.tail:
                    self.buffer.append(el.tail)
                continue
            if el.text:
                self.buffer.append(el.text)
            stack.append((el, True, content))
            inner = content or el.tag in ("main", "article")
            stack.extend((child, False, inner) for child in reversed(el))

    def start(self, el, content: bool) -> bool:
        tag = el.tag
        if tag in HEADING_TAGS:
            self.flush()
            self.out.heading(HEADING_TAGS[tag], _inline_text(el, content))
            return True
        if tag == "p" and el in self.typed:
            text, size = self.typed[el]
            self.flush()
            if self.title and normalize_article(text) == self.title:
                self.out.heading(1, text)
                return True
            # the rank of its size among the typed headings' sizes (inline styles); without
            # sizes, a numbered one's depth, any other a level under the last numbered one
            depth = pdf_heading_level(text)
            if size in self.size_ranks:
                level = typed_level(text, self.size_ranks[size])
            else:
                level = typed_level(text, depth or self.numbered_depth + 1)
            if depth:
                self.numbered_depth = level
            self.out.heading(level + 1, text)  # under the page's title, as h2 is
            return True
        if tag == "tr":
            self.flush()
            cells = [c for c in el if isinstance(c.tag, str) and c.tag in ("td", "th")]
            self.out.row([_inline_text(c, content) for c in cells])
            return True
        if tag == "pre":
            self.flush()
            self.out.preformatted("".join(el.itertext()))
            return True
        if tag == "br":
            self.flush()
            return True
        if tag in ("ul", "ol", "menu"):
            self.flush()
            start = el.get("start", "1").strip()
            self.lists.append([tag == "ol", int(start) if start.isdigit() else 1])
        elif tag == "li":
            self.flush()
            if self.lists:
                ordered, number = self.lists[-1]
                value = el.get("value", "").strip()
                number = int(value) if value.isdigit() else number
                self.marker = f"{number}. " if ordered else "- "
                self.lists[-1][1] = number + 1
            else:
                self.marker = "- "
            self.linked = _led_by_link(el)
        elif tag in BLOCK_TAGS:
            self.flush()
        return False

    def end(self, el) -> None:
        if el.tag in BLOCK_TAGS:
            self.flush()
        if el.tag in ("ul", "ol", "menu") and self.lists:
            self.lists.pop()
        if el.tag == "li":
            self.marker, self.linked = "", False


def _parse(text: str):
    """The page's tree (plain lxml elements: the lxml.html element classes cost a lookup per
    element), or None for a page without content; raises ``lxml.etree.LxmlError``."""
    from lxml import etree

    parser = etree.HTMLParser(
        encoding="utf-8", remove_comments=True, remove_pis=True, no_network=True
    )
    return etree.fromstring(text.encode("utf-8", errors="replace"), parser=parser)


def _content_root(doc):
    for query in ("//main", "//*[@role='main']", "//article"):
        found = doc.xpath(query)
        if len(found) == 1:
            return found[0], True
    body = doc.find("body")
    return (body if body is not None else doc), False


def emit_html(text: str, builder: TextBuilder) -> None:
    """Emit an HTML fragment or page (already decoded) to ``builder``, without root selection.

    Used for HTML blocks inside Markdown. Raises ``ValueError`` when lxml cannot parse it.
    """
    from lxml.etree import LxmlError

    try:
        doc = _parse(text)
    except LxmlError as exc:
        raise ValueError(str(exc)) from exc
    if doc is None:
        return
    walker = _Walker(builder)
    body = doc.find("body")
    walker.walk(body if body is not None else doc, in_content=True)
    walker.flush()


def read_html(data: bytes, name: str, path: str) -> HtmlText:
    """Read an HTML page; raises ``SourceFileError`` naming the file when it has no text."""
    from lxml.etree import LxmlError

    text = decode_html(data, name, path)
    try:
        doc = _parse(text)
    except (LxmlError, ValueError) as exc:
        raise SourceFileError(
            path,
            f"「{name}」は HTML として読み込めませんでした。スキップしました。",
            detail=f"{type(exc).__name__}: {exc}",
        ) from exc
    if doc is None:
        return HtmlText(title=None, text="", headings=())
    root, in_content = _content_root(doc)
    builder = TextBuilder()
    typed = next(root.iter(*HEADING_TAGS), None) is None
    title_el = doc.find(".//title")
    page_title = normalize_article("".join(title_el.itertext())) if title_el is not None else ""
    headings_typed = _typed_headings(root, page_title or None) if typed else ({}, {})
    walker = _Walker(builder, headings_typed, title=page_title or None)
    walker.walk(root, in_content)
    walker.flush()
    headings = builder.headings
    title = next((h.title for h in headings if h.level == 1), None)
    if title is None:
        title = page_title or None
    return HtmlText(
        title=title, text=builder.text(), headings=headings, link_lines=builder.link_lines
    )
