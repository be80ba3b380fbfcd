"""Value of information per slot and action (design 2.3 / 10.3, EVSI approximation).

    value_s     = importance_s × critical_weight + coverage_bonus_s
    Δfilled_s   = min(1 − filled_ratio_s, quality_expectation)      (0 once the slot is filled)
    VoI_ask_s   = P(answerable_s) × Δfilled_s × value_s / cost_ask
    VoI_search_s= retrievability_s × Δfilled_s × value_s / cost_search
    bundle S    : cost_ask(S) = f × (base + Σ marginal_s − synergy × Σ marginal_s),
                  VoI_ask(S) = Σ P_s × Δ_s × value_s / cost_ask(S)

``VoIParams`` (``core.interview.params``) holds the design's initial values (P(answerable)=0.6, retrievability=0.7,
cost_ask=1.0, cost_search=0.5, synergy 0.15, τ_stop=0.08) as priors; the values used are the
session's adapted ones (``core.interview.adaptation``: importance_s, P(answerable_s),
retrievability_s, cost_ask = 1.0 × f, cost_search). ``critical_weight`` is 1.0 for critical
slots and 0.5 for auxiliary ones, and the coverage bonus (0.2 × the critical coverage still
missing) goes to critical slots only.

Focus (design 10.2, off by default): with ``focus_temperature`` T set, the VoI of each slot is
multiplied by ``exp((priority_s − priority_top) / T)`` (the softmax share relative to the top
gap), so that a small T concentrates the questions on the top gaps; ``top_k`` keeps only the k
highest priorities. Clarifications of a contradiction are never damped.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from core.interview import adaptation as adapt
from core.interview.domains import SlotSpec
from core.interview.gap import priority
from core.interview.params import VoIParams
from core.interview.slots import Slot, coverage
from core.interview.state import ActionScore, SessionState


def slot_value(slot: Slot, cov: float, params: VoIParams) -> float:
    weight = params.critical_weight if slot.critical else params.auxiliary_weight
    bonus = params.coverage_bonus * (1.0 - cov) if slot.critical else 0.0
    return slot.importance * weight + bonus


def delta_filled(slot: Slot, params: VoIParams) -> float:
    if slot.filled:
        return 0.0
    return min(1.0 - slot.filled_ratio, params.quality_expectation)


def p_answerable(state: SessionState, slot: Slot, params: VoIParams) -> float:
    return adapt.p_answerable(state, slot, params)


def retrievability(
    state: SessionState, slot: Slot, spec: SlotSpec | None, params: VoIParams, search: bool
) -> float:
    return adapt.retrievability(state, slot, spec, params, search)


def _ask(
    state: SessionState, slot: Slot, cov: float, params: VoIParams, cost: float
) -> tuple[float, float, float, float]:
    p = p_answerable(state, slot, params)
    gain = p * delta_filled(slot, params)
    value = slot_value(slot, cov, params)
    return gain * value / cost, gain, value, p


def bundle_cost(n: int, params: VoIParams, factor: float = 1.0) -> float:
    """cost_ask(S) = f × (base + Σ marginal − synergy(S)); a single slot costs ``cost_ask``."""
    marginal = (params.cost_ask - params.bundle_base) * n
    synergy = params.synergy * marginal if n > 1 else 0.0
    return factor * (params.bundle_base + marginal - synergy)


def _focus(prio: dict[str, float], params: VoIParams) -> dict[str, float]:
    """Each slot's softmax weight relative to the top gap (1.0 everywhere when off)."""
    t = params.focus_temperature
    if not t or not prio:
        return dict.fromkeys(prio, 1.0)
    top = max(prio.values())
    return {n: math.exp((p - top) / t) for n, p in prio.items()}


@dataclass(slots=True)
class _Candidates:
    """The slots worth an action this turn, with their gap priority and focus weight."""

    slots: list[Slot]
    clarify: dict[str, str]  # contested slot -> id of its open contradiction
    priority: dict[str, float]
    focus: dict[str, float]  # uncontested slots only


def _candidates(state: SessionState, params: VoIParams, now: float) -> _Candidates:
    """Open slots and slots with an open contradiction; ``top_k`` keeps the highest priorities
    (a contested slot always stays)."""
    clarify = {c.slot_name: c.id for c in state.open_contradictions()}
    open_slots = [s for s in state.slots.values() if not s.filled or s.name in clarify]
    prio = {s.name: priority(s, now, params.tau_staleness) for s in open_slots}
    if params.top_k:
        keep = sorted(open_slots, key=lambda s: -prio[s.name])[: params.top_k]
        open_slots = [s for s in open_slots if s in keep or s.name in clarify]
    focus = _focus({s.name: prio[s.name] for s in open_slots if s.name not in clarify}, params)
    return _Candidates(open_slots, clarify, prio, focus)


