"""Bad input: the interview goes on and nothing stored is lost."""

from __future__ import annotations

import sqlite3

import pytest

from core.interview.orchestrator import Interviewer
from core.interview.simulator import run_scenario
from core.interview.store import CorruptSessionError
from core.interview.wal import read_wal, wal_files

from .conftest import APPENDIX_G, reply_for, scenario


@pytest.mark.parametrize("answer", ["", "   ", "わからない", "I don't know", "？？？"])
def test_empty_and_unknown_answers_keep_the_interview_going(iv, clock, answer):
    result = iv.start("postmortem", "昨日の決済障害")
    sid = result.session.session_id
    clock.tick()
    after = iv.answer(sid, answer)
    state = after.session
    assert not after.done and after.question
    assert state.slots["summary"].unanswered_count == 1 and not state.slots["summary"].filled
    assert state.messages[-1].answer == answer  # kept as given
    assert after.decision.slots != ["summary"]  # P(answerable) halved: another slot first
    assert after.question.startswith("承知しました。その点は後回しにします。")


def test_english_answers(scenarios):
    result = run_scenario(scenario(scenarios, "daily-english"))
    assert result.stop_reason == "kpi_met"
    assert set(result.critical_filled) == {"tasks", "artifacts", "blockers", "next_step"}
    assert "pull/57" in result.document


def test_very_long_answer_is_stored_whole(iv, clock):
    result = iv.start("postmortem", "長文テスト")
    long = APPENDIX_G["summary"] + "。" + "詳細な経緯を書きます。" * 5000
    clock.tick()
    after = iv.answer(result.session.session_id, long)
    assert after.session.messages[-1].answer == long
    assert after.session.slots["summary"].filled
    assert any("4000文字" in w for w in after.warnings)
    assert iv.resume(result.session.session_id).session.messages[-1].answer == long


def test_contradiction_reopens_the_slot_and_is_shown(scenarios, settings, clock):
    iv = Interviewer(settings, clock=clock)
    sc = scenario(scenarios, "pm-vpn-certificate")
    answers = {k: v for k, v in sc.answers.items() if isinstance(v, str)}
    result = iv.start("postmortem", sc.topic)
    seen = None
    while not result.done:
        clock.tick()
        if result.session.pending_clarify:
            assert "「10分」" in result.question and "「15分」" in result.question
            result = iv.answer(result.session.session_id, "15分後が正しいです")
            assert result.resolved and result.session.slots["detection"].filled
            continue
        result = iv.answer(result.session.session_id, reply_for(result, answers))
        if result.contradictions:
            seen = result.contradictions[0]
            assert not result.session.slots["detection"].filled  # re-opened
            assert result.session.pending_clarify == seen.id
    assert seen is not None and seen.slot_name == "detection"
    assert "## 矛盾の記録" in result.document and "「15分」を採用" in result.document
    iv.close()


def _corrupt(settings, sid: str) -> None:
    with sqlite3.connect(settings.interview_db) as conn:
        conn.execute("UPDATE sessions SET state_json = '{not json' WHERE session_id = ?", (sid,))


def test_corrupt_session_row_is_recovered_from_the_wal(iv, clock, settings):
    result = iv.start("postmortem", "昨日の決済システムの障害について振り返りたい", user_id="u9")
    sid = result.session.session_id
    clock.tick()
    result = iv.answer(sid, APPENDIX_G["summary"])
    other = iv.start("recipe", "肉じゃが").session.session_id
    question = result.question
    _corrupt(settings, sid)
    listed = {s.session_id: s for s in iv.sessions()}
    assert listed[sid].corrupt and not listed[other].corrupt
    resumed = iv.resume(sid)
    assert resumed.question == question and resumed.session.turn == 2
    assert any("WAL" in w for w in resumed.warnings)
    assert iv.store.quarantined(sid) == ["{not json"]  # the broken row is kept aside
    clock.tick()
    goes_on = iv.answer(sid, APPENDIX_G["impact"])
    assert goes_on.session.slots["impact"].filled and goes_on.session.user_id == "u9"


def test_corrupt_row_without_wal_is_a_clear_error_and_stays_stored(iv, settings):
    sid = iv.start("recipe", "肉じゃが").session.session_id
    for path in wal_files(settings.wal_dir):
        path.unlink()
    _corrupt(settings, sid)
    with pytest.raises(CorruptSessionError) as err:
        iv.resume(sid)
    assert "壊れています" in err.value.user_message
    assert iv.store.raw(sid)["state_json"] == "{not json"
    assert iv.start("recipe", "カレー").question  # other sessions are unaffected


def test_truncated_wal_line(iv, clock, settings):
    result = iv.start("postmortem", "WAL テスト")
    sid = result.session.session_id
    (path,) = wal_files(settings.wal_dir)
    raw = path.read_bytes()
    path.write_bytes(raw + b'{"ts": "2025-06-15T00:00:00+00:00", "event": "ans')  # a crash mid-line
    assert read_wal(path).truncated_tail
    clock.tick()
    after = iv.answer(sid, APPENDIX_G["summary"])
    assert after.session.slots["summary"].filled
    read = read_wal(path)
    assert not read.truncated_tail and len(read.bad_lines) == 1  # new records start a fresh line
    assert read.events[-1]["event"] == "turn_committed"
