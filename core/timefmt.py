"""Timestamps as the user reads them: files keep ISO-8601 (UTC or with an offset); pages show the
time in the workbench's time zone (``Settings.timezone``, ``WB_TIMEZONE``, default Asia/Tokyo)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

UNKNOWN = "不明"


def zone(name: str) -> ZoneInfo:
    """The named IANA zone; an unknown name is a settings error raised at startup."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone: {name!r}") from exc


_EMPTY = {"", "none", "nan", "nat"}


def parse_time(value: str | datetime | None) -> datetime | None:
    """An aware datetime, or None for an empty/unreadable value. Naive values are taken as UTC
    (every file the workbench writes carries an offset; older ones wrote UTC)."""
    if isinstance(value, datetime):
        moment = value
    else:
        text = "" if value is None else str(value).strip()
        if text.lower() in _EMPTY:
            return None
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def local_time(
    value: str | datetime | None, tz: str = "Asia/Tokyo", *, seconds: bool = False
) -> str:
    """``2026-01-02 09:00 JST``: the moment in ``tz``; 「不明」 when there is none, the raw text
    when it is not a timestamp at all."""
    moment = parse_time(value)
    if moment is None:
        text = "" if value is None else str(value).strip()
        return UNKNOWN if text.lower() in _EMPTY else text
    shown = moment.astimezone(zone(tz))
    return shown.strftime("%Y-%m-%d %H:%M:%S %Z" if seconds else "%Y-%m-%d %H:%M %Z")
