"""Due dates (design 12.2): an explicit or relative date, a span from now or a milestone.

A module of its own because it reads both dates (``datetimes``) and durations (``units``), and
``units`` already reads ``datetimes`` (clock times and dates are not durations).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from core.interview.normalizers.base import normalize
from core.interview.normalizers.datetimes import parse_dates
from core.interview.normalizers.units import parse_durations


@dataclass(frozen=True, slots=True)
class Due:
    text: str
    date: date | None
    within_seconds: float | None  # "2週間" / "2週間以内": a span from now


_DUE_WORDS = re.compile(
    r"次回リリース|次のリリース|次のスプリント|次スプリント|Q[1-4]|四半期内|上期|下期"
)


def parse_due(text: str, today: date | None = None) -> Due | None:
    """A due date: an explicit or relative date, a span (``2週間``, ``3日以内``) or a milestone."""
    s = normalize(text)
    dates = [d for d in parse_dates(s, today) if d.text not in ("昨日", "一昨日", "おととい")]
    if dates:
        d = dates[0]
        return Due(d.text, d.value, None)
    spans = [d for d in parse_durations(s) if d.seconds >= 86400]
    if spans:
        d = spans[0]
        value = today + timedelta(seconds=d.seconds) if today else None
        return Due(d.text, value, d.seconds)
    m = _DUE_WORDS.search(s)
    if m:
        return Due(m.group(), None, None)
    return None
