"""Times as the user reads them: in the configured zone, 「不明」 when there is none."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from core.settings import Settings
from core.timefmt import UNKNOWN, local_time, parse_time


def test_utc_and_offset_times_are_shown_in_the_zone():
    assert local_time("2026-01-02T00:30:00+00:00") == "2026-01-02 09:30 JST"
    assert local_time("2026-01-02T09:30:00+09:00", "UTC") == "2026-01-02 00:30 UTC"
    assert local_time("2026-01-02T00:30:05Z", seconds=True) == "2026-01-02 09:30:05 JST"
    assert local_time(datetime(2026, 7, 1, 12, tzinfo=UTC), "Europe/Berlin") == (
        "2026-07-01 14:00 CEST"
    )


def test_naive_times_are_utc():
    assert parse_time("2026-01-02T00:00:00") == datetime(2026, 1, 2, tzinfo=UTC)
    assert local_time("2026-01-02T00:00:00") == "2026-01-02 09:00 JST"


@pytest.mark.parametrize("value", [None, "", "None", "NaT", "  "])
def test_missing_times_are_unknown(value):
    assert local_time(value) == UNKNOWN


def test_text_that_is_no_time_is_kept():
    assert local_time("昨日") == "昨日"


def test_timezone_setting(monkeypatch):
    assert Settings().timezone == "Asia/Tokyo"
    monkeypatch.setenv("WB_TIMEZONE", "UTC")
    assert Settings().timezone == "UTC"
    with pytest.raises(ValidationError):
        Settings(timezone="Mars/Olympus")
