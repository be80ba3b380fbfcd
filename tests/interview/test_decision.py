"""Gap priority, VoI (ask / search / bundles), the policy plugin, belief updates and the stop rules."""

from __future__ import annotations

import math

import pytest

from core.interview.belief import MIN_WIDTH, EvidenceFeatures, delta, logit, sigmoid, update
from core.interview.gap import analyze_gaps, critical_gaps, priority, staleness
from core.interview.params import VoIParams
from core.interview.policy import (
    HeuristicVoIPolicy,
    PolicyContext,
    decide_safely,
    get_policy,
    register_policy,
)
from core.interview.slots import THETA_FILLED, filled_ratio
from core.interview.state import Decision
from core.interview.stop import budget_stop, hard_stop, soft_stop
from core.interview.voi import bundle_cost, median_voi, score_actions

from .conftest import make_state


def test_staleness_and_priority():
    assert staleness(None, 100.0) == 1.0
    assert staleness(100.0, 100.0) == 0.0
    assert staleness(0.0, 60.0, tau=60.0) == pytest.approx(1 - math.exp(-1))
    state, _ = make_state()
    slot = state.slots["impact"]
    slot.filled_ratio, slot.last_filled_ts = 0.4, 0.0
    assert priority(slot, 60.0) == pytest.approx(0.95 * 0.6 * (1 - math.exp(-1)))
    gaps = analyze_gaps(state, 60.0)
    assert gaps[0].slot == "summary" and gaps[0].priority == 1.0
    assert sum(g.share for g in gaps) == pytest.approx(1.0, abs=1e-3)


def test_filled_ratio_formula_and_threshold():
    assert filled_ratio(1.0, 1.0, "user") == 1.0
    assert filled_ratio(1.0, 0.5, "user") < THETA_FILLED  # half the required fields: a gap
    assert filled_ratio(0.6, 1.0, "retrieval") >= THETA_FILLED


def test_voi_with_the_design_parameters():
    params = VoIParams()
    assert (params.p_answerable, params.retrievability, params.cost_ask, params.cost_search) == (
        0.6,
        0.7,
        1.0,
        0.5,
    )
    state, specs = make_state()
    actions = score_actions(state, specs, params, now=0.0)
    best = actions[0]
    # VoI_ask = P × Δ × value / cost = 0.6 × 0.8 × (1.0 × 1.0 + 0.2 × (1 − 0)) / 1.0
    assert best.slots == ["summary"] and best.voi == pytest.approx(0.6 * 0.8 * 1.2)
    state.slots["summary"].unanswered_count = 1  # P(answerable) halves after 「わからない」
    assert score_actions(state, specs, params, now=0.0)[0].slots == ["impact"]


def test_search_beats_asking_when_a_corpus_is_attached():
    state, specs = make_state("sop")
    actions = score_actions(state, specs, VoIParams(), now=0.0, search=True)
    assert actions[0].action == "search" and specs[actions[0].slots[0]].searchable
    # VoI_search = 0.7 × Δ × value / 0.5
    a = actions[0]
    assert a.voi == pytest.approx(0.7 * 0.8 * a.value / 0.5)
    state.slots[a.slots[0]].search_attempts = 1
    again = score_actions(state, specs, VoIParams(), now=0.0, search=True)
    assert not any(x.action == "search" and x.slots == a.slots for x in again)


def test_bundles_use_synergy():
    params = VoIParams()
    assert bundle_cost(1, params) == pytest.approx(params.cost_ask)
    marginal = 2 * (params.cost_ask - params.bundle_base)
    assert bundle_cost(2, params) == pytest.approx(params.bundle_base + marginal - 0.15 * marginal)
    state, specs = make_state()
    for name in ("summary", "impact", "detection", "timeline", "capa", "remediation", "lessons"):
        state.slots[name].filled_ratio = 1.0
    best = score_actions(state, specs, params, now=0.0)[0]
    assert best.slots == ["root_cause", "contributing_factors"]  # group "analysis"
    singles = (0.6 * 0.8 * 0.6 * 0.5, 0.6 * 0.8 * 0.4 * 0.5)
    assert best.voi == pytest.approx(sum(singles) / bundle_cost(2, params))


def test_policy_plugin_and_safe_fallback():
    state, specs = make_state()
    ctx = PolicyContext(state, specs, VoIParams(), 0.0)
    assert isinstance(get_policy(), HeuristicVoIPolicy)

    class Broken:
        name = "broken"

        def decide(self, ctx):
            raise RuntimeError("boom")

    class Invalid:
        name = "invalid"

        def decide(self, ctx):
            return Decision(action="ask", slots=["nope"])

    register_policy("broken", Broken)
    for policy in (get_policy("broken"), Invalid()):
        decision, warning = decide_safely(policy, ctx)
        assert decision.policy == "heuristic_voi" and decision.slots == ["summary"]
        assert "heuristic_voi" in warning
    assert "VoI" in HeuristicVoIPolicy().decide(ctx).reason


def test_belief_update_in_logit_space_with_ci_shrink():
    assert sigmoid(logit(0.3)) == pytest.approx(0.3)
    d = delta(EvidenceFeatures(cosine=0.5))
    assert d > 0
    b, ci = update(0.5, (0.0, 1.0), d)
    assert b == pytest.approx(sigmoid(d), abs=1e-6)
    width = 1.0 / (1 + abs(d))
    assert ci == pytest.approx((max(0.0, b - width / 2), min(1.0, b + width / 2)), abs=1e-5)
    refuted = delta(EvidenceFeatures(cosine=0.5, logic_ok=0.0, polarity_sign=-1))
    assert refuted < 0 and update(0.5, (0.0, 1.0), refuted)[0] < 0.5
    for _ in range(50):
        b, ci = update(b, ci, d)
    assert 0.0 <= ci[0] <= b <= ci[1] <= 1.0
    # the width never shrinks below MIN_WIDTH before clipping to [0, 1]
    b, ci = update(0.5, (0.49, 0.51), 0.0)
    assert ci == pytest.approx((0.5 - MIN_WIDTH / 2, 0.5 + MIN_WIDTH / 2))


def test_two_stage_stop_rules():
    params = VoIParams()
    state, specs = make_state()
    assert hard_stop(state, params, 0.0) is None
    for name in ("summary", "impact", "detection", "timeline", "capa"):
        state.slots[name].filled_ratio = 1.0
    assert critical_gaps(state) == []
    stop = hard_stop(state, params, 0.0)
    assert stop.reason == "kpi_met" and "root_cause" in stop.missing
    decision = Decision(action="ask", slots=["lessons"], voi=0.05, max_voi=0.05)
    soft = soft_stop(state, decision, params, 0.0)
    assert soft.reason == "voi_low" and soft.max_voi == 0.05
    state.turn = 14
    assert budget_stop(state, 14, 0.0).reason == "timeout"
    assert median_voi(state, specs, params) >= 0.0
