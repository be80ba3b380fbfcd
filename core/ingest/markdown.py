"""Markdown as sites publish it (MkDocs / Material, GitHub) -> the text that is indexed.

The result is still Markdown-shaped text: ATX heading lines (``#`` .. ``######``) are kept, so
the chunker finds the sections in it (``core.text.chunking``). What changes, line by line,
outside fenced code blocks (which are kept verbatim):

- YAML front matter (``---`` ... ``---`` at the very top) is removed; its ``title`` becomes the
  document title. Broken YAML that looks like front matter (its first line is ``key:``) is
  removed too, with a warning in the log, and the body is read; a block that is not a mapping
  at all is left to the body (it was two thematic breaks). ``key: value`` lines at the top
  closed by ``---`` (the opening ``---`` missing) are front matter too (logged).
- Admonitions (``!!! type "title"``, collapsible ``???``/``???+``, Material content tabs
  ``=== "tab"``) become a lead line and their body, un-indented (to the admonition's own
  indentation): the lead is ``注意: title`` (a label for the type, Japanese when the title or
  the body is Japanese, else English: ``Warning: title``), the title alone for types without a
  label (``aside``), the label alone when there is no title, nothing for ``""``.
- Directive containers (Docusaurus, VitePress, Pandoc, MyST: ``:::warning Title``,
  ``:::tip[Title]``, ``::: {.note}``, ``:::{note}`` … ``:::``, nested with more colons) are read
  as admonitions: the lead line and the body; one never closed loses its opening line only.
  So are GitBook's hints (``{% hint style="warning" %}`` … ``{% endhint %}``). The searches
  for their ends share a budget of twenty times the page's lines: a hostile page of openers
  never closed reads in linear time.
- MDX (Docusaurus reads ``.md`` pages as MDX): the module lines (``import Tabs from
  '@theme/Tabs';``) are no text; a line that is one JSX component's tag (``<Tabs>``,
  ``</TabItem>``) is no line, and its ``label`` or ``title`` (``<TabItem label="Linux">``) leads
  the part as a content tab's does; each part's lists are numbered on their own.
- Block quotes (``> …`` lines) are read as Markdown without their markers (a list quoted is a
  list); a GitHub alert (``> [!NOTE]``, ``> [!WARNING]``: GitHub's and Microsoft Learn's
  published docs) leads with its label as an admonition does (``注意`` / ``Warning``).
- Template markup is read as the published page shows it (Liquid in Jekyll and GitHub's docs,
  Jinja in MkDocs macros, Hugo shortcodes): a data reference (``{% data
  variables.product.prodname_ghe_server %}``, ``{% data reusables.x.ssh-into-instance %}``)
  reads as the words of its name (``prodname ghe server``), a shortcode as its visible text
  (``{{< glossary_tooltip text="etcd" … >}}``, ``{{% heading "whatsnext" %}}``); statements
  (``{% ifversion %}``, ``{% note %}``, ``{{< note >}}``) and ``{{ variables }}`` are removed
  (the content between paired tags stays), and a line of markup alone is no line. Code spans
  and fences keep them as written.
- HTML: comments are dropped; a block of HTML (a line starting with a block tag such as
  ``<div>`` or ``<table>``, up to the next blank line) is read by the HTML reader (tables as
  rows of ``a | b``, lists as items, ``h1``-``h4`` as ``#`` headings, scripts dropped); inline
  tags are removed (``<br>`` becomes a space) and entities decoded. Backslash escapes of
  punctuation (``\\>``, ``\\*``) are shown as the character, outside code spans.
- Images (``![alt](src)``, ``![alt][ref]``) are dropped; links keep their text and lose their
  target (inline, reference and defined shortcut links; autolinks keep the address, which is
  their text); reference-style definitions (``[id]: url``) and attribute lists
  (``{: target="_blank"}``, ``{ .class }``, ``{#id}``) are dropped, as is a heading's anchor
  id written ``## Title [#id]``. Code spans are kept as written. ``.mdx`` pages are read as
  Markdown (imports out, JSX components as their text).
- Ordered lists keep their numbers as the page shows them: ``1.`` ``1.`` ``1.`` (Markdown's
  auto-numbering) becomes ``1.`` ``2.`` ``3.``, per list and nesting level, from the list's
  first number; bullets are written ``-``.
- Tables (``| a | b |`` with a delimiter row) become rows of cells joined by ``" | "``; the
  delimiter row is dropped. Setext headings (``Title`` over ``===`` / ``---``) become ``#`` /
  ``##`` lines; thematic breaks (``---``, ``***``) become blank lines.
"""

from __future__ import annotations

import html
import logging
import re
from dataclasses import dataclass

