"""Online adaptation (design 10.7 / 10.8): dynamic importance, P(answerable), retrievability
from the QPP of the last search, cost EMAs; persistence, WAL replay and the decision."""

from __future__ import annotations

import json

import pytest

from core.interview import adaptation as adapt
from core.interview.domains import MIN_IMPORTANCE, get_domain
from core.interview.evidence import CallableEvidence, Evidence, run_search
from core.interview.orchestrator import Interviewer
from core.interview.params import VoIParams
from core.interview.state import Adaptation, QCheckResult, QuestionRecord, SessionState
from core.interview.store import SessionStore
from core.interview.voi import score_actions
from core.interview.wal import hash_id, replay, wal_files, wal_salt

from .conftest import APPENDIX_G, make_state, reply_for

PARAMS = VoIParams()
FIXED = VoIParams(adaptive=False)


def next_turn(state: SessionState) -> list[str]:
    state.turn += 1
    return adapt.update_importance(state, PARAMS)


def asked(state: SessionState, slot: str, specificity: float) -> None:
    state.questions.append(
        QuestionRecord(
            turn=state.turn,
            ts=0.0,
            text="q",
            core="q",
            slots=[slot],
            action="ask",
            voi=0.5,
            source="template",
            qcheck=QCheckResult(specificity=specificity, tacit_power=1.0, status="ok"),
        )
    )
    state.slots[slot].asked_count += 1


# --- 10.7 importance ----------------------------------------------------------------------
def test_importance_grows_for_a_persistently_unfilled_critical_slot_up_to_the_bound():
    state, _ = make_state()
    timeline, impact, lessons = (state.slots[n] for n in ("timeline", "impact", "lessons"))
    assert timeline.critical and not lessons.critical
    for slot in (timeline, impact, lessons):
        slot.asked_count = 1
    seen = []
    for _ in range(12):
        next_turn(state)
        seen.append(timeline.importance)
        assert timeline.importance <= min(1.0, timeline.base_importance + 0.1) + 1e-9
        assert impact.importance <= 1.0
    assert seen[:3] == pytest.approx([0.87, 0.89, 0.91])  # +0.02 per turn
    assert seen[-1] == pytest.approx(0.95)  # base 0.85 + 0.1
    assert impact.importance == 1.0  # base 0.95, capped at 1.0
    assert lessons.importance == lessons.base_importance  # auxiliary: no growth
    assert state.slots["capa"].importance == state.slots["capa"].base_importance  # never asked
    assert get_domain("postmortem").slot("timeline").importance == 0.85  # domain data untouched


def test_importance_updates_once_per_turn_and_shrinks_after_fill_never_below_min():
    state, _ = make_state()
    slot = state.slots["timeline"]
    slot.asked_count = 1
    next_turn(state)
    assert adapt.update_importance(state, PARAMS) == []  # same turn again: no double growth
    assert slot.importance == pytest.approx(0.87)
    slot.filled_ratio = 1.0
    assert next_turn(state) == ["timeline"]
    assert slot.importance == pytest.approx(0.80)  # base − 0.05
    next_turn(state)
    assert slot.importance == pytest.approx(0.80)  # stays while filled
    slot.filled_ratio = 0.3  # re-opened (a contradiction): grows again from there
    next_turn(state)
    assert slot.importance == pytest.approx(0.82)
    low = state.slots["lessons"]
    low.base_importance = low.importance = 0.21
    low.filled_ratio = 1.0
    next_turn(state)
    assert low.importance == MIN_IMPORTANCE
    fixed = state.model_copy(deep=True)
    fixed.turn += 1
    assert adapt.update_importance(fixed, FIXED) == []


def test_importance_stays_within_bounds_over_any_fill_sequence():
    state, _ = make_state("sop")
    for slot in state.slots.values():
        slot.asked_count = 1
    for turn in range(40):
        for i, slot in enumerate(state.slots.values()):
            slot.filled_ratio = 1.0 if (turn * 7 + i * 3) % 5 == 0 else 0.2
        next_turn(state)
        for slot in state.slots.values():
            low, high = adapt.importance_bounds(slot)
            assert MIN_IMPORTANCE <= low <= slot.importance <= high <= 1.0


