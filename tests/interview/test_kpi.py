"""KPIs per session and per domain (appendix B formulas), from the state and from the WAL."""

from __future__ import annotations

import pytest

from core.interview.kpi import (
    KPI_DEFINITIONS,
    aggregate,
    kpis_from_wal,
    non_increasing,
    session_kpis,
)
from core.interview.wal import wal_files

from .conftest import APPENDIX_G, reply_for


def test_kpis_of_a_session_and_from_the_wal(iv, clock, settings):
    result = iv.start("postmortem", "昨日の決済システムの障害について振り返りたい")
    while not result.done:
        clock.tick()
        result = iv.answer(result.session.session_id, reply_for(result, APPENDIX_G))
    k = session_kpis(result.session)
    assert k.slot_coverage == 1.0 and k.stop_reason == "kpi_met" and k.completed
    # five critical slots and the root cause the stop rule requires
    assert k.total_questions == 6 and k.duplicate_rate == 0.0 and k.question_efficiency == 1.0
    assert k.turn_count == result.session.turn
    assert k.voi_non_increasing and k.voi_median_non_increasing
    assert k.qcheck_total >= k.total_questions and k.qcheck_fail_rate == 0.0
    from_wal = kpis_from_wal(wal_files(settings.wal_dir))
    assert len(from_wal) == 1
    assert from_wal[0].model_dump(exclude={"session_id"}) == k.model_dump(exclude={"session_id"})


def test_aggregate_per_domain(iv, clock):
    done = []
    for answer in ("終了", None):
        result = iv.start("postmortem", "昨日の決済システムの障害について振り返りたい")
        while not result.done:
            clock.tick()
            result = iv.answer(result.session.session_id, answer or reply_for(result, APPENDIX_G))
        done.append(session_kpis(result.session))
    pm = aggregate(done)["postmortem"]
    assert pm.sessions == 2
    assert pm.stop_reason_ratio == {
        "kpi_met": 0.5,
        "voi_low": 0.0,
        "timeout": 0.0,
        "user_abort": 0.5,
    }
    assert pm.slot_coverage == pytest.approx((1.0 + 0.0) / 2)
    assert pm.turn_count == done[1].turn_count  # average turns to completion: completed only
    assert set(KPI_DEFINITIONS) == {
        "slot_coverage",
        "question_efficiency",
        "duplicate_rate",
        "turn_count",
        "voi_median_trend",
        "stop_reason_ratio",
        "qcheck_fail_rate",
    }


def test_non_increasing():
    assert non_increasing([0.5, 0.5, 0.3]) and not non_increasing([0.3, 0.4])