from core.ingest.html import emit_html
from core.ingest.textbuild import CELL_SEPARATOR, TextBuilder
from core.text.diagrams import read_mermaid
from core.text.normalize import normalize_text

log = logging.getLogger(__name__)

__all__ = ["MarkdownText", "read_markdown", "split_front_matter"]

MAX_FRONT_MATTER_CHARS = 64_000


@dataclass(frozen=True, slots=True)
class MarkdownText:
    title: str | None  # the front matter's title, else the first "# " heading
    text: str  # normalized, Markdown-shaped
    # Lines of ``text`` (stripped) that are list items led by a link: the entries of a
    # navigation list (a MkDocs index, a wiki hub, "see also"). Chunks made of them name other
    # pages rather than answer anything (``core.text.chunking.is_navigation``).
    link_lines: frozenset[str] = frozenset()


# --- front matter ------------------------------------------------------------------------------

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)^(?:---|\.\.\.)[ \t]*$\n?", re.DOTALL | re.MULTILINE)
# "key: value" lines closed by "---" with the opening "---" missing (seen in real sites).
_BARE_FRONT_MATTER = re.compile(
    r"\A((?:[A-Za-z_][\w-]*:(?:[ \t][^\n]*)?\n(?:[ \t]+[^\n]*\n)*)+)(?:---|\.\.\.)[ \t]*(?:\n|\Z)"
)
_YAML_KEY_LINE = re.compile(r"[A-Za-z0-9_][\w .-]*:(?:\s|$)")


def split_front_matter(text: str, name: str) -> tuple[dict, str]:
    """(front matter mapping, body) of normalized Markdown text; ``({}, text)`` without one."""
    import yaml

    match = _FRONT_MATTER.match(text)
    if match is None:
        bare = _BARE_FRONT_MATTER.match(text)
        if bare is None:
            return {}, text
        log.warning("%s: front matter without its opening '---'; removed", name)
        try:
            meta = yaml.safe_load(bare.group(1))
        except (yaml.YAMLError, RecursionError):
            meta = None
        return (meta if isinstance(meta, dict) else {}), text[bare.end() :]
    block, body = match.group(1), text[match.end() :]
    first = next((ln for ln in block.splitlines() if ln.strip() and not ln.startswith("#")), "")
    if not block.strip():
        return {}, body
    if len(block) > MAX_FRONT_MATTER_CHARS:
        log.warning("%s: front matter of %d characters not parsed; removed", name, len(block))
        return {}, body
    try:
        meta = yaml.safe_load(block)
    except (yaml.YAMLError, RecursionError) as exc:  # nesting too deep for the reader too
        if _YAML_KEY_LINE.match(first):
            log.warning("%s: front matter is not valid YAML (%s); body read without it", name, exc)
            return {}, body
        return {}, text
    if isinstance(meta, dict):
        return meta, body
    return {}, text


# --- inline ------------------------------------------------------------------------------------

_CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_IMAGE = re.compile(
    r"!\[(?:[^\[\]]|\[[^\[\]]*\])*\]"
    r"(?:\(\s*(?:<[^>\n]*>|(?:[^()\s]|\([^()\s]*\))*)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"
    r"|\[[^\]]*\])"
)
_LINK = re.compile(
    r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]"
    r"\(\s*(?:<[^>\n]*>|(?:[^()\s]|\([^()\s]*\))*)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"
)
_REF_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])+)\]\[([^\[\]]*)\]")
# a list item's text that starts with a link (inline or reference), possibly emphasised
_LEADING_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])+\](?:\(|\[)")
# A reference to another document written out: a URL or a file name with a document extension.
_DOC_REF = (
    r"(?:https?://[^\s()（）<>、,;]+"
    r"|[\w.~/-]*\w\.(?:md|markdown|pdf|docx?|html?|txt|xlsx?|pptx?))"
)
# A list item made only of such references, each alone or after a short title: "関連手順" and
# "See also" lists written without link syntax ("アカウント侵害対応手順（account-compromise.md）、
# malware-infection.md", "Vendor guide: https://…"). A step that merely mentions a file or a URL
# in a sentence is not one.
_REFERENCE_ITEM = re.compile(
    rf"(?:[^()（）、,;；。:：]{{0,60}}?\s*(?:[（(]\s*{_DOC_REF}\s*[)）]|[:：]\s*{_DOC_REF})|{_DOC_REF})"
    rf"(?:\s*[、,;；]\s*(?:[^()（）、,;；。:：]{{0,60}}?\s*(?:[（(]\s*{_DOC_REF}\s*[)）]"
    rf"|[:：]\s*{_DOC_REF})|{_DOC_REF}))*[\s、,;；。.]*",
    re.IGNORECASE,
)
_SHORTCUT = re.compile(r"\[([^\[\]^][^\[\]]*)\](?![\[(:])")
# MDX escapes the brace of a heading's id: "## Disable access logs \{#disable-access-logs}"
_ATTR_LIST = re.compile(
    r"\\?\{:[^{}\n]*\}|\\?\{[ \t]*[.#][\w-][^{}\\\n]*\\?\}|\\?\{[ \t]*[\w-]+=[^{}\n]*\}"
)
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^<>\s]+|[^<>\s@]+@[^<>\s@]+\.[^<>\s@]+)>")
_SCRIPT = re.compile(r"<(script|style)\b.*?(?:</\1\s*>|$)", re.IGNORECASE | re.DOTALL)
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
_TAG = re.compile(r"</?[A-Za-z][\w:-]*(?:\s+[^<>]*?)?\s*/?>")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
# a backslash escape of ASCII punctuation (CommonMark): "[ユーザー] \\> [アクティブ ユーザー]" shows ">"
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
# Template markup, which every site renders and none shows as written: Liquid in Jekyll and
# GitHub's docs ({% data variables.product.prodname_ghe_server %}, {% ifversion ghes %},
# {% note %}), Jinja in MkDocs macros ({{ config.site_name }}), Hugo shortcodes in Kubernetes'
# and GitLab's ({{< glossary_tooltip text="etcd" term_id="etcd" >}}, {{% heading "whatsnext" %}},
# {{< note >}}). Read by ``_templates``.
_LIQUID_TAG = re.compile(r"\{%-?\s*(\w+)([^%]*?)-?%\}")
_SHORTCODE = re.compile(r"\{\{([<%])-?\s*/?\s*([\w./-]+)((?:[^{}]|\{(?!\{))*?)-?[>%]\}\}")
_TEMPLATE_OUTPUT = re.compile(r"\{\{-?(?![<%])[^{}]*-?\}\}")
# a shortcode's attribute that is its visible text
_SHORTCODE_TEXT = re.compile(r"\b(?:text|title|header|label)\s*=\s*\"([^\"]*)\"")
_QUOTED = re.compile(r"\"([^\"]*)\"")
# a reference's last dotted segment: "variables.product.prodname_ghe_server" -> its words
_REFERENCE = re.compile(r"[\w.-]*?([\w-]+)\s*$")


def _liquid(match: re.Match[str]) -> str:
    """A Liquid data reference reads as the words of its name (a product name, a reusable
    step: "ssh-into-instance"); a statement (if, note, link, octicon …) is markup."""
    if match.group(1) != "data":
        return ""
    found = _REFERENCE.search(match.group(2))
    return re.sub(r"[_-]+", " ", found.group(1)).strip() if found else ""


def _shortcode(match: re.Match[str]) -> str:
    """A Hugo shortcode reads as its visible text (``text="…"``, a panel's ``header``) or, for
    ``heading``, its quoted argument (Kubernetes' localised section titles); else it is markup."""
    args = match.group(3)
    found = _SHORTCODE_TEXT.search(args)
    if found:
        return found.group(1)
    if match.group(2) == "heading" and (quoted := _QUOTED.search(args)):
        return quoted.group(1)
    return ""


def _templates(text: str) -> str:
    """``text`` with its template markup read as a reader of the site sees it (see
    ``_LIQUID_TAG``): data references and shortcode texts as words, the rest removed."""
    if "{" not in text:
        return text
    text = _SHORTCODE.sub(_shortcode, text)  # first: "{{% x %}}" holds a Liquid-like tag
    text = _LIQUID_TAG.sub(_liquid, text)
    return _TEMPLATE_OUTPUT.sub("", text)


def _inline_segment(text: str, labels: frozenset[str], raw_html: bool) -> str:
    text = _templates(_IMAGE.sub("", text))
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _REF_LINK.sub(lambda m: m.group(1), text)
    if labels:
        text = _SHORTCUT.sub(
            lambda m: m.group(1) if m.group(1).lower() in labels else m.group(0), text
        )
    text = _ATTR_LIST.sub("", text)
    text = _AUTOLINK.sub(lambda m: m.group(1), text)
    if raw_html and "<" in text:
        text = _SCRIPT.sub("", text)
        text = _BR.sub(" ", text)
        text = _TAG.sub("", text)
    if raw_html and "&" in text:
        text = html.unescape(text)
    if raw_html and "\\" in text:
        text = _ESCAPED.sub(r"\1", text)
    return text


