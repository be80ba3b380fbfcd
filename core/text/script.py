"""The dominant writing script of a text, cheaply, by character classes.

``dominant_script`` answers "is this text Japanese or Latin-script (English)?" for the evidence
grade (keyword overlap only means something when the question and the passage share a script)
and for the extractive answer's language note. One Japanese character carries roughly as much
content as a short English word's worth of letters, so Japanese characters are weighted
(``JA_WEIGHT``) against Latin letters: 「EDR でマルウェアを検索する方法」 is Japanese, "How do I
restore the VPN service" is Latin, an English sentence quoting one Japanese term stays Latin.
"""

from __future__ import annotations

from typing import Literal

Script = Literal["ja", "latin", "none"]

JA_WEIGHT = 3  # one kana/kanji counts as three Latin letters

SCRIPT_NAMES_JA = {"ja": "日本語", "latin": "英語"}


def _is_japanese(ch: str) -> bool:
    o = ord(ch)
    return (
        0x3040 <= o <= 0x30FF  # hiragana, katakana
        or 0x3400 <= o <= 0x4DBF  # CJK extension A
        or 0x4E00 <= o <= 0x9FFF  # CJK unified ideographs
        or 0xF900 <= o <= 0xFAFF  # CJK compatibility ideographs
        or 0xFF66 <= o <= 0xFF9F  # half-width katakana
    )


def _is_latin(ch: str) -> bool:
    o = ord(ch)
    return (
        0x41 <= o <= 0x5A
        or 0x61 <= o <= 0x7A
        or 0xC0 <= o <= 0x24F  # Latin-1 supplement and extended letters
        or 0xFF21 <= o <= 0xFF3A  # full-width A-Z
        or 0xFF41 <= o <= 0xFF5A  # full-width a-z
    ) and o not in (0xD7, 0xF7)


def script_counts(text: str) -> tuple[int, int]:
    """(Japanese characters, Latin letters) in ``text``."""
    ja = latin = 0
    for ch in text:
        if _is_japanese(ch):
            ja += 1
        elif _is_latin(ch):
            latin += 1
    return ja, latin


def dominant_script(text: str) -> Script:
    """ "ja" or "latin" by weighted character counts; "none" when the text has neither."""
    ja, latin = script_counts(text)
    if ja == 0 and latin == 0:
        return "none"
    return "ja" if ja * JA_WEIGHT >= latin else "latin"


def passage_script(title: str, heading: str, body: str) -> Script:
    """A passage's language, read with its document title and heading so that a command block
    in a Japanese runbook still counts as Japanese."""
    return dominant_script(f"{title}\n{heading}\n{body}")


def same_script(a: Script, b: Script) -> bool:
    """True unless both scripts are known and differ ("none" is compatible with anything)."""
    return a == "none" or b == "none" or a == b


def quote_language_note(question: str, quoted: str) -> str | None:
    """One Japanese line saying the answer quotes a source in another language than the question
    (「原文（英語）から引用しています。」), or None when both are in the same script."""
    source, asked = dominant_script(quoted), dominant_script(question)
    if source == "none" or asked == "none" or source == asked:
        return None
    return f"原文（{SCRIPT_NAMES_JA[source]}）から引用しています。"