# --- 10.8 P(answerable) -------------------------------------------------------------------
def test_p_answerable_is_the_prior_at_neutral_features_and_falls_with_evidence():
    state, _ = make_state()
    slot = state.slots["impact"]
    assert adapt.p_answerable(state, slot, PARAMS) == pytest.approx(0.6)
    adapt.record_answer(state.adaptation, False, 20.0)  # a quick, useful answer: still neutral
    assert adapt.p_answerable(state, slot, PARAMS) == pytest.approx(0.6)
    adapt.record_answer(state.adaptation, True, 20.0)
    after_unknown = adapt.p_answerable(state, slot, PARAMS)
    assert after_unknown < 0.6
    slot.unanswered_count = 1
    once = adapt.p_answerable(state, slot, PARAMS)
    slot.unanswered_count = 2
    twice = adapt.p_answerable(state, slot, PARAMS)
    assert twice < once < after_unknown
    assert twice == pytest.approx(adapt.sigmoid(adapt.logit(0.6) - 1.0 / 3 - 2.0), abs=1e-4)


def test_p_answerable_falls_with_slow_responses_and_vague_questions():
    slow, _ = make_state()
    for _ in range(10):
        adapt.record_answer(slow.adaptation, False, 480.0)
    assert adapt.p_features(slow, slow.slots["impact"])["slow"] > 1.5
    assert adapt.p_answerable(slow, slow.slots["impact"], PARAMS) < 0.5
    vague, _ = make_state()
    asked(vague, "impact", 0.4)
    precise, _ = make_state()
    asked(precise, "impact", 1.0)
    p_vague = adapt.p_answerable(vague, vague.slots["impact"], PARAMS)
    assert p_vague < adapt.p_answerable(precise, precise.slots["impact"], PARAMS) == 0.6
    away, _ = make_state()
    adapt.record_answer(away.adaptation, False, 3 * 3600.0)  # came back hours later: no sample
    assert away.adaptation.answer_ema_s is None and away.adaptation.answer_samples == 0


def test_fixed_mode_keeps_the_halving_rule():
    state, _ = make_state()
    slot = state.slots["impact"]
    slot.unanswered_count = 2
    assert adapt.p_answerable(state, slot, FIXED) == pytest.approx(0.15)


# --- 10.8 retrievability ------------------------------------------------------------------
def test_qpp_is_zero_for_nothing_and_higher_for_a_peaked_list():
    assert adapt.qpp([]) == 0.0
    assert adapt.qpp([0.2, 0.1]) == 0.0  # nothing reaches MIN_SCORE
    peaked = adapt.qpp([1.0, 0.1, 0.05])
    flat = adapt.qpp([1.0, 0.95, 0.9])
    assert 0.0 < flat < peaked <= 1.0
    assert adapt.qpp([0.8]) == pytest.approx(0.8)  # a single hit is fully peaked


def test_retrievability_prior_then_qpp_of_the_last_search():
    state, specs = make_state("sop")
    name = next(n for n, s in specs.items() if s.searchable)
    slot, spec = state.slots[name], specs[name]
    assert adapt.retrievability(state, slot, spec, PARAMS, True) == pytest.approx(0.7)
    assert adapt.retrievability(state, slot, spec, PARAMS, False) == 0.0
    slot.search_attempts = 1
    adapt.record_search(state.adaptation, name, [], 0.1)
    assert adapt.retrievability(state, slot, spec, PARAMS, True) == 0.0
    assert not any(
        a.action == "search" and a.slots == [name]
        for a in score_actions(state, specs, PARAMS, now=0.0, search=True)
    )
    adapt.record_search(state.adaptation, name, [1.0, 0.05], 0.1)
    peaked = adapt.retrievability(state, slot, spec, PARAMS, True)
    adapt.record_search(state.adaptation, name, [1.0, 0.9, 0.9], 0.1)
    flat = adapt.retrievability(state, slot, spec, PARAMS, True)
    assert peaked > flat > 0.0
    assert peaked == pytest.approx(adapt.qpp([1.0, 0.05]) * adapt.REPEAT_DISCOUNT)
    slot.search_attempts = adapt.MAX_SEARCHES
    assert adapt.retrievability(state, slot, spec, PARAMS, True) == 0.0
    assert adapt.estimated_retrievability(state, slot, PARAMS) == adapt.qpp([1.0, 0.9, 0.9])