def clean_inline(text: str, labels: frozenset[str] = frozenset(), raw_html: bool = True) -> str:
    """One line's inline Markdown without images, link targets, attribute lists and HTML tags;
    code spans are kept as written. ``raw_html=False``: text already read from HTML."""
    if "`" not in text:
        return _inline_segment(text, labels, raw_html)
    out, last = [], 0
    for match in _CODE_SPAN.finditer(text):
        out.append(_inline_segment(text[last : match.start()], labels, raw_html))
        out.append(match.group(0))
        last = match.end()
    out.append(_inline_segment(text[last:], labels, raw_html))
    return "".join(out)


# --- blocks ------------------------------------------------------------------------------------

_FENCE = re.compile(r"( *)(`{3,}|~{3,})(.*)")


def _opens_fence(line: str) -> re.Match[str] | None:
    """The fence ``line`` opens a code block with, if it does (a backtick fence's info string
    has no backtick: "```a``` b" is inline code)."""
    match = _FENCE.fullmatch(line)
    return match if match and not (match.group(2)[0] == "`" and "`" in match.group(3)) else None


def _closes(line: str, fence: str) -> bool:
    """Whether ``line`` closes the code fence opened with ``fence`` (the same character, at
    least as many, nothing after it)."""
    match = _FENCE.fullmatch(line)
    return bool(
        match
        and match.group(2)[0] == fence[0]
        and len(match.group(2)) >= len(fence)
        and not match.group(3).strip()
    )


