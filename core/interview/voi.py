"""Value of information per slot and action (design 2.3 / 10.3, EVSI approximation).

    value_s     = importance_s × critical_weight + coverage_bonus_s
    Δfilled_s   = min(1 − filled_ratio_s, quality_expectation)      (0 once the slot is filled)
    VoI_ask_s   = P(answerable_s) × Δfilled_s × value_s / cost_ask
    VoI_search_s= retrievability_s × Δfilled_s × value_s / cost_search
    bundle S    : cost_ask(S) = base + Σ marginal_s − synergy × Σ marginal_s,
                  VoI_ask(S) = Σ P_s × Δ_s × value_s / cost_ask(S)

Initial parameters are the design's: P(answerable)=0.6, retrievability=0.7, cost_ask=1.0,
cost_search=0.5, synergy 0.15, τ_stop=0.08. P(answerable) halves each time the user could not
answer the slot, and retrievability drops to 0 once the slot was searched (design 10.8, online
estimates). ``critical_weight`` is 1.0 for critical slots and 0.5 for auxiliary ones, and the
coverage bonus (0.2 × the critical coverage still missing) goes to critical slots only.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from core.interview.domains import SlotSpec
from core.interview.gap import TAU_STALENESS, priority
from core.interview.slots import Slot, coverage
from core.interview.state import ActionScore, SessionState


@dataclass(frozen=True, slots=True)
class VoIParams:
    p_answerable: float = 0.6
    retrievability: float = 0.7
    cost_ask: float = 1.0
    cost_search: float = 0.5
    quality_expectation: float = 0.8
    critical_weight: float = 1.0
    auxiliary_weight: float = 0.5
    coverage_bonus: float = 0.2
    coverage_target: float = 0.85
    bundle_base: float = 0.3
    synergy: float = 0.15
    max_bundle: int = 2
    tau_stop: float = 0.08
    unanswered_decay: float = 0.5
    tau_staleness: float = TAU_STALENESS
    top_k: int | None = None  # consider only the k highest gap priorities (None: all)
    max_searches_per_turn: int = 5


def slot_value(slot: Slot, cov: float, params: VoIParams) -> float:
    weight = params.critical_weight if slot.critical else params.auxiliary_weight
    bonus = params.coverage_bonus * (1.0 - cov) if slot.critical else 0.0
    return slot.importance * weight + bonus


def delta_filled(slot: Slot, params: VoIParams) -> float:
    if slot.filled:
        return 0.0
    return min(1.0 - slot.filled_ratio, params.quality_expectation)


def p_answerable(slot: Slot, params: VoIParams) -> float:
    return params.p_answerable * params.unanswered_decay**slot.unanswered_count


def retrievability(slot: Slot, spec: SlotSpec | None, params: VoIParams, search: bool) -> float:
    if not search or spec is None or not spec.searchable or slot.search_attempts:
        return 0.0
    return params.retrievability


def _ask(slot: Slot, cov: float, params: VoIParams) -> tuple[float, float, float]:
    gain = p_answerable(slot, params) * delta_filled(slot, params)
    value = slot_value(slot, cov, params)
    return gain * value / params.cost_ask, gain, value


def bundle_cost(n: int, params: VoIParams) -> float:
    """cost_ask(S) = base + Σ marginal − synergy(S); a single slot costs ``cost_ask``."""
    marginal = (params.cost_ask - params.bundle_base) * n
    synergy = params.synergy * marginal if n > 1 else 0.0
    return params.bundle_base + marginal - synergy


def score_actions(
    state: SessionState,
    specs: dict[str, SlotSpec],
    params: VoIParams,
    *,
    now: float,
    search: bool = False,
) -> list[ActionScore]:
    """Every candidate action with its VoI, best first."""
    cov = coverage(state.slots)
    contested = {c.slot_name: c for c in state.open_contradictions()}
    open_slots = [s for s in state.slots.values() if not s.filled or s.name in contested]
    prio = {s.name: priority(s, now, params.tau_staleness) for s in open_slots}
    if params.top_k:
        keep = sorted(open_slots, key=lambda s: -prio[s.name])[: params.top_k]
        open_slots = [s for s in open_slots if s in keep or s.name in contested]
    actions: list[ActionScore] = []
    singles: dict[str, ActionScore] = {}
    for slot in open_slots:
        if slot.name in contested:
            gain = p_answerable(slot, params) * (1.0 - slot.filled_ratio)
            value = slot_value(slot, cov, params)
            actions.append(
                ActionScore(
                    action="ask",
                    slots=[slot.name],
                    voi=gain * value / params.cost_ask,
                    gain=gain,
                    value=value,
                    cost=params.cost_ask,
                    priority=prio[slot.name],
                    clarify=contested[slot.name].id,
                )
            )
            continue
        voi, gain, value = _ask(slot, cov, params)
        ask = ActionScore(
            action="ask",
            slots=[slot.name],
            voi=voi,
            gain=gain,
            value=value,
            cost=params.cost_ask,
            priority=prio[slot.name],
        )
        singles[slot.name] = ask
        actions.append(ask)
        r = retrievability(slot, specs.get(slot.name), params, search)
        if r > 0:
            s_gain = r * delta_filled(slot, params)
            actions.append(
                ActionScore(
                    action="search",
                    slots=[slot.name],
                    voi=s_gain * value / params.cost_search,
                    gain=s_gain,
                    value=value,
                    cost=params.cost_search,
                    priority=prio[slot.name],
                )
            )
    groups: dict[str, list[ActionScore]] = {}
    for name, ask in singles.items():
        spec = specs.get(name)
        if spec and spec.group and ask.voi > 0:
            groups.setdefault(spec.group, []).append(ask)
    for members in groups.values():
        if len(members) < 2:
            continue
        chosen = sorted(members, key=lambda a: -a.voi)[: params.max_bundle]
        cost = bundle_cost(len(chosen), params)
        total = sum(a.gain * a.value for a in chosen)
        actions.append(
            ActionScore(
                action="ask",
                slots=[a.slots[0] for a in chosen],
                voi=total / cost,
                gain=sum(a.gain for a in chosen),
                value=sum(a.value for a in chosen),
                cost=cost,
                priority=max(a.priority for a in chosen),
            )
        )
    return sorted(
        actions, key=lambda a: (-round(a.voi, 9), a.clarify is None, -a.priority, a.slots)
    )


def median_voi(
    state: SessionState, specs: dict[str, SlotSpec], params: VoIParams, *, search: bool = False
) -> float:
    """KPI voi_median_trend: the median over all slots of max(VoI_ask, VoI_search) (0 if filled)."""
    cov = coverage(state.slots)
    values = []
    for slot in state.slots.values():
        ask = _ask(slot, cov, params)[0]
        r = retrievability(slot, specs.get(slot.name), params, search)
        srch = r * delta_filled(slot, params) * slot_value(slot, cov, params) / params.cost_search
        values.append(max(ask, srch))
    return statistics.median(values) if values else 0.0
