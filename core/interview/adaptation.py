"""Online adaptation of the VoI parameters (design 10.7 dynamic importance, 10.8 estimation).

``VoIParams`` (``core.interview.params``) holds the design's priors; this module turns what the
session measured into the values the VoI actually uses. Everything it needs lives in
``SessionState`` (the slots and ``state.adaptation``, an ``Adaptation`` of ``core.interview.state``), so a resumed session and a WAL snapshot continue with the same values;
every measurement is taken at turn time from the turn clock (``ctx.now``: the timestamps the
WAL records) and written into the turn's events, never re-measured on replay.

1. Effective importance (10.7), updated once per answered turn (``update_importance``):
   - a critical slot still unfilled after a turn in which it had been asked or searched gains
     ``IMPORTANCE_STEP = 0.02`` per turn, up to ``base + IMPORTANCE_MAX_GAIN (0.1)`` and 1.0;
   - a slot that became filled drops to ``base − FILL_DISCOUNT (0.05)`` (and stays there while
     filled); re-opened, it grows again from there;
   - never below ``MIN_IMPORTANCE = 0.2`` (the design's min_importance). The base importance
     stays in the domain data (``Slot.base_importance`` keeps a copy).
2. P(answerable_s) (10.8): a logistic model, ``σ(logit(prior) + Σ w·x)``, 0.6 at neutral
   features (all x = 0: no answer yet, slot never asked):
   - ``x_rate`` = recent unanswered rate: unanswered / (answers + 1) over the last 5 answers
     (an answer is unanswered when it was empty, 「わからない」 or filled none of its targets),
     ``W_RATE = −1.0``;
   - ``x_slot`` = this slot's unanswered count, ``W_SLOT = −1.0`` (0.6 → 0.36 → 0.17 → 0.07:
     about the old "halves per unanswered attempt");
   - ``x_slow`` = clamp(log2(response EMA / 120 s), 0, 2): only answers slower than two minutes
     count, ``W_SLOW = −0.5``;
   - ``x_spec`` = QCheck specificity of the last question about this slot − 1.0 (0 when never
     asked; the next question is predicted as specific as the last), ``W_SPEC = +1.0``.
   P is clamped to [0.02, 0.95].
3. retrievability_s (10.8): the prior 0.7 before the slot was searched; after a search the
   query-performance prediction of its results, ``QPP = top1 × (0.5 + 0.5 × peak)`` with
   ``peak = (top1 − mean(rest)) / top1`` (1 for a single hit), 0 when nothing came back (or
   nothing reached ``MIN_SCORE``). A further search reads the next page of results, so it is
   worth ``QPP × REPEAT_DISCOUNT (0.5)``; a slot is searched at most ``MAX_SEARCHES (2)`` times.
4. cost_ask / cost_search (10.8): the prior (1.0 / 0.5) × clamp(EMA / reference, 1.0, 1.5),
   the EMA (α = 0.3, started at the reference) of the measured user response time (reference
   30 s; a pause over 10 minutes is an absence and not measured) and of the search latency
   (reference 0.5 s). With no measurement the factor is 1. The factor never goes below 1: a
   faster answer does not make a turn cheaper than the design's unit cost, and a falling cost
   would raise every VoI from one turn to the next (measured: with a ×0.5 floor, a scripted
   user answering in 10 s broke the non-increasing VoI in 21 of 21 sessions). The ceiling 1.5
   keeps a slow user's critical questions above τ_stop (with ×2, 60 s answers soft-stopped two
   recipe sessions at 2/3 critical coverage).

``VoIParams.adaptive=False`` gives the fixed rules instead (priors, P halving per unanswered
attempt, retrievability 0 once searched, base importance).
"""

from __future__ import annotations

import math
from typing import Any

from core.interview.belief import logit, sigmoid
from core.interview.domains import MIN_IMPORTANCE, SlotSpec
from core.interview.params import VoIParams
from core.interview.slots import Slot
from core.interview.state import Adaptation, SessionState

