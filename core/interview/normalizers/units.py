"""Numbers with units (``200g``, ``大さじ2``, ``180℃``, ``約12万人``, ``35%``) and durations
(``約2時間``, ``5分後``, ``1時間半``, ``2週間``, ``90 min``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.interview.normalizers.base import (
    _KANJI_DIGITS,
    _NUM,
    _approx,
    _to_float,
    kanji_number,
    normalize,
)
from core.interview.normalizers.datetimes import parse_clock_times, parse_dates

# --- quantities (numbers with units) ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Quantity:
    value: float | None  # as written (``大さじ2`` -> 2); None for 少々 / 適量
    unit: str  # as written, normalized spelling (``大さじ``, ``g``, ``万人`` -> ``人``)
    dimension: str  # mass | volume | temperature | count | percent | money | vague
    base_value: float | None  # in the dimension's base unit: g, ml, °C, count, %, 円
    approx: bool
    start: int
    end: int
    text: str


# (pattern, canonical unit, dimension, factor to the base unit); longer spellings first.
_SUFFIX_UNITS: tuple[tuple[str, str, str, float], ...] = (
    (r"kg|キログラム|キロ(?!メートル|m)", "kg", "mass", 1000.0),
    (r"mg|ミリグラム", "mg", "mass", 0.001),
    (r"g(?![A-Za-z])|グラム|grams?(?![A-Za-z])", "g", "mass", 1.0),
    (r"ml|mL|cc|ミリリットル|ミリ(?!秒|グラム)", "ml", "volume", 1.0),
    (r"dl|dL|デシリットル", "dl", "volume", 100.0),
    (r"l(?![A-Za-z])|L(?![A-Za-z])|リットル", "l", "volume", 1000.0),
    (r"カップ", "カップ", "volume", 200.0),
    (r"合(?!わせ|計|う|っ|意|同|格|図)", "合", "volume", 180.0),
    (r"°C|°|度(?!目|も|に|は|合)", "°C", "temperature", 1.0),
    (r"人前|人分", "人分", "count", 1.0),
    (r"人|名(?!前|称)|ユーザー|users?(?![A-Za-z])", "人", "count", 1.0),
    (r"件|requests?(?![A-Za-z])|リクエスト|アカウント|台|回(?!復|答|避|線|収)", "件", "count", 1.0),
    (r"個|本|枚|片|株|切れ|杯|玉|束|房|尾|匹|缶|袋|パック|かけ", "個", "count", 1.0),
    (r"%|パーセント|percent", "%", "percent", 1.0),
    (r"円|yen", "円", "money", 1.0),
    (r"ドル|USD", "ドル", "money", 150.0),
)
_PREFIX_UNITS: tuple[tuple[str, str, str, float], ...] = (
    (r"大さじ|大匙|tbsp", "大さじ", "volume", 15.0),
    (r"小さじ|小匙|tsp", "小さじ", "volume", 5.0),
    (r"カップ", "カップ", "volume", 200.0),
)
_VAGUE = re.compile(r"少々|適量|ひとつまみ|少量|お好みで|適宜")
_MULT = {"万": 1e4, "億": 1e8, "千": 1e3, "k": 1e3, "K": 1e3}
_VALUE = rf"(?P<num>\d+/\d+|{_NUM})(?P<mult>万|億|千|k(?![A-Za-z])|K(?![A-Za-z]))?"
_KVALUE = r"(?P<kan>[一二三四五六七八九十両]{1,3})"

_SUFFIX_RE = re.compile(
    rf"(?<![\d.,/])(?:{_VALUE}|{_KVALUE})\s?(?P<unit>"
    + "|".join(f"(?:{p})" for p, *_ in _SUFFIX_UNITS)
    + ")"
)
_PREFIX_RE = re.compile(
    r"(?P<unit>"
    + "|".join(f"(?:{p})" for p, *_ in _PREFIX_UNITS)
    + r")\s?(?P<num>\d+(?:と\d+/\d+)?(?:/\d+)?(?:\.\d+)?|[一二三四五六七八九]|半分?)"
)
_BARE_MAN = re.compile(rf"(?<![\d.,])(?P<num>{_NUM})(?P<mult>万|億)(?![円人件個本])")


def _unit_info(raw: str, table: tuple[tuple[str, str, str, float], ...]) -> tuple[str, str, float]:
    for pattern, unit, dimension, factor in table:
        if re.fullmatch(pattern, raw):
            return unit, dimension, factor
    return raw, "count", 1.0


def _prefix_value(num: str) -> float:
    if num.startswith("半"):
        return 0.5
    if "と" in num:
        whole, frac = num.split("と", 1)
        return float(whole) + _to_float(frac)
    if num in _KANJI_DIGITS:
        return float(_KANJI_DIGITS[num])
    return _to_float(num)


def parse_quantities(text: str) -> list[Quantity]:
    """All numbers with a unit: ``200g``, ``大さじ2``, ``180℃``, ``約12万人``, ``35%``, ``塩少々``."""
    s = normalize(text)
    found: list[Quantity] = []
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= x or a >= y for x, y in taken)

    for m in _PREFIX_RE.finditer(s):
        unit, dim, factor = _unit_info(m.group("unit"), _PREFIX_UNITS)
        value = _prefix_value(m.group("num"))
        found.append(
            Quantity(value, unit, dim, value * factor, _approx(s, *m.span()), *m.span(), m.group())
        )
        taken.append(m.span())
    for m in _SUFFIX_RE.finditer(s):
        if not free(*m.span()):
            continue
        raw_unit = m.group("unit")
        unit, dim, factor = _unit_info(raw_unit, _SUFFIX_UNITS)
        if m.group("kan"):
            value = kanji_number(m.group("kan"))
            if value is None:
                continue
            value = float(value)
        else:
            value = _to_float(m.group("num")) * _MULT.get(m.group("mult") or "", 1.0)
        found.append(
            Quantity(value, unit, dim, value * factor, _approx(s, *m.span()), *m.span(), m.group())
        )
        taken.append(m.span())
    for m in _BARE_MAN.finditer(s):
        if not free(*m.span()):
            continue
        value = _to_float(m.group("num")) * _MULT[m.group("mult")]
        found.append(
            Quantity(value, "", "count", value, _approx(s, *m.span()), *m.span(), m.group())
        )
        taken.append(m.span())
    for m in _VAGUE.finditer(s):
        if free(*m.span()):
            found.append(Quantity(None, m.group(), "vague", None, False, *m.span(), m.group()))
            taken.append(m.span())
    return sorted(found, key=lambda q: q.start)


# --- durations -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Duration:
    seconds: float
    approx: bool
    relative: bool  # "5分後", "2週間以内": an offset or a limit, not a span
    start: int
    end: int
    text: str


_DUR_UNITS: tuple[tuple[str, float], ...] = (
    (r"秒|seconds?(?![A-Za-z])|secs?(?![A-Za-z])", 1.0),
    (
        r"分間?(?!の|け|か(?!か)|類|野|析|散|岐|解|離|担|母|子|量)|minutes?(?![A-Za-z])|mins?(?![A-Za-z])",
        60.0,
    ),
    (r"時間|hours?(?![A-Za-z])|hrs?(?![A-Za-z])|h(?![A-Za-z])", 3600.0),
    (r"日間|日(?!本|時|付|曜|中|常|報|次)|days?(?![A-Za-z])", 86400.0),
    (r"週間|週(?!末|次|報)|weeks?(?![A-Za-z])", 7 * 86400.0),
    (r"[かヶカケヵ]月間?|months?(?![A-Za-z])", 30 * 86400.0),
    (r"年間|years?(?![A-Za-z])", 365 * 86400.0),
)
_DUR_UNIT_RE = "|".join(f"(?:{p})" for p, _ in _DUR_UNITS)
_DUR_RE = re.compile(
    rf"(?<![\d.,:/])(?:(?P<num>{_NUM})|(?P<kan>[一二三四五六七八九両]?十?[一二三四五六七八九]?))"
    rf"\s?(?P<unit>{_DUR_UNIT_RE})"
    rf"(?:\s?(?P<num2>\d+)\s?(?P<unit2>分|秒|minutes?|mins?)|(?P<half>半))?"
    rf"(?:\s?(?P<num3>\d+)\s?(?P<unit3>秒|seconds?|secs?))?"
)
_RELATIVE_AFTER = re.compile(r"^\s*(?:後|以内|経過|ほど後|くらい後|later|以上経|内に|まで)")


def _dur_factor(unit: str) -> float:
    for pattern, factor in _DUR_UNITS:
        if re.fullmatch(pattern, unit):
            return factor
    return 0.0


def parse_durations(text: str) -> list[Duration]:
    """``約2時間`` -> 7200 s (approx), ``5分後`` (relative), ``1時間半``, ``2週間``, ``90 min``."""
    s = normalize(text)
    out: list[Duration] = []
    blocked = [(t.start, t.end) for t in parse_clock_times(s)]
    blocked += [(d.start, d.end) for d in parse_dates(s) if "日" in d.text or "/" in d.text]
    for m in _DUR_RE.finditer(s):
        if any(not (m.end() <= a or m.start() >= b) for a, b in blocked):
            continue
        if m.group("num") is not None:
            value = _to_float(m.group("num"))
        else:
            kan = m.group("kan")
            if not kan or kan == "十":  # 十分 usually means "enough"
                continue
            number = kanji_number(kan)
            if number is None:
                continue
            value = float(number)
        factor = _dur_factor(m.group("unit"))
        if not factor:
            continue
        seconds = value * factor
        if m.group("num2"):
            seconds += float(m.group("num2")) * _dur_factor(m.group("unit2"))
        if m.group("num3") and m.group("num2") and m.group("unit2") != m.group("unit3"):
            seconds += float(m.group("num3")) * _dur_factor(m.group("unit3"))
        elif m.group("half"):
            seconds += factor / 2
        start, end = m.span()
        out.append(
            Duration(
                seconds,
                _approx(s, start, end),
                bool(_RELATIVE_AFTER.match(s[end : end + 6])),
                start,
                end,
                m.group(),
            )
        )
    return out


def format_duration(seconds: float) -> str:
    """A short Japanese rendering: ``7200`` -> ``2時間``, ``5400`` -> ``1時間30分``."""
    seconds = round(seconds)
    for unit, size in (("週間", 7 * 86400), ("日", 86400)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size}{unit}"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours}時間" if hours else "", f"{minutes}分" if minutes else ""]
    if secs or not any(parts):
        parts.append(f"{secs}秒")
    return "".join(parts)
