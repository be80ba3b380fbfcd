"""The turn loop end to end: the design's appendix G dialogue, persistence and resume,
the generated document, the stop reasons."""

from __future__ import annotations

from core.interview.orchestrator import Interviewer
from core.interview.params import VoIParams

from .conftest import APPENDIX_G, reply_for


def run_g(iv, clock):
    result = iv.start("postmortem", "昨日の決済システムの障害について振り返りたい", user_id="u1")
    asked_filled = []
    while not result.done:
        asked_filled += [
            t for t in result.session.pending_targets if result.session.slots[t].filled
        ]
        clock.tick()
        result = iv.answer(result.session.session_id, reply_for(result, APPENDIX_G))
    return result, asked_filled


def test_appendix_g_reaches_the_hard_stop(iv, clock):
    result, asked_filled = run_g(iv, clock)
    state = result.session
    assert result.stop.reason == "kpi_met"
    assert state.turn <= 7
    assert all(
        state.slots[n].filled for n in ("summary", "impact", "detection", "timeline", "capa")
    )
    assert asked_filled == []
    assert state.questions[0].text.startswith("了解しました。まず、事象の概要を一文で")
    vois = [v.voi for v in state.voi_trace if v.action != "none"]
    assert vois == sorted(vois, reverse=True)
    assert (
        state.hypothesis.belief > 0.5
        and state.hypothesis.belief_ci[1] - state.hypothesis.belief_ci[0] < 1.0
    )
    doc = result.document
    assert doc.startswith("# ポストモーテム: 昨日の決済システムの障害")
    assert "| 14:40 | ロールバック試行 |" in doc
    assert "| 設定値の再検証と自動テスト追加 | SRE | 2週間 | 失敗率\\<1% |" in doc
    assert "## 未充足の項目" in doc and "根本原因" in doc
    assert "停止理由: 重要項目がそろいました" in doc


def test_each_turn_is_persisted_and_resumes_at_the_same_question(settings, clock):
    first = Interviewer(settings, clock=clock)
    result = first.start("recipe", "肉じゃが", user_id="u2")
    clock.tick()
    result = first.answer(result.session.session_id, "4人分です")
    question = result.question
    first.close()
    restarted = Interviewer(settings, clock=clock)  # a new process: only the files remain
    resumed = restarted.resume(result.session.session_id)
    assert resumed.question == question
    assert resumed.session.pending_targets == result.session.pending_targets
    assert resumed.session.slots["basic"].filled
    listed = restarted.sessions(user_id="u2")
    assert [s.session_id for s in listed] == [result.session.session_id]
    assert listed[0].status == "active" and listed[0].turn == 2
    restarted.close()


def test_abort_and_turn_budget(iv, clock):
    result = iv.start("daily_work", "今日の日報")
    aborted = iv.answer(result.session.session_id, "終了")
    assert aborted.stop.reason == "user_abort" and aborted.document
    again = iv.answer(result.session.session_id, "まだ続けたい")
    assert again.notice and again.session.turn == aborted.session.turn  # nothing changed
    result = iv.start("postmortem", "テスト障害")
    for _ in range(20):
        if result.done:
            break
        clock.tick()
        result = iv.answer(result.session.session_id, "えーと、その件はメモを見ないと何とも")
    assert result.stop.reason in ("timeout", "voi_low")
    assert result.session.turn <= 14


def test_soft_stop_shows_the_missing_slots(settings, clock):
    iv = Interviewer(settings, clock=clock, params=VoIParams(tau_stop=0.3))
    result = iv.start("recipe", "肉じゃが（4人分）")
    clock.tick()
    result = iv.answer(result.session.session_id, "豚こま肉200g、じゃがいも3個、玉ねぎ1個")
    for _ in range(5):
        if result.done:
            break
        clock.tick()
        result = iv.answer(result.session.session_id, "わからない")
    assert result.stop.reason == "voi_low"
    assert "steps" in result.stop.missing
    assert "工程（重要" in result.document
    iv.close()


def test_document_escapes_user_text(iv, clock):
    result = iv.start("recipe", "<script>alert(1)</script> [x](javascript:y)")
    doc = iv.abort(result.session.session_id).document
    assert "<script>" not in doc and "\\<script\\>" in doc
    assert "\\[x\\](javascript" in doc  # brackets escaped: no link