_ATX = re.compile(r"( {0,3})(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
# a heading's own anchor id as Docusaurus-style sites write it: "## How muting works [#overview]"
_HEADING_ID = re.compile(r"(?:\s*\[#[\w\\-]+\])+\s*$")  # "[#coordinated\_disclosure]" too
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")
_THEMATIC = re.compile(r" {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})")
_ITEM = re.compile(r"( *)(?:(\d{1,9})([.)])|([-*+]))(?:[ \t]+(.*)|$)")
# A task list item's box ("- [ ] Block the sender", "- [x] Notify the lead"): shown as a box
# character, so that "x" is not indexed as a word
_TASK_BOX = re.compile(r"\[([ xX])\][ \t]+")
_ADMONITION = re.compile(
    r"( *)(?:!!!|\?\?\?\+?|===)[ \t]*([\w-]+(?:[ \t]+[\w-]+)*)?[ \t]*(?:\"([^\"]*)\"|'([^']*)')?[ \t]*"
)
_REF_DEF = re.compile(
    r" {0,3}\[([^\]^][^\]]*)\]:[ \t]*(?:<[^>]*>|\S+)(?:[ \t]+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?[ \t]*"
)
_DELIMITER_ROW = re.compile(r" *\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_HTML_RAW_TAGS = ("script", "pre", "style", "textarea")
_HTML_BLOCK_TAGS = frozenset(
    [
        "address",
        "article",
        "aside",
        "base",
        "basefont",
        "blockquote",
        "body",
        "caption",
        "center",
        "col",
        "colgroup",
        "dd",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "frame",
        "frameset",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "head",
        "header",
        "hr",
        "html",
        "iframe",
        "legend",
        "li",
        "link",
        "main",
        "menu",
        "menuitem",
        "nav",
        "noframes",
        "ol",
        "optgroup",
        "option",
        "p",
        "param",
        "search",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "title",
        "tr",
        "track",
        "ul",
        "script",
        "pre",
        "style",
        "textarea",
    ]
)
_HTML_BLOCK_START = re.compile(r"( *)<(/?)([A-Za-z][A-Za-z0-9-]*)(?=[\s/>]|$)")
_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")

ADMONITION_LABELS: dict[str, tuple[str, str]] = {}
for _names, _ja, _en in (
    ("note seealso", "メモ", "Note"),
    ("abstract summary tldr", "概要", "Summary"),
    ("info todo", "情報", "Info"),
    ("tip hint important", "ヒント", "Tip"),
    ("success check done", "成功", "Success"),
    ("question help faq", "質問", "Question"),
    ("warning caution attention", "注意", "Warning"),
    ("failure fail missing", "失敗", "Failure"),
    ("danger error", "危険", "Danger"),
    ("bug", "バグ", "Bug"),
    ("example", "例", "Example"),
    ("quote cite", "引用", "Quote"),
):
    for _name in _names.split():
        ADMONITION_LABELS[_name] = (_ja, _en)


# GitHub's alerts (also Microsoft Learn's): a block quote whose first line is ``[!NOTE]``
ALERT_LABELS: dict[str, tuple[str, str]] = {
    "note": ("メモ", "Note"),
    "tip": ("ヒント", "Tip"),
    "important": ("重要", "Important"),
    "warning": ("注意", "Warning"),
    "caution": ("注意", "Caution"),
}
_ALERT = re.compile(r"[ \t]*\[!(note|tip|important|warning|caution)\][ \t]*", re.IGNORECASE)
# a block quote line: its marker and the one space after it
_QUOTE = re.compile(r"( *)> ?")
# a directive container (Docusaurus, VitePress, markdown-it-container, Pandoc, MyST):
# ":::warning Title", ":::tip[Title]", "::: details Title", "::: {.note}", ":::{note}", closed by
# a line of as many colons or more
_CONTAINER = re.compile(
    r"( *)(:{3,})[ \t]*\{?\.?([A-Za-z][\w-]*)\}?(?:\[([^\]]*)\])?[ \t]*(.*?)[ \t]*"
)
_CONTAINER_END = re.compile(r" *(:{3,})[ \t]*")
# GitBook's callout: {% hint style="warning" %} … {% endhint %}
_HINT = re.compile(r"( *)\{%-?\s*hint\s+style=[\"']?([\w-]+)[\"']?\s*-?%\}[ \t]*")
_MIN_SCAN_BUDGET = 100_000
_SCAN_BUDGET_FACTOR = 20
_HINT_END = re.compile(r" *\{%-?\s*endhint\s*-?%\}[ \t]*")
# an MDX page's module lines (Docusaurus reads .md pages as MDX): "import Tabs from '@theme/Tabs';"
_MDX_IMPORT = re.compile(
    r"import\s(?:[^'\"]*\sfrom\s)?\s*['\"][^'\"]+['\"];?[ \t]*|export const \w+ ?=[^;]*;[ \t]*"
)
# a line that is one JSX component's tag (capitalised: <Tabs>, <TabItem label="Linux">,
# </TabItem>, <Admonition type="note" title="…">): its label or title is the part's name
_COMPONENT = re.compile(r"<(/?)([A-Z][\w.]*)(\s[^<>]*)?>")
_COMPONENT_NAME = re.compile(r"""\b(?:label|title)=(?:"([^"]*)"|'([^']*)')""")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


# a tag whose attributes go on over the next lines, as MDX pages write them ("<img" /
# '  alt="…"' / '  src="…"' / "/>", "<Collapser" / '  title="…"' / ">")
_OPEN_TAG = re.compile(r"[ \t]*<[A-Za-z][\w.:-]*(?:\s+[^<>]*)?")
_TAG_LINES = 12


def _join_open_tags(lines: list[str]) -> list[str]:
    """``lines`` with each tag written over several lines joined into one, outside code blocks:
    its attributes are no text of the page, and a component's title still names its part."""
    out: list[str] = []
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if fence is not None:
            fence = None if _closes(line, fence) else fence
        elif opened := _opens_fence(line):
            fence = opened.group(2)
        elif _OPEN_TAG.fullmatch(line):
            end = next(
                (
                    j
                    for j in range(i + 1, min(len(lines), i + 1 + _TAG_LINES))
                    if not lines[j].strip() or ">" in lines[j]
                ),
                None,
            )
            if end is not None and lines[end].strip():
                out.append(
                    " ".join([line.rstrip(), *(ln.strip() for ln in lines[i + 1 : end + 1])])
                )
                i = end + 1
                continue
        out.append(line)
        i += 1
    return out


class _MarkdownHeadings(TextBuilder):
    """HTML blocks inside Markdown: headings are written as ``#`` lines for the chunker."""

    def heading(self, level: int, title: str) -> None:
        self.line(title, marker="#" * level + " ")


class _Lists:
    """Renumbers ordered list items as they are displayed (per list and nesting level)."""

    def __init__(self) -> None:
        self.open: list[list] = []  # [indent, ordered, next number]

    def reset(self) -> None:
        self.open.clear()

    def item(self, indent: int, ordered: bool, number: int) -> int:
        while self.open and self.open[-1][0] > indent:
            self.open.pop()
        if self.open and self.open[-1][0] == indent and self.open[-1][1] == ordered:
            number = self.open[-1][2] if ordered else number
            self.open[-1][2] = number + 1
            return number
        if self.open and self.open[-1][0] == indent:
            self.open.pop()
        self.open.append([indent, ordered, number + 1])
        return number

    def text(self, indent: int, after_blank: bool) -> None:
        """A paragraph line: after a blank line, it ends the lists it is not indented under."""
        if after_blank:
            while self.open and self.open[-1][0] >= indent:
                self.open.pop()


def _is_admonition(match: re.Match) -> bool:
    titled = match.group(3) is not None or match.group(4) is not None
    if match.group(0).lstrip().startswith("==="):
        return titled  # a content tab needs its quoted label; "===" alone is a setext line
    return titled or bool(match.group(2))


def _is_delimiter_row(line: str) -> bool:
    return "|" in line and "-" in line and bool(_DELIMITER_ROW.fullmatch(line))


def _admonition_lead(
    kind: str | None,
    title: str | None,
    body: list[str],
    labels: dict[str, tuple[str, str]] = ADMONITION_LABELS,
) -> str | None:
    words = (kind or "").lower().split()
    label = next((labels[w] for w in words if w in labels), None)
    if title is not None:
        title = title.strip()
        if not title:
            return None
    japanese = bool(_JAPANESE.search(title or " ".join(body)))
    if label is None:
        return title or None
    name = label[0] if japanese else label[1]
    return f"{name}: {title}" if title else name


class _Transformer:
    def __init__(self, labels: frozenset[str], lines: int = 0) -> None:
        self.labels = labels
        self.link_lines: list[str] = []  # output lines that are list items led by a link
        # lines the searches for a container's or a hint's end may still read: each search
        # reads its body, so a well-formed page needs its size times the nesting; a page of
        # openers never closed would need its size squared (a hostile file: hours)
        self.scan_budget = max(_MIN_SCAN_BUDGET, _SCAN_BUDGET_FACTOR * lines)

    def inline(self, text: str) -> str:
        return clean_inline(text, self.labels)

    def _diagram(
        self, lines: list[str], i: int, opening: re.Match[str]
    ) -> tuple[list[str], int] | None:
        """A fenced Mermaid diagram opening at ``lines[i]`` read as its edges or messages
        (``core.text.diagrams``) and the index after its closing fence; None when the fence is
        not Mermaid, is never closed, or does not parse (it is kept as written)."""
        if opening.group(3).strip().strip("{}").lstrip(".").split(" ")[0].lower() != "mermaid":
            return None
        for end in range(i + 1, len(lines)):
            if _closes(lines[end], opening.group(2)):
                read = read_mermaid(lines[i + 1 : end])
                return (read, end + 1) if read is not None else None
        return None

    def run(self, lines: list[str]) -> list[str]:
        lines = _join_open_tags(lines)
        out: list[str] = []
        lists = _Lists()
        fence: str | None = None
        after_blank = True
        paragraph = False  # the last output line is a paragraph line (a setext candidate)
        i = 0
        while i < len(lines):
            line = lines[i]
            if fence is not None:
                out.append(line)
                if _closes(line, fence):
                    fence = None
                i += 1
                continue
            stripped = line.strip()
            if not stripped:
                out.append("")
                after_blank, paragraph = True, False
                i += 1
                continue
            fence_match = _opens_fence(line)
            if fence_match:
                diagram = self._diagram(lines, i, fence_match)
                if diagram is not None:
                    read, i = diagram
                    out += ["", *(f"{fence_match.group(1)}- {item}" for item in read), ""]
                    lists.reset()
                    after_blank, paragraph = True, False
                    continue
                fence = fence_match.group(2)
                lists.reset()
                out.append(line)
                after_blank, paragraph = False, False
                i += 1
                continue
            if "<!--" in line:
                i = self._drop_comment(lines, i)
                continue
            hint = _HINT.fullmatch(line)
            if hint:
                i = self._hint(lines, i, hint, out)
                lists.text(_indent(line), True)
                after_blank, paragraph = True, False
                continue
            if "{" in stripped and not _templates(stripped).strip():  # markup alone: no line
                i += 1
                continue
            indent = _indent(line)

            container = _CONTAINER.fullmatch(line)
            if container and _CONTAINER_END.fullmatch(line) is None:
                i = self._container(lines, i, container, out)
                lists.text(indent, True)
                after_blank, paragraph = True, False
                continue
            if indent == 0 and _MDX_IMPORT.fullmatch(line):
                i += 1
                continue
            component = _COMPONENT.fullmatch(stripped)
            if component:
                lists.reset()  # a component's part starts its own lists
                name = (
                    _COMPONENT_NAME.search(component.group(3) or "")
                    if not component.group(1)
                    else None
                )
                if name:  # a tab's or a box's name leads its part, as a content tab's does
                    if out and out[-1]:
                        out.append("")
                    out.append(" " * indent + self.inline(name.group(1) or name.group(2) or ""))
                after_blank, paragraph = True, False
                i += 1
                continue
            quote = _QUOTE.match(line)
            if quote:
                i = self._blockquote(lines, i, len(quote.group(1)), out)
                lists.text(indent, True)
                after_blank, paragraph = True, False
                continue
            admonition = _ADMONITION.fullmatch(line)
            if admonition and _is_admonition(admonition):
                i = self._admonition(lines, i, admonition, out)
                lists.text(indent, True)
                after_blank, paragraph = True, False
                continue
            if _REF_DEF.fullmatch(line):
                i += 1
                continue
            setext = _SETEXT.fullmatch(line)
            if setext and paragraph and not after_blank:
                level = 1 if setext.group(1)[0] == "=" else 2
                out[-1] = "#" * level + " " + out[-1].strip()
                lists.reset()
                paragraph = False
                i += 1
                continue
            if _THEMATIC.fullmatch(line):
                out.append("")
                after_blank, paragraph = True, False
                i += 1
                continue
            html_start = _HTML_BLOCK_START.match(line)
            if html_start and after_blank and html_start.group(3).lower() in _HTML_BLOCK_TAGS:
                i = self._html_block(lines, i, html_start, out)
                lists.text(indent, after_blank)
                after_blank, paragraph = False, False
                continue
            atx = _ATX.fullmatch(line)
            if atx:
                title = self.inline(_HEADING_ID.sub("", atx.group(3) or "")).strip()
                out.append(f"{atx.group(2)} {title}" if title else atx.group(2))
                lists.reset()
                after_blank, paragraph = False, False
                i += 1
                continue
            if "|" in line and i + 1 < len(lines) and _is_delimiter_row(lines[i + 1]):
                i = self._table(lines, i, out)
                after_blank, paragraph = False, False
                continue
            item = _ITEM.fullmatch(line)
            if item and not (item.group(4) and _THEMATIC.fullmatch(line)):
                pad, number, delimiter, bullet, raw = item.groups()
                box = _TASK_BOX.match(raw or "")
                if box:
                    raw = ("☐ " if box.group(1) == " " else "☑ ") + raw[box.end() :]
                rest = self.inline(raw or "")
                if bullet:
                    lists.item(len(pad), False, 0)
                    out.append(f"{pad}- {rest}".rstrip())
                else:
                    shown = lists.item(len(pad), True, int(number))
                    out.append(f"{pad}{shown}{delimiter} {rest}".rstrip())
                if raw and (
                    _LEADING_LINK.match(raw.lstrip("*_ "))
                    or _REFERENCE_ITEM.fullmatch(rest.strip())
                ):
                    self.link_lines.append(out[-1])
                after_blank, paragraph = False, False
                i += 1
                continue
            lists.text(indent, after_blank)
            out.append(self.inline(line))
            after_blank, paragraph = False, True
            i += 1
        return out

    def _drop_comment(self, lines: list[str], i: int) -> int:
        """Remove the comment starting on line ``i`` (up to its ``-->``); returns ``i``."""
        j = i
        joined = lines[i]
        start = joined.index("<!--")
        while "-->" not in joined[start + 4 :] and j + 1 < len(lines):
            j += 1
            joined += "\n" + lines[j]
        cleaned = _COMMENT.sub("", joined)
        if "<!--" in cleaned:  # unclosed: drop the rest of its first line only
            head = lines[i][: lines[i].index("<!--")]
            lines[i : i + 1] = [head] if head.strip() else []
            return i
        remainder = cleaned.split("\n")
        lines[i : j + 1] = [ln for ln in remainder if ln.strip()] or []
        return i

    def _admonition(self, lines: list[str], i: int, match: re.Match, out: list[str]) -> int:
        base = len(match.group(1))
        title = match.group(3) if match.group(3) is not None else match.group(4)
        j = i + 1
        last = i
        while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) >= base + 4):
            if lines[j].strip():
                last = j
            j += 1
        body = lines[i + 1 : last + 1]
        depth = min((_indent(ln) for ln in body if ln.strip()), default=0)
        body = [ln[depth:] if ln.strip() else "" for ln in body]
        self._block(out, " " * base, _admonition_lead(match.group(2), title, body), body)
        return last + 1

    def _container(self, lines: list[str], i: int, match: re.Match, out: list[str]) -> int:
        """A directive container (``:::type title`` … ``:::``) as an admonition: its lead line
        and body. Containers nest (an inner one closes first); one never closed is no
        container: its opening line is dropped and the lines after it are read as they are."""
        end = self._end(lines, i, _CONTAINER_END, _CONTAINER)
        if end is None:
            return i + 1
        body = lines[i + 1 : end]
        title = match.group(4) if match.group(4) is not None else match.group(5)
        lead = _admonition_lead(match.group(3), title or None, body)
        self._block(out, " " * len(match.group(1)), lead, body)
        return end + 1

    def _hint(self, lines: list[str], i: int, match: re.Match, out: list[str]) -> int:
        """GitBook's ``{% hint style="warning" %}`` … ``{% endhint %}`` as an admonition; one
        never closed loses its opening line only."""
        end = self._end(lines, i, _HINT_END, None)
        if end is None:
            return i + 1
        body = lines[i + 1 : end]
        lead = _admonition_lead(match.group(2), None, body)
        self._block(out, " " * len(match.group(1)), lead, body)
        return end + 1

    def _end(
        self, lines: list[str], i: int, closes: re.Pattern, opens: re.Pattern | None
    ) -> int | None:
        """The line that closes the block opened on line ``i`` (blocks ``opens`` starts nest
        inside it), or ``None`` when none does before the page or the search budget ends: each
        line read spends one of the budget, so a page of openers never closed reads in linear
        time."""
        depth = 1
        for j in range(i + 1, len(lines)):
            self.scan_budget -= 1
            if self.scan_budget < 0:
                return None
            if closes.fullmatch(lines[j]):
                depth -= 1
                if depth == 0:
                    return j
            elif opens is not None and opens.fullmatch(lines[j]):
                depth += 1
        return None

    def _block(self, out: list[str], pad: str, lead: str | None, body: list[str]) -> None:
        """An admonition's or a quote's lead line and body, apart from what comes before."""
        if out and out[-1]:
            out.append("")
        if lead:
            out.append(pad + self.inline(lead))
        out.extend(pad + ln if ln else "" for ln in self.run(body))
        out.append("")

    def _blockquote(self, lines: list[str], i: int, base: int, out: list[str]) -> int:
        """The block quote starting on line ``i`` (its consecutive ``>`` lines) read as Markdown
        without its markers; a GitHub alert's ``[!NOTE]`` line becomes its label."""
        j = i
        body: list[str] = []
        while j < len(lines) and (match := _QUOTE.match(lines[j])):
            body.append(lines[j][match.end() :])
            j += 1
        alert = _ALERT.fullmatch(body[0]) if body else None
        if alert:
            body = body[1:]
        lead = _admonition_lead(alert.group(1), None, body, ALERT_LABELS) if alert else None
        self._block(out, " " * base, lead, body)
        return j

    def _html_block(self, lines: list[str], i: int, match: re.Match, out: list[str]) -> int:
        tag = match.group(3).lower()
        j = i
        if tag in _HTML_RAW_TAGS and not match.group(2):
            closing = re.compile(rf"</{tag}\s*>", re.IGNORECASE)
            while j + 1 < len(lines) and not closing.search(lines[j]):
                j += 1
        else:
            while j + 1 < len(lines) and lines[j + 1].strip():
                j += 1
        builder = _MarkdownHeadings()
        try:
            emit_html("\n".join(lines[i : j + 1]), builder)
        except ValueError as exc:
            log.warning("HTML block not readable (%s); its tags are removed", exc)
            for line in lines[i : j + 1]:
                builder.line(self.inline(line))
        pad = " " * len(match.group(1))
        for line in builder.text().split("\n"):
            if line.strip():
                out.append(pad + clean_inline(line, self.labels, raw_html=False))
        return j + 1

    def _table(self, lines: list[str], i: int, out: list[str]) -> int:
        rows = [lines[i]]
        j = i + 2
        while j < len(lines) and lines[j].strip() and "|" in lines[j]:
            rows.append(lines[j])
            j += 1
        for row in rows:
            inner = row.strip()
            if inner.startswith("|"):
                inner = inner[1:]
            if inner.endswith("|") and not inner.endswith("\\|"):
                inner = inner[:-1]
            cells = [self.inline(c).strip().replace("\\|", "|") for c in _CELL_SPLIT.split(inner)]
            if any(cells):
                out.append(CELL_SEPARATOR.join(cells))
        return j