def _clarify_action(
    state: SessionState, slot: Slot, cov: float, params: VoIParams, cost: float, cand: _Candidates
) -> ActionScore:
    """Asking about a contested slot: never damped by focus, its whole unfilled share to gain."""
    p = p_answerable(state, slot, params)
    gain = p * (1.0 - slot.filled_ratio)
    value = slot_value(slot, cov, params)
    return ActionScore(
        action="ask",
        slots=[slot.name],
        voi=gain * value / cost,
        gain=gain,
        value=value,
        cost=cost,
        priority=cand.priority[slot.name],
        clarify=cand.clarify[slot.name],
        prob=p,
    )


def _ask_action(
    state: SessionState, slot: Slot, cov: float, params: VoIParams, cost: float, cand: _Candidates
) -> ActionScore:
    voi, gain, value, p = _ask(state, slot, cov, params, cost)
    return ActionScore(
        action="ask",
        slots=[slot.name],
        voi=voi * cand.focus[slot.name],
        gain=gain,
        value=value,
        cost=cost,
        priority=cand.priority[slot.name],
        prob=p,
    )


def _search_action(
    retrievable: float, slot: Slot, value: float, params: VoIParams, cost: float, cand: _Candidates
) -> ActionScore:
    gain = retrievable * delta_filled(slot, params)
    return ActionScore(
        action="search",
        slots=[slot.name],
        voi=gain * value / cost * cand.focus[slot.name],
        gain=gain,
        value=value,
        cost=cost,
        priority=cand.priority[slot.name],
        prob=retrievable,
    )


def _bundles(
    singles: dict[str, ActionScore],
    specs: dict[str, SlotSpec],
    params: VoIParams,
    factor: float,
    focus: dict[str, float],
) -> list[ActionScore]:
    """One bundled question per slot group with at least two askable members (the
    ``max_bundle`` best), at the bundle's discounted cost."""
    groups: dict[str, list[ActionScore]] = {}
    for name, ask in singles.items():
        spec = specs.get(name)
        if spec and spec.group and ask.voi > 0:
            groups.setdefault(spec.group, []).append(ask)
    bundles = []
    for members in groups.values():
        if len(members) < 2:
            continue
        chosen = sorted(members, key=lambda a: -a.voi)[: params.max_bundle]
        cost = bundle_cost(len(chosen), params, factor)
        total = sum(a.gain * a.value * focus[a.slots[0]] for a in chosen)
        bundles.append(
            ActionScore(
                action="ask",
                slots=[a.slots[0] for a in chosen],
                voi=total / cost,
                gain=sum(a.gain for a in chosen),
                value=sum(a.value for a in chosen),
                cost=cost,
                priority=max(a.priority for a in chosen),
                prob=sum(a.prob for a in chosen) / len(chosen),
            )
        )
    return bundles


def score_actions(
    state: SessionState,
    specs: dict[str, SlotSpec],
    params: VoIParams,
    *,
    now: float,
    search: bool = False,
) -> list[ActionScore]:
    """Every candidate action with its VoI, best first."""
    cand = _candidates(state, params, now)
    cov = coverage(state.slots)
    c_ask, c_search = adapt.cost_ask(state, params), adapt.cost_search(state, params)
    actions: list[ActionScore] = []
    singles: dict[str, ActionScore] = {}
    for slot in cand.slots:
        if slot.name in cand.clarify:
            actions.append(_clarify_action(state, slot, cov, params, c_ask, cand))
            continue
        ask = singles[slot.name] = _ask_action(state, slot, cov, params, c_ask, cand)
        actions.append(ask)
        r = retrievability(state, slot, specs.get(slot.name), params, search)
        if r > 0:
            actions.append(_search_action(r, slot, ask.value, params, c_search, cand))
    factor = adapt.ask_factor(state, params)
    actions.extend(_bundles(singles, specs, params, factor, cand.focus))
    return sorted(
        actions, key=lambda a: (-round(a.voi, 9), a.clarify is None, -a.priority, a.slots)
    )


def median_voi(
    state: SessionState, specs: dict[str, SlotSpec], params: VoIParams, *, search: bool = False
) -> float:
    """KPI voi_median_trend: the median over all slots of max(VoI_ask, VoI_search) (0 if filled)."""
    cov = coverage(state.slots)
    c_ask, c_search = adapt.cost_ask(state, params), adapt.cost_search(state, params)
    values = []
    for slot in state.slots.values():
        ask = _ask(state, slot, cov, params, c_ask)[0]
        r = retrievability(state, slot, specs.get(slot.name), params, search)
        srch = r * delta_filled(slot, params) * slot_value(slot, cov, params) / c_search
        values.append(max(ask, srch))
    return statistics.median(values) if values else 0.0
