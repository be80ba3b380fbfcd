"""Normalizers: examples from the issue and property-based tests (hypothesis)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.interview.normalizers import (
    find_owner,
    format_duration,
    kanji_number,
    normalize,
    normalize_url,
    parse_clock_times,
    parse_criterion,
    parse_dates,
    parse_due,
    parse_durations,
    parse_owner,
    parse_quantities,
    parse_refs,
    parse_urls,
)

FAST = settings(max_examples=60, deadline=None)
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


@pytest.mark.parametrize(
    ("text", "value", "unit", "base"),
    [
        ("薄力粉200g", 200, "g", 200),
        ("牛乳２００ｍｌ", 200, "ml", 200),
        ("砂糖大さじ2", 2, "大さじ", 30),
        ("塩小さじ1/2", 0.5, "小さじ", 2.5),
        ("大さじ1と1/2", 1.5, "大さじ", 22.5),
        ("180℃で焼く", 180, "°C", 180),
        ("12件の失敗", 12, "件", 12),
        ("35%が失敗", 35, "%", 35),
        ("アクティブユーザー約12万", 120000, "", 120000),
        ("約1.5万人", 15000, "人", 15000),
        ("二人分", 2, "人分", 2),
        ("1kg", 1, "kg", 1000),
    ],
)
def test_quantities_examples(text, value, unit, base):
    q = parse_quantities(text)[0]
    assert q.value == pytest.approx(value)
    assert q.unit == unit
    assert q.base_value == pytest.approx(base)


def test_vague_amounts_and_approximations():
    found = parse_quantities("塩少々、約200g、こしょう適量")
    assert [q.dimension for q in found] == ["vague", "mass", "vague"]
    assert found[1].approx


@pytest.mark.parametrize(
    ("text", "seconds", "relative", "approx"),
    [
        ("約2時間決済できなかった", 7200, False, True),
        ("5分後に検知", 300, True, False),
        ("2週間", 14 * 86400, False, False),
        ("1時間半", 5400, False, False),
        ("1時間30分", 5400, False, False),
        ("三十分", 1800, False, False),
        ("90 min", 5400, False, False),
        ("2 hours", 7200, False, False),
    ],
)
def test_durations_examples(text, seconds, relative, approx):
    d = parse_durations(text)[0]
    assert d.seconds == seconds and d.relative == relative and d.approx == approx


def test_durations_do_not_read_clock_times_or_dates_or_enough():
    assert parse_durations("14時30分に開始") == []
    assert parse_durations("6月30日まで") == []
    assert parse_durations("十分に加熱する") == []


@pytest.mark.parametrize(
    ("text", "hhmm"),
    [
        ("14:30頃", "14:30"),
        ("14時30分", "14:30"),
        ("14時半", "14:30"),
        ("午後2時", "14:00"),
        ("2:30 pm", "14:30"),
        ("９：０５", "09:05"),
    ],
)
def test_clock_examples(text, hhmm):
    assert parse_clock_times(text)[0].hhmm == hhmm


def test_dates_and_due_dates():
    today = date(2025, 6, 10)  # a Tuesday
    assert parse_dates("2025-06-30 までに", today)[0].value == date(2025, 6, 30)
    assert parse_dates("6月30日", today)[0].value == date(2025, 6, 30)
    assert parse_dates("昨日の障害", today)[0].value == date(2025, 6, 9)
    assert parse_dates("来週金曜まで", today)[0].value == date(2025, 6, 20)
    assert parse_dates("今月末", today)[0].value == date(2025, 6, 30)
    assert parse_due("2週間", today).date == today + timedelta(days=14)
    assert parse_due("期限は来月末", today).date == date(2025, 7, 31)
    assert parse_due("次回リリースまで").text == "次回リリース"
    assert parse_due("5分後") is None


def test_urls_refs_owners_criteria():
    assert parse_urls("資料は「https://Wiki.Example.com:443/soc/a?id=1」を参照。") == [
        "https://wiki.example.com/soc/a?id=1"
    ]
    assert parse_refs("PR #42 と SOC-231、CVE-2024-1234") == ["PR #42", "SOC-231"]
    assert parse_owner("設定の再検証（SRE担当、2週間）") == "SRE"
    assert parse_owner("担当: 田中さん") == "田中"
    assert parse_owner("インフラチームが対応") == "インフラチーム"
    assert parse_owner("owner: alice") == "alice"
    assert parse_criterion("SRE担当、2週間、失敗率<1%") == "失敗率<1%"
    assert parse_criterion("ログインできることを確認できれば成功") is not None


# --- properties --------------------------------------------------------------------------

UNITS = [
    ("g", 1),
    ("kg", 1000),
    ("ml", 1),
    ("l", 1000),
    ("カップ", 200),
    ("℃", 1),
    ("件", 1),
    ("%", 1),
    ("人", 1),
    ("個", 1),
]
FILLER = st.text(alphabet="あいうえおかきくけこの材料をでにはが、。", max_size=8)


@FAST
@given(st.integers(min_value=1, max_value=99999), st.sampled_from(UNITS), FILLER, FILLER)
def test_quantity_round_trip(n, unit, before, after):
    raw_unit, factor = unit
    text = f"{before}{n}{raw_unit}{after}"
    found = [q for q in parse_quantities(text) if q.value == n]
    assert found, text
    assert found[0].base_value == pytest.approx(n * factor)
    s = normalize(text)
    assert s[found[0].start : found[0].end] == found[0].text


@FAST
@given(st.integers(min_value=1, max_value=99999), st.sampled_from(UNITS))
def test_quantity_fullwidth_digits_are_the_same(n, unit):
    half = parse_quantities(f"{n}{unit[0]}")
    full = parse_quantities(f"{n}{unit[0]}".translate(FULLWIDTH))
    assert [(q.value, q.unit) for q in half] == [(q.value, q.unit) for q in full]


@FAST
@given(st.integers(min_value=1, max_value=9999))
def test_man_multiplier(n):
    assert parse_quantities(f"約{n}万人")[0].value == n * 10000
    assert parse_quantities(f"約{n}万人")[0].approx


@FAST
@given(st.integers(min_value=0, max_value=99), st.integers(min_value=0, max_value=59))
def test_duration_compound_and_unit_consistency(h, m):
    if h:
        assert parse_durations(f"{h}時間{m}分")[0].seconds == 3600 * h + 60 * m
        assert parse_durations(f"{h}時間")[0].seconds == parse_durations(f"{60 * h}分")[0].seconds
    d = parse_durations(f"約{m + 1}分後")[0]
    assert d.seconds == 60 * (m + 1) and d.relative and d.approx


@FAST
@given(st.integers(min_value=1, max_value=100_000))
def test_format_duration_parses_back(seconds):
    assert parse_durations(format_duration(seconds))[0].seconds == seconds


@FAST
@given(st.integers(min_value=0, max_value=23), st.integers(min_value=0, max_value=59))
def test_clock_forms_agree(h, m):
    expect = (h, m)
    assert [(t.hour, t.minute) for t in parse_clock_times(f"{h}:{m:02d}")] == [expect]
    assert [(t.hour, t.minute) for t in parse_clock_times(f"{h}時{m}分")] == [expect]
    if 1 <= h <= 11:
        assert parse_clock_times(f"午後{h}時")[0].hour == h + 12


@FAST
@given(st.dates(min_value=date(1990, 1, 1), max_value=date(2099, 12, 31)))
def test_dates_round_trip(d):
    assert parse_dates(d.isoformat())[0].value == d
    assert parse_dates(f"{d.year}年{d.month}月{d.day}日")[0].value == d
    assert parse_dates("明日", d)[0].value == d + timedelta(days=1)


HOST = st.from_regex(r"[a-z][a-z0-9]{1,10}\.(example|test)\.(com|jp)", fullmatch=True)
PATH = st.from_regex(r"(/[a-z0-9_\-]{1,8}){0,3}", fullmatch=True)


@FAST
@given(HOST, PATH, st.booleans())
def test_url_normalization(host, path, upper):
    url = f"https://{host.upper() if upper else host}{path}"
    normal = normalize_url(url)
    assert normal == normalize_url(normal)  # idempotent
    assert parse_urls(f"資料は「{url}」を参照。") == [normal]
    assert parse_urls(f"{url}、ほか") == [normal]


NAMES = st.text(alphabet="ABCDEFGHアイウエオカキ佐藤田中山", min_size=1, max_size=6)


@FAST
@given(NAMES)
def test_owner_patterns(name):
    assert parse_owner(f"{name}担当") == name
    assert parse_owner(f"担当: {name}") == name
    found = find_owner(f"施策A（{name}担当、来週まで）")
    assert found is not None and found[0] == name


@FAST
@given(st.text(max_size=80))
def test_parsers_never_raise_and_spans_index_the_normalized_text(text):
    s = normalize(text)
    for q in parse_quantities(text):
        assert s[q.start : q.end] == q.text
    for d in parse_durations(text):
        assert s[d.start : d.end] == d.text
    for t in parse_clock_times(text):
        assert 0 <= t.hour < 24 and 0 <= t.minute < 60
    parse_dates(text, date(2025, 1, 1))
    parse_due(text, date(2025, 1, 1))
    parse_urls(text)
    parse_refs(text)
    parse_owner(text)
    parse_criterion(text)


def test_kanji_numbers():
    assert kanji_number("三十五") == 35
    assert kanji_number("十") == 10
    assert kanji_number("二〇") == 20
    assert kanji_number("abc") is None
