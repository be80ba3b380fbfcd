"""The two-stage stop (design 2.3 / 10.3) plus the user abort and the turn budget.

1. hard stop (``kpi_met``): critical-slot coverage >= target (0.85), no critical gap, and every
   slot the domain's ``stop_requires`` names settled: filled, or asked and left unanswered
   (``UNANSWERED_SETTLES`` times), so that the interview never stops without having asked;
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


UNANSWERED_SETTLES = 2


def unsettled(state: SessionState, required: list[str] | tuple[str, ...]) -> list[str]:
    """The required slots neither filled nor given up on by the user."""
    out = []
    for name in required:
        slot = state.slots.get(name)
        if slot is not None and not slot.filled and slot.unanswered_count < UNANSWERED_SETTLES:
            out.append(name)
    return out


def hard_stop(
    state: SessionState,
    params: VoIParams,
    now: float,
    required: list[str] | tuple[str, ...] = (),
) -> StopInfo | None:
    if (
        coverage(state.slots) >= params.coverage_target
        and not critical_gaps(state)
        and not unsettled(state, required)
    ):
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
