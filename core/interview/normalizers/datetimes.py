"""Clock times (``14:30``, ``14時半``, ``午後2時``), dates (``2024-06-30``, ``6月30日``, ``昨日``,
``来週金曜``, ``月末``). Due dates, which also read durations, are in ``due``."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

from core.interview.normalizers.base import _approx, normalize

# --- clock times ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClockTime:
    hour: int
    minute: int
    approx: bool
    start: int
    end: int
    text: str

    @property
    def hhmm(self) -> str:
        return f"{self.hour:02d}:{self.minute:02d}"


_CLOCK_COLON = re.compile(
    r"(?<![\d.:/])(?P<h>\d{1,2}):(?P<m>\d{2})(?::\d{2})?(?![\d:])(?:\s?(?P<ap>am|pm|AM|PM)\b)?"
)
_CLOCK_JA = re.compile(
    r"(?P<ampm>午前|午後)?(?<![\d.])(?P<h>\d{1,2})時(?!間)(?:(?P<m>\d{1,2})分|(?P<half>半))?"
)


def parse_clock_times(text: str) -> list[ClockTime]:
    """``14:30``, ``14時30分``, ``14時半``, ``午後2時``, ``2:30 pm`` -> (hour, minute)."""
    s = normalize(text)
    out: list[ClockTime] = []
    for m in _CLOCK_COLON.finditer(s):
        hour, minute = int(m.group("h")), int(m.group("m"))
        ap = (m.group("ap") or "").lower()
        if ap == "pm" and hour < 12:
            hour += 12
        elif ap == "am" and hour == 12:
            hour = 0
        if hour < 24 and minute < 60:
            out.append(ClockTime(hour, minute, _approx(s, *m.span()), *m.span(), m.group()))
    taken = [(t.start, t.end) for t in out]
    for m in _CLOCK_JA.finditer(s):
        if any(not (m.end() <= a or m.start() >= b) for a, b in taken):
            continue
        hour = int(m.group("h"))
        minute = 30 if m.group("half") else int(m.group("m") or 0)
        if m.group("ampm") == "午後" and hour < 12:
            hour += 12
        if hour < 24 and minute < 60:
            out.append(ClockTime(hour, minute, _approx(s, *m.span()), *m.span(), m.group()))
    return sorted(out, key=lambda t: t.start)


# --- dates and due dates ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DateRef:
    value: date | None  # None when ``today`` was not given for a relative expression
    relative: bool
    start: int
    end: int
    text: str


_DATE_ISO = re.compile(r"(?<!\d)(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?!\d)")
_DATE_JA = re.compile(r"(?:(?P<y>\d{4})年)?(?P<m>\d{1,2})月(?P<d>\d{1,2})日")
_DATE_MD = re.compile(r"(?<![\d/.:])(?P<m>\d{1,2})/(?P<d>\d{1,2})(?![\d/])")
_MONTH_END = re.compile(r"(?:(?P<m>\d{1,2})月|今月|(?P<next>来月))末")
_RELATIVE_DAYS = {"一昨日": -2, "おととい": -2, "昨日": -1, "きのう": -1, "本日": 0, "今日": 0}
_RELATIVE_DAYS |= {"きょう": 0, "明後日": 2, "あさって": 2, "明日": 1, "あした": 1, "あす": 1}
_WEEKDAYS = "月火水木金土日"
_WEEKDAY_RE = re.compile(r"(?P<when>今週|来週|再来週)?(?:の)?(?P<wd>[月火水木金土日])曜(?:日)?")
_PERIOD_RE = re.compile(r"今週中|今週末|来週中|今月中|年内|年度内|来週(?![月火水木金土日の])|来月")
_RELATIVE_RE = re.compile("|".join(sorted(_RELATIVE_DAYS, key=len, reverse=True)))


def _safe_date(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def parse_dates(text: str, today: date | None = None) -> list[DateRef]:
    """Absolute (``2024-06-30``, ``6月30日``, ``6/30``) and relative (``昨日``, ``来週金曜``,
    ``月末``, ``今週中``) dates. Relative ones need ``today`` to get a value."""
    s = normalize(text)
    out: list[DateRef] = []
    taken: list[tuple[int, int]] = []

    def add(value: date | None, relative: bool, m: re.Match[str]) -> None:
        if any(not (m.end() <= a or m.start() >= b) for a, b in taken):
            return
        out.append(DateRef(value, relative, *m.span(), m.group()))
        taken.append(m.span())

    year = today.year if today else 2000
    for m in _DATE_ISO.finditer(s):
        value = _safe_date(int(m.group("y")), int(m.group("m")), int(m.group("d")))
        if value:
            add(value, False, m)
    for m in _DATE_JA.finditer(s):
        value = _safe_date(int(m.group("y") or year), int(m.group("m")), int(m.group("d")))
        if value:
            add(value if (m.group("y") or today) else None, m.group("y") is None, m)
    for m in _DATE_MD.finditer(s):
        value = _safe_date(year, int(m.group("m")), int(m.group("d")))
        if value:
            add(value if today else None, True, m)
    for m in _MONTH_END.finditer(s):
        if today is None:
            add(None, True, m)
            continue
        month = int(m.group("m")) if m.group("m") else today.month
        y = today.year
        if m.group("next"):
            month, y = (1, y + 1) if today.month == 12 else (today.month + 1, y)
        add(date(y, month, calendar.monthrange(y, month)[1]), True, m)
    for m in _WEEKDAY_RE.finditer(s):
        if today is None:
            add(None, True, m)
            continue
        target = _WEEKDAYS.index(m.group("wd"))
        monday = today - timedelta(days=today.weekday())
        weeks = {"今週": 0, "来週": 1, "再来週": 2}.get(m.group("when") or "")
        if weeks is None:
            delta = (target - today.weekday()) % 7 or 7
            add(today + timedelta(days=delta), True, m)
        else:
            add(monday + timedelta(days=7 * weeks + target), True, m)
    for m in _PERIOD_RE.finditer(s):
        if today is None:
            add(None, True, m)
            continue
        word = m.group()
        monday = today - timedelta(days=today.weekday())
        if word in ("今週中", "今週末"):
            value = monday + timedelta(days=4 if word == "今週中" else 6)
        elif word in ("来週中", "来週"):
            value = monday + timedelta(days=11)
        elif word == "今月中":
            value = date(today.year, today.month, calendar.monthrange(today.year, today.month)[1])
        elif word == "来月":
            y, mo = (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
            value = date(y, mo, calendar.monthrange(y, mo)[1])
        elif word == "年度内":
            y = today.year if today.month <= 3 else today.year + 1
            value = date(y, 3, 31)
        else:
            value = date(today.year, 12, 31)
        add(value, True, m)
    for m in _RELATIVE_RE.finditer(s):
        add(today + timedelta(days=_RELATIVE_DAYS[m.group()]) if today else None, True, m)
    return sorted(out, key=lambda d: d.start)
