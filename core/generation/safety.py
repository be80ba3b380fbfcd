"""Output safety of answer text: what leaves ``core/`` is inert when rendered as Markdown.

``make_safe(text)`` is applied to every answer of both pipelines (LLM or extractive) before it is
returned, streamed, printed by ``ask --json`` or written to the audit log:

- raw HTML is escaped (``<`` becomes ``&lt;``), so ``<script>``, ``<img onerror>``, ``<a href>``
  and autolinks ``<javascript:…>`` render as text; code spans and fenced code blocks are left as
  written (Markdown shows them literally anyway);
- a Markdown link or image whose target uses the ``javascript:``, ``data:`` or ``vbscript:``
  scheme keeps only its text; obfuscations are seen through: case, whitespace and control
  characters inside the scheme, HTML character references (``&#106;``, ``&colon;``), backslash
  escapes and ``<…>`` destinations;
- reference definitions (``[1]: target``) are neutralised, so that a reply cannot turn the
  citation markers ``[1]`` into links.

It is idempotent (safe text stays the same), so pages may apply it again.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

UNSAFE_SCHEMES = ("javascript", "data", "vbscript")
NOTE_LINKS = "回答に含まれていた安全でないリンク（javascript: など）を無効化しました。"
NOTE_HTML = "回答に含まれていた HTML をそのまま文字として表示します。"

_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})[^\n]*\n.*?(?:^\1?\2[ \t]*$|\Z)", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
_REF_DEF = re.compile(r"^( {0,3})\[([^\]\n]+)\]:([^\n]*)", re.M)
_SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):")
_INVISIBLE = re.compile(r"[\x00-\x20\x7f\u00ad\u200b-\u200f\u2028\u2029\u2060\ufeff]+")


@dataclass
class SafeText:
    text: str
    links: list[str] = field(default_factory=list)  # neutralised targets (as written)
    html_tags: int = 0  # raw HTML openings escaped

    @property
    def changed(self) -> bool:
        return bool(self.links or self.html_tags)

    def notes(self) -> list[str]:
        """Japanese warnings for the user (empty when nothing was changed)."""
        out = [NOTE_LINKS] if self.links else []
        return out + ([NOTE_HTML] if self.html_tags else [])


def unsafe_target(target: str) -> bool:
    """Whether a link target runs code or embeds content (javascript:, data:, vbscript:)."""
    t = html.unescape(html.unescape(target))  # nested references such as &amp;#106;
    t = _INVISIBLE.sub("", t.replace("\\", "")).lstrip("<").lower()
    m = _SCHEME.match(t)
    return bool(m and m.group(1) in UNSAFE_SCHEMES)


def _destination_end(text: str, start: int) -> int:
    """The index of the ``)`` closing a link destination that starts at ``start`` (or -1)."""
    depth = 0
    i = start
    angle = False
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "<" and i == start:
            angle = True
        elif ch == ">" and angle:
            angle = False
        elif ch == "\n" and text[i - 1 : i] == "\n":
            return -1
        elif not angle and ch == "(":
            depth += 1
        elif not angle and ch == ")":
            if depth == 0:
                return i
            depth -= 1
        i += 1
    return -1


def _neutralise_links(text: str, links: list[str]) -> str:
    """``[text](unsafe)`` and ``![alt](unsafe)`` become ``text`` / ``alt``."""
    out: list[str] = []
    pos = 0
    while True:
        mid = text.find("](", pos)
        if mid < 0:
            break
        open_at = _label_start(text, mid)
        end = _destination_end(text, mid + 2)
        if open_at < 0 or end < 0:
            out.append(text[pos : mid + 2])
            pos = mid + 2
            continue
        target = text[mid + 2 : end].strip()
        if unsafe_target(target):
            links.append(target[:200])
            label_from = open_at - 1 if open_at > 0 and text[open_at - 1] == "!" else open_at
            out.append(text[pos:label_from])
            out.append(text[open_at + 1 : mid])
        else:
            out.append(text[pos : end + 1])
        pos = end + 1
    out.append(text[pos:])
    return "".join(out)


def _label_start(text: str, close: int) -> int:
    """The ``[`` opening the link label that ends at ``close`` (nested brackets allowed)."""
    depth = 0
    for i in range(close - 1, max(-1, close - 2000), -1):
        ch = text[i]
        if ch == "]":
            depth += 1
        elif ch == "[":
            if depth == 0:
                return i
            depth -= 1
        elif ch == "\n" and text[i - 1 : i] == "\n":
            return -1
    return -1


def _safe_prose(text: str, result: SafeText) -> str:
    """Prose (no code): links neutralised, reference definitions broken, ``<`` escaped."""
    text = _neutralise_links(text, result.links)

    def definition(m: re.Match[str]) -> str:
        words = m.group(3).split()
        if words and unsafe_target(words[0]):
            result.links.append(words[0][:200])
        return f"{m.group(1)}\\[{m.group(2)}\\]:{m.group(3)}"

    text = _REF_DEF.sub(definition, text)
    result.html_tags += len(re.findall(r"<[A-Za-z!/?]", text))
    return text.replace("<", "&lt;")


def make_safe(text: str) -> SafeText:
    """The text with raw HTML escaped and unsafe link targets neutralised (see the module)."""
    result = SafeText(text="")
    if not text:
        result.text = text or ""
        return result
    # fenced blocks and inline code spans are kept as written
    result.text = _outside(
        text, _FENCE, lambda t: _outside(t, _CODE_SPAN, lambda p: _safe_prose(p, result))
    )
    return result


def _outside(text: str, pattern: re.Pattern[str], transform) -> str:
    """``text`` with ``transform`` applied between the matches of ``pattern``, matches kept."""
    pieces: list[str] = []
    pos = 0
    for match in pattern.finditer(text):
        pieces.append(transform(text[pos : match.start()]))
        pieces.append(match.group(0))
        pos = match.end()
    pieces.append(transform(text[pos:]))
    return "".join(pieces)


def safe_prefix(raw: str) -> str:
    """The longest prefix of a growing reply that can be made safe and shown while streaming:
    it stops before an unfinished link, reference definition, code span or fence."""
    cut = len(raw)
    bracket = raw.rfind("[")
    if bracket >= 0:
        mid = raw.find("](", bracket)
        tail = raw[bracket:]
        unfinished = mid < 0 and ("]" not in tail or tail.rstrip().endswith("]"))
        if unfinished or (mid >= 0 and _destination_end(raw, mid + 2) < 0):
            cut = min(cut, bracket)  # a label or destination still being written
    if raw.count("```") % 2 or raw.count("~~~") % 2:
        cut = min(cut, max(raw.rfind("```"), raw.rfind("~~~")))
    ticks = raw[:cut].count("`") - raw[:cut].count("```") * 3
    if ticks % 2:
        cut = min(cut, raw.rfind("`", 0, cut))
    amp = raw.rfind("&", 0, cut)
    if amp >= 0 and ";" not in raw[amp:cut] and cut - amp < 12:
        cut = amp
    return raw[:cut]


class SafeStream:
    """Turns a reply's raw deltas into safe deltas: what is shown while streaming is always a
    prefix of ``make_safe`` of the text so far (unfinished links wait for their end)."""

    def __init__(self) -> None:
        self.raw = ""
        self.shown = ""

    def feed(self, delta: str) -> str:
        self.raw += delta
        safe = make_safe(safe_prefix(self.raw)).text
        if not safe.startswith(self.shown):
            return ""  # a rewrite of what was shown: the final answer replaces it
        out, self.shown = safe[len(self.shown) :], safe
        return out
