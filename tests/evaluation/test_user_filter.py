"""The dashboard filters the audit log by who asked (core and the page through AppTest)."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone

import pytest
from streamlit.testing.v1 import AppTest

from core.audit import append_record, log_path
from core.evaluation.audit_stats import filter_frame, overview, user_names
from core.evaluation.logs import load_audit_log
from core.settings import PROJECT_ROOT, get_settings
from tests.conftest import make_settings

PAGE = str(PROJECT_ROOT / "views" / "dashboard.py")
JST = timezone(timedelta(hours=9))
DAY = date(2025, 6, 14)


def ask(settings, minute: int, **who) -> None:
    record = {"query": f"質問 {minute}", "answer": "回答", "page": "runbook_chat", **who}
    when = datetime(DAY.year, DAY.month, DAY.day, 10, minute, tzinfo=JST)
    append_record(settings.logs_dir, record, now=when)


@pytest.fixture
def settings(tmp_path):
    settings = make_settings(tmp_path / "state")
    alice = {"user": "u-alice", "user_name": "佐藤 花子", "role": "reviewer", "client": "10.0.0.5"}
    bob = {"user": "u-bob", "user_name": "鈴木 一郎", "role": "operator", "client": "10.0.0.6"}
    for minute in range(3):
        ask(settings, minute, **alice)
    ask(settings, 10, **bob)
    ask(settings, 11)  # without sign-in: local
    # a line written before attribution existed (no user fields at all), chain left aside
    with log_path(settings.logs_dir, DAY).open("a", encoding="utf-8") as fh:
        old = {
            "timestamp": "2025-06-14T11:00:00+09:00",
            "query": "古い質問",
            "page": "runbook_chat",
        }
        fh.write(json.dumps(old, ensure_ascii=False) + "\n")
    return settings


def test_frame_carries_who_asked_and_filters_by_user(settings):
    frame = load_audit_log(settings.logs_dir, DAY, DAY).frame
    assert user_names(frame) == {"local": "local", "u-alice": "佐藤 花子", "u-bob": "鈴木 一郎"}
    alice = filter_frame(frame, users=["u-alice"])
    assert overview(alice).questions == 3
    assert set(alice["client"]) == {"10.0.0.5"} and set(alice["role"]) == {"reviewer"}
    assert overview(filter_frame(frame, users=["u-bob", "local"])).questions == 3
    assert overview(filter_frame(frame, users=None)).questions == 6


def test_the_page_filters_by_user(settings, monkeypatch):
    monkeypatch.setenv("WB_STATE_DIR", str(settings.state_root))
    get_settings.cache_clear()
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    at.sidebar.date_input[0].set_value((DAY, DAY)).run()
    assert not at.exception

    def questions() -> str:
        return next(m.value for m in at.metric if m.label == "質問数")

    assert questions() == "6"
    users = next(m for m in at.sidebar.multiselect if m.label == "利用者")
    assert users.options == ["local", "佐藤 花子（u-alice）", "鈴木 一郎（u-bob）"]
    users.set_value(["u-alice"]).run()
    assert not at.exception and questions() == "3"
    records = next(d for d in at.dataframe if "利用者" in d.value.columns).value
    assert set(records["利用者"]) == {"佐藤 花子"} and set(records["接続元"]) == {"10.0.0.5"}