# 1. importance
IMPORTANCE_STEP = 0.02
IMPORTANCE_MAX_GAIN = 0.1
FILL_DISCOUNT = 0.05
# 2. P(answerable)
RATE_WINDOW = 5
RATE_PRIOR_N = 1
W_RATE = -1.0
W_SLOT = -1.0
W_SLOW = -0.5
SLOW_SECONDS = 120.0
SLOW_MAX = 2.0
W_SPEC = 1.0
SPEC_REF = 1.0
P_MIN, P_MAX = 0.02, 0.95
# 3. retrievability
MIN_SCORE = 0.3  # evidence below this is no evidence (as in ``evidence.search_slot``)
PEAK_FLOOR = 0.5
REPEAT_DISCOUNT = 0.5
MAX_SEARCHES = 2
# 4. costs
EMA_ALPHA = 0.3
REF_ANSWER_SECONDS = 30.0
ABSENCE_SECONDS = 600.0
REF_SEARCH_SECONDS = 0.5
COST_MIN_FACTOR, COST_MAX_FACTOR = 1.0, 1.5


def _clamp(x: float, low: float, high: float) -> float:
    return min(high, max(low, x))


# --- 1. importance ---------------------------------------------------------------------------
def importance_bounds(slot: Slot) -> tuple[float, float]:
    """The effective importance's range: [max(0.2, base − 0.05), min(1.0, base + 0.1)]."""
    base = slot.base_importance
    low = round(max(MIN_IMPORTANCE, base - FILL_DISCOUNT), 4)
    return low, round(min(1.0, base + IMPORTANCE_MAX_GAIN), 4)


def update_importance(state: SessionState, params: VoIParams) -> list[str]:
    """Apply the 10.7 rule once for ``state.turn``; returns the slots whose importance moved."""
    adapt = state.adaptation
    if not params.adaptive or adapt.importance_turn >= state.turn:
        return []
    before_filled = set(adapt.filled)
    moved = []
    for name, slot in state.slots.items():
        old = slot.importance
        low, high = importance_bounds(slot)
        if slot.filled:
            if name not in before_filled:
                slot.importance = low
        elif slot.critical and (slot.asked_count or slot.search_attempts):
            slot.importance = min(high, max(slot.importance, MIN_IMPORTANCE) + IMPORTANCE_STEP)
        slot.importance = round(max(MIN_IMPORTANCE, slot.importance), 4)
        if slot.importance != old:
            moved.append(name)
    adapt.filled = sorted(n for n, s in state.slots.items() if s.filled)
    adapt.importance_turn = state.turn
    return moved


# --- 2. P(answerable) ------------------------------------------------------------------------
def record_answer(adapt: Adaptation, unanswered: bool, response_s: float | None) -> None:
    """One answer: its outcome and, when measured, the user's response time."""
    adapt.recent = [*adapt.recent, unanswered][-RATE_WINDOW:]
    if response_s is None or response_s < 0 or response_s > ABSENCE_SECONDS:
        return
    prev = REF_ANSWER_SECONDS if adapt.answer_ema_s is None else adapt.answer_ema_s
    adapt.answer_ema_s = round(prev + EMA_ALPHA * (response_s - prev), 4)
    adapt.answer_samples += 1


def unanswered_rate(adapt: Adaptation) -> float:
    return sum(adapt.recent) / (len(adapt.recent) + RATE_PRIOR_N) if adapt.recent else 0.0


def last_specificity(state: SessionState, name: str) -> float | None:
    for q in reversed(state.questions):
        if name in q.slots:
            return q.qcheck.specificity
    return None


def p_features(state: SessionState, slot: Slot) -> dict[str, float]:
    adapt = state.adaptation
    slow = 0.0
    if adapt.answer_ema_s is not None:
        slow = _clamp(math.log2(max(adapt.answer_ema_s, 1e-6) / SLOW_SECONDS), 0.0, SLOW_MAX)
    spec = last_specificity(state, slot.name)
    return {
        "rate": round(unanswered_rate(adapt), 4),
        "slot": float(slot.unanswered_count),
        "slow": round(slow, 4),
        "spec": round(spec - SPEC_REF, 4) if spec is not None else 0.0,
    }


def p_answerable(state: SessionState, slot: Slot, params: VoIParams) -> float:
    if not params.adaptive:
        return params.p_answerable * params.unanswered_decay**slot.unanswered_count
    x = p_features(state, slot)
    z = logit(params.p_answerable)
    z += W_RATE * x["rate"] + W_SLOT * x["slot"] + W_SLOW * x["slow"] + W_SPEC * x["spec"]
    return _clamp(sigmoid(z), P_MIN, P_MAX)


