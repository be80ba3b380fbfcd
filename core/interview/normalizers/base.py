"""Shared pieces of the normalizers: NFKC, number syntax, kanji numerals, approximations."""

from __future__ import annotations

import re
import unicodedata


def normalize(text: str) -> str:
    """NFKC (full-width digits, ％, ℃ -> °C, （） -> ()) and the wave dash as ``~``."""
    return unicodedata.normalize("NFKC", text or "").replace("〜", "~").replace("−", "-")


_KANJI_DIGITS = {"〇": 0, "零": 0, "一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6}
_KANJI_DIGITS |= {"七": 7, "八": 8, "九": 9, "両": 2}
_KANJI_UNITS = {"十": 10, "百": 100, "千": 1000}
_KANJI = "〇零一二三四五六七八九十百千両"


def kanji_number(text: str) -> int | None:
    """``"三十五"`` -> 35, ``"十"`` -> 10, ``"二"`` -> 2 (up to 9999); ``None`` if not a number."""
    if not text or any(c not in _KANJI for c in text):
        return None
    total, digit = 0, None
    for char in text:
        if char in _KANJI_DIGITS:
            # positional digits such as 二〇
            digit = _KANJI_DIGITS[char] if digit is None else digit * 10 + _KANJI_DIGITS[char]
        else:
            total += (1 if digit is None else digit) * _KANJI_UNITS[char]
            digit = None
    return total + (digit or 0)


_NUM = r"\d+(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
_APPROX_BEFORE = re.compile(r"(?:約|およそ|大体|だいたい|ほぼ|概ね|おおよそ|about|approx\.?|~)\s*$")
_APPROX_AFTER = re.compile(r"^\s*(?:程度|くらい|ぐらい|前後|ほど|弱|強|超|頃|ごろ|余り|あまり)")


def _to_float(num: str) -> float:
    if "/" in num:
        a, b = num.split("/", 1)
        return float(a) / float(b) if float(b) else float(a)
    return float(num.replace(",", ""))


def _approx(text: str, start: int, end: int) -> bool:
    return bool(_APPROX_BEFORE.search(text[max(0, start - 8) : start])) or bool(
        _APPROX_AFTER.match(text[end : end + 4])
    )
