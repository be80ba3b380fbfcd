"""Answer sentences for the provenance check: lines and list items as units, then sentences.

An answer is cut into lines; a list item (``1.``, ``-``, ``①`` …) is one unit with its prefix
set aside; each line is cut after Japanese 。！？ and after English . ! ? that end a sentence
(followed by a blank, a marker or the end of the line, not ``7.2`` or ``e.g.x``). The markers
after a sentence's end (``…する。[1]``, ``…する [1]。``) stay with that sentence. Lines the
pipelines add themselves are boilerplate, never checked: the quote-language note
(「原文（英語）から引用しています。」), headings and lead lines ending in a colon (「手順:」,
「「…」より [1]:」, 「補足:」), Markdown headings, the Wikipedia reference line (「参照: …」) and
the refusal texts.

Offsets index the answer text, so the check can mark or remove a sentence where it stands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise

from core.generation.citations import marker_spans
from core.schemas.answer import SOURCE_LEAD
from core.text.script import SCRIPT_NAMES_JA

# one or more list prefixes: "1. ", "- ", "①", and "- 2. " (a step quoted as a bullet)
LIST_PREFIX = re.compile(r"^\s*(?:[-*+・•]\s+|\d{1,2}[.．)）]\s+|\(\d{1,2}\)\s*|[①-⑳]\s*)+")
_END_JA = "。！？"
_END_EN = ".!?"
_OPENERS = "[［【"
_HEADING = re.compile(r"^\s*#{1,6}\s")
_REFERENCE_LINE = re.compile(r"^\s*(?:参照|出典|参考)\s*[:：]")
# Refusals the pipelines and their prompts use (the answer says nothing to support).
REFUSALS = (
    "手順書には該当する記載がありません",
    "該当する手順が見つかりませんでした",
    "該当コンテキストが見つかりませんでした",
    "不明",
)
LANGUAGE_NOTES = tuple(f"原文（{name}）から引用しています。" for name in SCRIPT_NAMES_JA.values())
REFUSAL_TAIL = 6
MAX_LEAD_CHARS = 80  # a line ending in a colon longer than this is a sentence, not a heading
_NON_WORD = re.compile(r"[\W_]+")
_SPACE_BEFORE_END = re.compile(r"\s+([。．.、，,！!？?:：])(?=\s|$)")


@dataclass(slots=True)
class AnswerSentence:
    """One sentence of an answer: where it stands, its markers, and the text to check."""

    start: int  # offsets into the answer text, markers included
    end: int
    markers: list[int] = field(default_factory=list)  # every number its markers name
    body: str = ""  # the sentence without list prefix, markers and code ticks
    line_start: int = 0  # the line it stands on (to drop a line left empty)
    line_end: int = 0
    checked: bool = True  # False: boilerplate the pipeline writes itself


def _sentence_ends(line: str, markers: list[tuple[int, int, list[int]]]) -> list[int]:
    """Offsets (within the line) where a sentence ends, after any markers that follow it."""
    ends: list[int] = []
    in_code = False
    i = 0
    n = len(line)
    marker_at = {a: b for a, b, _ in markers}
    while i < n:
        ch = line[i]
        if ch == "`":
            in_code = not in_code
        elif i in marker_at:
            i = marker_at[i]
            continue
        elif not in_code and (
            ch in _END_JA
            or (ch in _END_EN and _ends_english(line, i) and _has_words(line, ends, i))
        ):
            j = i + 1
            while j < n and line[j] in _END_JA + _END_EN:
                j += 1
            j = _after_markers(line, j, marker_at)
            ends.append(j)
            i = j
            continue
        i += 1
    if not ends or ends[-1] < n:
        ends.append(n)
    return ends


def _has_words(line: str, ends: list[int], i: int) -> bool:
    """A sentence has a word before its end (not "2." alone); one that a period ends has three
    ("Table 3-1. Common sources" and "Step 2. Isolate the host" are labels, not sentences)."""
    # the last 200 characters tell (a whole run of "1. 2. 3. …" was read at every period)
    before = line[max(ends[-1] if ends else 0, i - 200) : i]
    if line[i] == ".":
        return len(before.split()) >= 3 and any(ch.isalpha() for ch in before)
    return any(ch.isalpha() for ch in before)


# words a period follows without ending the sentence ("e.g. shut down", "Fig. 3", "et al.")
_ABBREVIATIONS = frozenset((
    "e.g", "eg", "i.e", "ie", "cf", "vs", "etc", "al", "fig", "figs", "no", "nos", "sec",
    "approx", "incl", "esp", "dr", "mr", "mrs", "ms", "st",
))  # fmt: skip
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")


def _ends_english(line: str, i: int) -> bool:
    nxt = line[i + 1] if i + 1 < len(line) else ""
    prev = line[i - 1] if i else ""
    if line[i] == "." and prev.isdigit() and nxt.isdigit():
        return False
    if not (nxt == "" or nxt.isspace() or nxt in _OPENERS):
        return False
    if line[i] != "." or nxt == "":
        return True
    word = _WORD_BEFORE.search(line[max(0, i - 12) : i])
    if word and (word.group(1).lower() in _ABBREVIATIONS or len(word.group(1)) == 1):
        return False  # an abbreviation or an initial ("J. Smith", "U.S. law")
    # the next sentence starts with no lower-case letter ("… at 5 p.m. and then")
    j = i + 1
    while j < len(line) and line[j].isspace():
        j += 1
    first = line[j] if j < len(line) else ""
    return not (first.islower() and first.isascii())


def sentence_ends(line: str) -> list[int]:
    """Offsets where the sentences of one line end (Japanese 。！？, English . ! ? that end a
    sentence; the last offset is the line's length). Code in backticks is never cut."""
    return _sentence_ends(line, [])


def _after_markers(line: str, j: int, marker_at: dict[int, int]) -> int:
    """Past blanks and markers (and a period written after them) that close a sentence."""
    k = j
    while True:
        m = k
        while m < len(line) and line[m] in " \t":
            m += 1
        if m in marker_at:
            k = marker_at[m]
            continue
        if k > j and m < len(line) and line[m] in _END_JA + _END_EN and m == k:
            k = m + 1
            continue
        return k if k > j else j


def _body(text: str, markers: list[tuple[int, int, list[int]]], offset: int) -> str:
    out: list[str] = []
    last = 0
    for a, b, _ in markers:
        a, b = a - offset, b - offset
        if a < 0 or b > len(text):
            continue
        out.append(text[last:a])
        last = b
    out.append(text[last:])
    flat = " ".join("".join(out).replace("`", "").split())
    return _SPACE_BEFORE_END.sub(r"\1", flat)  # 「…します [1]。」 reads 「…します。」


def is_boilerplate_line(line: str) -> bool:
    """A line the pipeline writes itself (see the module docstring)."""
    bare = " ".join(re.sub(r"[\[［【][^\]］】]{0,20}[\]］】]", "", line).split())
    if not bare:
        return True
    if bare in LANGUAGE_NOTES or _HEADING.match(line) or _REFERENCE_LINE.match(bare):
        return True
    if bare.endswith((":", "：")) and (len(bare) <= MAX_LEAD_CHARS or SOURCE_LEAD.fullmatch(bare)):
        return True
    # a refusal, alone or with a short tail (「不明です。」)
    return any(bare.startswith(r) and len(bare) <= len(r) + REFUSAL_TAIL for r in REFUSALS)


def split_answer(text: str) -> list[AnswerSentence]:
    """The sentences of an answer in order (boilerplate lines included, ``checked=False``)."""
    spans = marker_spans(text)
    out: list[AnswerSentence] = []
    pos = 0
    for raw in text.split("\n"):
        line_start, line_end = pos, pos + len(raw)
        pos = line_end + 1
        if not raw.strip():
            continue
        line_markers = [(a, b, ns) for a, b, ns in spans if line_start <= a and b <= line_end]
        boiler = is_boilerplate_line(raw)
        prefix = LIST_PREFIX.match(raw)
        first = prefix.end() if prefix else len(raw) - len(raw.lstrip())
        local = [(a - line_start, b - line_start, ns) for a, b, ns in line_markers]
        content = raw[first:]
        shifted = [(a - first, b - first, ns) for a, b, ns in local if a >= first]
        cuts = [0] if boiler else [0, *_sentence_ends(content, shifted)]
        if boiler:
            cuts.append(len(content))
        for a, b in pairwise(cuts):
            seg = content[a:b]
            if not seg.strip():
                continue
            lead = len(seg) - len(seg.lstrip())
            start = line_start + first + a + lead
            end = line_start + first + a + len(seg.rstrip())
            mine = [(x, y, ns) for x, y, ns in line_markers if start <= x and y <= end]
            body = _body(text[start:end], mine, start)
            out.append(
                AnswerSentence(
                    start=start,
                    end=end,
                    markers=list(dict.fromkeys(n for _, _, ns in mine for n in ns)),
                    body=body,
                    line_start=line_start,
                    line_end=line_end,
                    checked=not boiler and bool(_NON_WORD.sub("", body)),
                )
            )
    return out