# --- 3. retrievability -----------------------------------------------------------------------
def qpp(scores: list[float]) -> float:
    """Query performance prediction from the result scores (0..1): how peaked the list is."""
    ranked = sorted((s for s in scores if s > 0), reverse=True)
    if not ranked or ranked[0] < MIN_SCORE:
        return 0.0
    top = min(1.0, ranked[0])
    rest = ranked[1:]
    peak = 1.0 if not rest else _clamp((top - sum(rest) / len(rest)) / top, 0.0, 1.0)
    return round(top * (PEAK_FLOOR + (1.0 - PEAK_FLOOR) * peak), 4)


def record_search(
    adapt: Adaptation, slot: str, scores: list[float], latency_s: float | None
) -> float:
    """One search for ``slot``: its QPP and (unless it failed) its latency; returns the QPP."""
    value = qpp(scores)
    adapt.qpp[slot] = value
    if latency_s is None:
        return value
    prev = REF_SEARCH_SECONDS if adapt.search_ema_s is None else adapt.search_ema_s
    adapt.search_ema_s = round(prev + EMA_ALPHA * (max(0.0, latency_s) - prev), 6)
    adapt.search_samples += 1
    return value


def retrievability(
    state: SessionState, slot: Slot, spec: SlotSpec | None, params: VoIParams, search: bool
) -> float:
    """The probability that searching the slot (now) fills it; 0 when it cannot be searched."""
    if not search or spec is None or not spec.searchable:
        return 0.0
    if not slot.search_attempts:
        return params.retrievability
    if not params.adaptive or slot.search_attempts >= MAX_SEARCHES:
        return 0.0
    last = state.adaptation.qpp.get(slot.name, 0.0)
    return round(last * REPEAT_DISCOUNT**slot.search_attempts, 4)


def estimated_retrievability(state: SessionState, slot: Slot, params: VoIParams) -> float:
    """For display: the prior, or the QPP of the slot's last search."""
    if not params.adaptive or not slot.search_attempts:
        return params.retrievability if not slot.search_attempts else 0.0
    return state.adaptation.qpp.get(slot.name, 0.0)


# --- 4. costs --------------------------------------------------------------------------------
def _factor(ema: float | None, ref: float) -> float:
    return 1.0 if ema is None else _clamp(ema / ref, COST_MIN_FACTOR, COST_MAX_FACTOR)


def ask_factor(state: SessionState, params: VoIParams) -> float:
    return _factor(state.adaptation.answer_ema_s, REF_ANSWER_SECONDS) if params.adaptive else 1.0


def cost_ask(state: SessionState, params: VoIParams) -> float:
    return params.cost_ask * ask_factor(state, params)


def cost_search(state: SessionState, params: VoIParams) -> float:
    if not params.adaptive:
        return params.cost_search
    return params.cost_search * _factor(state.adaptation.search_ema_s, REF_SEARCH_SECONDS)


# --- what the decision and the page show -----------------------------------------------------
def slot_estimate(
    state: SessionState, slot: Slot, spec: SlotSpec | None, params: VoIParams, *, search: bool
) -> dict[str, Any]:
    """A slot's adapted values: importance (and its base), P(answerable), retrievability."""
    out: dict[str, Any] = {
        "importance": round(slot.importance, 4),
        "base_importance": round(slot.base_importance, 4),
        "p_answerable": round(p_answerable(state, slot, params), 4),
    }
    if search and spec is not None and spec.searchable:
        out["retrievability"] = round(estimated_retrievability(state, slot, params), 4)
    return out


def adapted_values(
    state: SessionState,
    specs: dict[str, SlotSpec],
    params: VoIParams,
    slots: list[str],
    *,
    search: bool,
) -> dict[str, Any]:
    """The adapted parameters behind a decision (for the WAL decision event and the page)."""
    adapt = state.adaptation
    return {
        "adaptive": params.adaptive,
        "cost_ask": round(cost_ask(state, params), 4),
        "cost_search": round(cost_search(state, params), 4),
        "answer_ema_s": adapt.answer_ema_s,
        "search_ema_s": adapt.search_ema_s,
        "unanswered_rate": round(unanswered_rate(adapt), 4),
        "slots": {
            n: slot_estimate(state, state.slots[n], specs.get(n), params, search=search)
            for n in dict.fromkeys(slots)
            if n in state.slots
        },
    }
