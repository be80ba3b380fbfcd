"""Normalizers for interview answers (design 10.2 / 12.2): numbers with units, clock times,
durations, dates, due dates, URLs, references, owners and success criteria.

Every parser takes raw text, applies ``normalize`` (NFKC + wave dash) itself and returns values
whose ``start``/``end`` index the *normalized* text (``normalize(text)[start:end] == value.text``).
Parsers never raise on any input; they return an empty list or ``None``.
"""

from core.interview.normalizers.base import kanji_number, normalize
from core.interview.normalizers.datetimes import (
    ClockTime,
    DateRef,
    parse_clock_times,
    parse_dates,
)
from core.interview.normalizers.due import Due, parse_due
from core.interview.normalizers.text import (
    find_command,
    find_criterion,
    find_owner,
    normalize_url,
    parse_command,
    parse_criterion,
    parse_heat,
    parse_owner,
    parse_refs,
    parse_urls,
)
from core.interview.normalizers.units import (
    Duration,
    Quantity,
    format_duration,
    parse_durations,
    parse_quantities,
)

__all__ = [
    "ClockTime",
    "DateRef",
    "Due",
    "Duration",
    "Quantity",
    "find_command",
    "find_criterion",
    "find_owner",
    "format_duration",
    "kanji_number",
    "normalize",
    "normalize_url",
    "parse_clock_times",
    "parse_command",
    "parse_criterion",
    "parse_dates",
    "parse_due",
    "parse_durations",
    "parse_heat",
    "parse_owner",
    "parse_quantities",
    "parse_refs",
    "parse_urls",
]