def test_run_search_reads_the_next_page_and_returns_every_score():
    hits = [Evidence(f"本文{i}", "doc.md", f"見出し{i}", 1.0 - i / 10) for i in range(6)]
    source = CallableEvidence("docs", "文書", lambda q, k: hits[:k])
    spec = get_domain("sop").slot("hazards")
    first = run_search(source, spec, "テーマ", limit=3)
    second = run_search(source, spec, "テーマ", limit=3, page=1)
    assert first.scores == [1.0, 0.9, 0.8] and second.scores == [0.7, 0.6, 0.5]
    assert first.latency_s >= 0.0 and first.warning is None


# --- 10.8 costs ---------------------------------------------------------------------------
def test_cost_emas_move_toward_measurements_and_stay_clamped():
    state, _ = make_state()
    a = state.adaptation
    assert adapt.cost_ask(state, PARAMS) == 1.0 and adapt.cost_search(state, PARAMS) == 0.5
    emas = []
    for _ in range(3):
        adapt.record_answer(a, False, 40.0)
        emas.append(a.answer_ema_s)
    assert 30.0 < emas[0] < emas[1] < emas[2] < 40.0  # toward the measurement
    assert adapt.cost_ask(state, PARAMS) == pytest.approx(emas[2] / 30.0)
    for _ in range(30):
        adapt.record_answer(a, False, 500.0)
    assert a.answer_ema_s == pytest.approx(500.0, rel=1e-3)
    assert adapt.cost_ask(state, PARAMS) == pytest.approx(1.5)  # the ceiling
    for _ in range(30):
        adapt.record_answer(a, False, 2.0)
    assert a.answer_ema_s < 3.0 and adapt.cost_ask(state, PARAMS) == 1.0  # the floor
    for _ in range(30):
        adapt.record_search(a, "x", [1.0], 5.0)
    assert adapt.cost_search(state, PARAMS) == pytest.approx(0.75)
    adapt.record_search(a, "x", [], None)  # a failed search: no latency sample
    assert a.search_samples == 30
    assert adapt.cost_ask(state, FIXED) == 1.0 and adapt.cost_search(state, FIXED) == 0.5


# --- the decision -------------------------------------------------------------------------
def test_adaptation_changes_the_decision():
    state, specs = make_state()
    state.slots["summary"].filled_ratio = 1.0
    asked(state, "impact", 0.3)  # a vague question about impact went by without an answer
    fixed = score_actions(state, specs, FIXED, now=0.0)[0]
    adapted = score_actions(state, specs, PARAMS, now=0.0)[0]
    assert fixed.slots == ["impact"] and adapted.slots == ["detection"]
    # a slow user makes asking dearer: a second search (QPP 0.5 × 0.5) now beats asking
    sop, sop_specs = make_state("sop")
    name = next(n for n, s in sop_specs.items() if s.searchable)
    for slot in sop.slots.values():
        slot.filled_ratio = 1.0
    sop.slots[name].filled_ratio = 0.6
    sop.slots[name].search_attempts = 1
    adapt.record_search(sop.adaptation, name, [0.5], 0.2)
    before = score_actions(sop, sop_specs, PARAMS, now=0.0, search=True)[0]
    for _ in range(10):
        adapt.record_answer(sop.adaptation, False, 90.0)
    after = score_actions(sop, sop_specs, PARAMS, now=0.0, search=True)[0]
    assert (before.action, before.cost) == ("ask", 1.0)
    assert after.action == "search" and after.prob == pytest.approx(0.25)
    assert score_actions(sop, sop_specs, FIXED, now=0.0, search=True)[0].action == "ask"


def test_focus_temperature_is_off_by_default_and_damps_lower_gaps():
    state, specs = make_state()
    plain = {tuple(a.slots): a.voi for a in score_actions(state, specs, PARAMS, now=0.0)}
    focused = score_actions(state, specs, VoIParams(focus_temperature=0.05), now=0.0)
    by_slots = {tuple(a.slots): a.voi for a in focused}
    assert by_slots[("summary",)] == pytest.approx(plain[("summary",)])  # the top gap
    assert by_slots[("impact",)] < plain[("impact",)]
    assert score_actions(state, specs, VoIParams(focus_temperature=None), now=0.0)[0].voi == (
        pytest.approx(plain[("summary",)])
    )


