"""Japanese text normalization: a "safe" NFKC plus whitespace and control-character folding.

Three entry points, one per kind of text:

- ``normalize_text``: runbooks (Markdown or text extracted from PDF). Lines are kept, because
  Markdown headings and numbered PDF headings are line based.
- ``normalize_article``: Wikipedia articles; every whitespace run (newlines included) becomes one
  space.
- ``normalize_query``: user queries; same folding as articles.

Safe NFKC
---------
Plain NFKC rewrites some characters in ways that change what a runbook means or how it is
structured. We apply the NFKC mapping of every character *except* these, which are left exactly
as they are:

- enclosed forms, because they mark steps and list items: circled (``①②`` ``㉑`` ``Ⓐ`` ``㊤``
  ``㋐``), parenthesized (``⑴`` ``⒜`` ``㈠`` ``㈱``) and with a full stop or comma (``⒈`` ``🄁``).
  NFKC would turn ``⒈`` into ``1.`` and ``⑴`` into ``(1)``, which look like headings or steps
  that the author did not write; ``㈱`` stays for the same reason (it is one enclosed sign);
- superscripts and subscripts (``²`` ``³`` ``⁶`` ``₂`` ``™``), and any character whose
  decomposition contains one (``㎡`` would become ``m2``): ``10⁶`` must not become ``106``;
- vulgar fractions (``½`` ``⅓``): ``2½`` must not become ``21⁄2``;
- spacing diacritics that NFKC turns into a space plus a combining mark (``゛`` ``゜`` ``¨``
  ``´`` ``￣`` ``‾``).

Everything else follows NFKC, notably: full-width ASCII to half-width (``ＡＢＣ１２３`` →
``ABC123``, ``！？`` → ``!?``, ``～`` → ``~``); half-width katakana to full-width, with voicing
marks composed (``ｶﾞ`` → ``ガ``); compatibility spaces (ideographic space, NBSP, en/em spaces)
to a plain space; squared words and units (``㍻`` → ``平成``, ``㌔`` → ``キロ``, ``㎏`` → ``kg``);
``℃`` → ``°C`` (both spellings occur in runbooks and should match); Roman numerals (``Ⅻ`` →
``XII``); Kangxi radicals that PDF extraction often produces (``⼀`` → ``一``); ``…`` → ``...``.
For text that contains none of the excluded characters the result equals
``unicodedata.normalize("NFKC", text)`` (before whitespace folding).

Also removed or rewritten:

- control characters (Unicode category Cc) other than ``\\n`` and ``\\t``; ``\\t`` becomes a
  space; CR LF, CR, VT, FF (PDF page breaks), NEL, U+2028 and U+2029 become ``\\n``;
- invisible format characters: BOM/ZWNBSP ``U+FEFF`` (anywhere, so a leading BOM too), zero-width
  space ``U+200B``, word joiner ``U+2060``, soft hyphen ``U+00AD``, bidirectional marks and
  embeddings (``U+200E`` ``U+200F`` ``U+202A``-``U+202E`` ``U+2066``-``U+2069``). ZWJ/ZWNJ are
  kept (emoji sequences, some scripts).

Speed: the per-character mapping is one ``str.translate`` table built once (30-60 ms, lazily,
on first use); composition (``ｶﾞ``) is one ``unicodedata.normalize("NFC")`` call that is skipped
when the text is already NFC. There are no per-character Python calls.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

__all__ = [
    "EXCLUDED_DECOMPOSITION_TAGS",
    "display_width",
    "normalize_article",
    "normalize_query",
    "normalize_text",
    "safe_nfkc",
    "translation_table",
]

# Decomposition tags whose NFKC mapping we never apply (see the module docstring).
EXCLUDED_DECOMPOSITION_TAGS = frozenset({"<circle>", "<super>", "<sub>", "<fraction>"})

# NFKC results that are enclosed forms: "(1)", "(a)", "(株)", "1.", "10.", "0,".
_ENCLOSED_RESULT = re.compile(r"\(.+\)|[0-9]+[.,]", re.DOTALL)

_LINE_BREAKS = "\r\x0b\x0c\x85\u2028\u2029"
_INVISIBLE = (
    "\ufeff\u200b\u2060\u00ad\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)

# The highest code point with a compatibility or canonical decomposition is U+2FA1D.
_SCAN_LIMIT = 0x2FA20


def _is_excluded(char: str) -> bool:
    """True when NFKC must not be applied to ``char`` (recursively through its decomposition)."""
    decomposition = unicodedata.decomposition(char)
    if not decomposition:
        return False
    parts = decomposition.split()
    if parts[0].startswith("<"):
        if parts[0] in EXCLUDED_DECOMPOSITION_TAGS:
            return True
        parts = parts[1:]
    nfkc = unicodedata.normalize("NFKC", char)
    if _ENCLOSED_RESULT.fullmatch(nfkc):
        return True
    if len(nfkc) > 1 and nfkc[0] == " ":  # spacing diacritic -> space + combining mark
        return True
    return any(_is_excluded(chr(int(part, 16))) for part in parts)


@cache
def translation_table() -> dict[int, str | None]:
    """The ``str.translate`` table of ``safe_nfkc`` (built once; callers must not mutate it)."""
    table: dict[int, str | None] = {}
    for code in range(_SCAN_LIMIT):
        if 0xD800 <= code < 0xE000:
            continue
        char = chr(code)
        if unicodedata.category(char) == "Zs":  # every space separator, even U+1680
            table[code] = " "
            continue
        nfkc = unicodedata.normalize("NFKC", char)
        if nfkc != char and not _is_excluded(char):
            table[code] = nfkc
    for code in range(0x20):
        table[code] = None
    for code in range(0x7F, 0xA0):
        table[code] = None
    table[ord("\t")] = " "
    table[ord("\n")] = "\n"
    for char in _LINE_BREAKS:
        table[ord(char)] = "\n"
    for char in _INVISIBLE:
        table[ord(char)] = None
    return table


def safe_nfkc(text: str) -> str:
    """Apply the safe NFKC mapping and control-character rules, without folding whitespace.

    Line breaks become ``\\n``; tabs and every space separator become ``" "``.
    """
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    text = text.translate(translation_table())
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text


# A run of 2+ spaces after the first non-space character of a line.
_INNER_SPACES = re.compile(r"(?<=[^ \n])  +")
_TRAILING_SPACES = re.compile(r" +(?=\n|\Z)")
_BLANK_LINES = re.compile(r"\n{3,}")


def display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal or a plain-text editor: East Asian wide and
    full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def normalize_text(text: str) -> str:
    """Normalize a runbook (Markdown or PDF text), keeping its lines.

    Safe NFKC (see the module docstring); control characters removed; line breaks unified to
    ``\\n``; a run of spaces, tabs or ideographic spaces after the first non-blank character of a
    line becomes one space, while a line's leading indentation is kept (as spaces, one per blank
    character) so that Markdown lists and indented code stay readable; trailing spaces of each
    line are removed; 3 or more consecutive newlines become 2; leading and trailing blank lines
    are removed.
    """
    text = safe_nfkc(text)
    if "  " in text:
        text = _INNER_SPACES.sub(" ", text)
    text = _TRAILING_SPACES.sub("", text)
    text = _BLANK_LINES.sub("\n\n", text)
    return text.strip("\n")


def normalize_article(text: str) -> str:
    """Normalize a Wikipedia article: safe NFKC, every whitespace run folded to one space."""
    return " ".join(safe_nfkc(text).split())


def normalize_query(text: str) -> str:
    """Normalize a user query: safe NFKC, whitespace folded to single spaces, trimmed."""
    return " ".join(safe_nfkc(text).split())