def _expand_leading_tabs(text: str) -> str:
    if "\t" not in text:
        return text
    lines = []
    for line in text.split("\n"):
        stripped = line.lstrip(" \t")
        lead = line[: len(line) - len(stripped)]
        lines.append(lead.expandtabs(4) + stripped if "\t" in lead else line)
    return "\n".join(lines)


def read_markdown(text: str, name: str) -> MarkdownText:
    """Read decoded Markdown (see the module docstring); ``name`` is for log messages."""
    text = normalize_text(_expand_leading_tabs(text.replace("\r\n", "\n")))
    meta, body = split_front_matter(text, name)
    lines = body.split("\n")
    labels = frozenset(
        m.group(1).strip().lower()
        for ln in lines
        if "]:" in ln
        for m in [_REF_DEF.fullmatch(ln)]
        if m
    )
    transformer = _Transformer(labels, len(lines))
    out = transformer.run(lines)
    result = normalize_text("\n".join(out))
    link_lines = frozenset(
        line for line in (normalize_text(x).strip() for x in transformer.link_lines) if line
    )
    given = meta.get("title")
    title = (
        " ".join(_templates(str(given)).split()) or None
        if isinstance(given, str | int | float)
        else None
    )
    if title is None:
        for line in result.split("\n"):
            atx = _ATX.fullmatch(line)
            if atx and len(atx.group(2)) == 1 and (atx.group(3) or "").strip():
                title = atx.group(3).strip()
                break
    return MarkdownText(title=title, text=result, link_lines=link_lines)
