"""The two-stage stop (design 2.3 / 10.3) plus the user abort and the turn budget.

1. hard stop (``kpi_met``): critical-slot coverage >= target (0.85) and no critical gap;
2. soft stop (``voi_low``): max over actions of VoI < τ_stop (0.08), with the missing slots;
3. ``user_abort`` when the user says so, ``timeout`` when the turn budget is used up.
"""

from __future__ import annotations

from core.interview.gap import critical_gaps, missing_slots
from core.interview.params import VoIParams
from core.interview.slots import coverage
from core.interview.state import STOP_LABELS, Decision, SessionState, StopInfo


def _info(state: SessionState, reason: str, now: float, max_voi: float | None = None) -> StopInfo:
    return StopInfo(
        reason=reason,  # type: ignore[arg-type]
        label=STOP_LABELS[reason],
        missing=missing_slots(state),
        coverage=round(coverage(state.slots), 4),
        turn=state.turn,
        ts=now,
        max_voi=max_voi,
    )


def hard_stop(state: SessionState, params: VoIParams, now: float) -> StopInfo | None:
    if coverage(state.slots) >= params.coverage_target and not critical_gaps(state):
        return _info(state, "kpi_met", now)
    return None


def budget_stop(state: SessionState, budget: int, now: float) -> StopInfo | None:
    if state.turn >= budget:
        return _info(state, "timeout", now)
    return None


def soft_stop(
    state: SessionState, decision: Decision, params: VoIParams, now: float
) -> StopInfo | None:
    if decision.action == "none" or decision.max_voi < params.tau_stop:
        return _info(state, "voi_low", now, decision.max_voi)
    return None


def abort_stop(state: SessionState, now: float) -> StopInfo:
    return _info(state, "user_abort", now)