# --- end to end: persistence and WAL replay -----------------------------------------------
def play(iv, clock) -> str:
    result = iv.start("postmortem", "昨日の決済システムの障害について振り返りたい", user_id="u9")
    sid = result.session.session_id
    for seconds, text in ((45.0, None), (150.0, "わからない"), (200.0, None)):
        clock.tick(seconds)
        result = iv.answer(sid, text or reply_for(iv.resume(sid), APPENDIX_G))
    return sid


def wal_events(settings, name: str) -> list[dict]:
    return [
        rec["data"]
        for p in wal_files(settings.wal_dir)
        for line in p.read_text(encoding="utf-8").splitlines()
        if (rec := json.loads(line))["event"] == name
    ]


def test_adapted_parameters_are_in_the_wal_and_derivable_from_its_events(iv, clock, settings):
    sid = play(iv, clock)
    state = iv.resume(sid).session
    a = state.adaptation
    assert a.answer_samples == 3 and a.recent == [False, True, False]
    assert a.answer_ema_s > 30.0 and adapt.cost_ask(state, PARAMS) > 1.0
    fills = wal_events(settings, "fill")
    assert [f["response_s"] for f in fills] == [45.0, 150.0, 200.0]
    rebuilt = Adaptation()
    for f in fills:  # the events carry every measurement the estimate needs
        adapt.record_answer(rebuilt, f["answer_unanswered"], f["response_s"])
    assert rebuilt.answer_ema_s == a.answer_ema_s and rebuilt.recent == a.recent
    decisions = wal_events(settings, "decision")
    last = decisions[-1]["adapted"]
    assert last["cost_ask"] == pytest.approx(adapt.cost_ask(state, PARAMS), abs=1e-4)
    chosen = decisions[-1]["slots"][0]
    assert last["slots"][chosen]["p_answerable"] < 0.6
    assert (
        "回答可能性" in state.last_decision.reason and "平均応答時間" in state.last_decision.reason
    )


def test_adapted_parameters_survive_a_restart_and_a_replay_twice(iv, clock, settings):
    sid = play(iv, clock)
    original = iv.resume(sid).session
    iv.close()
    restarted = Interviewer(settings, clock=clock)  # a new process on the same files
    loaded = restarted.resume(sid).session
    assert loaded.adaptation == original.adaptation
    assert {n: s.importance for n, s in loaded.slots.items()} == {
        n: s.importance for n, s in original.slots.items()
    }
    assert any(s.importance != s.base_importance for s in loaded.slots.values())
    assert restarted.estimates(loaded) == restarted.estimates(original)
    restarted.close()
    store = SessionStore(settings.interview_db.parent / "replayed.sqlite")
    salt, paths = wal_salt(settings), wal_files(settings.wal_dir)
    first = replay(paths, store, salt)
    (rebuilt_id,) = first.rebuilt
    assert rebuilt_id == f"wal-{hash_id(salt, sid)}"
    once = store.load(rebuilt_id)
    again = replay(paths, store, salt)
    assert again.skipped == [rebuilt_id]
    twice = store.load(rebuilt_id)
    assert once.adaptation == twice.adaptation == original.adaptation
    assert once.model_dump_json(exclude={"version"}) == twice.model_dump_json(exclude={"version"})
    assert {n: s.importance for n, s in twice.slots.items()} == {
        n: s.importance for n, s in original.slots.items()
    }
    other = SessionStore(settings.interview_db.parent / "other.sqlite")
    replay(paths, other, salt)
    assert other.load(rebuilt_id).model_dump_json(exclude={"version"}) == (
        once.model_dump_json(exclude={"version"})
    )


def test_search_qpp_and_latency_are_recorded(settings, clock):
    empty = CallableEvidence("docs", "文書", lambda q, k: [])
    iv = Interviewer(settings, clock=clock, evidence=empty, llm=None)
    state = iv.start("sop", "VPN 装置の設定変更").session
    searches = wal_events(settings, "search")
    searched = {e["slot"] for e in searches}
    assert searched and all(e["qpp"] == 0.0 and e["latency_ms"] >= 0 for e in searches)
    assert len(searches) == len(searched)  # nothing came back: never searched again
    assert all(state.adaptation.qpp[n] == 0.0 for n in searched)
    assert state.adaptation.search_samples == len(searches)
    iv.close()
