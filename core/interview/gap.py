"""Gap analysis (Stage05, design 2.2 / 10.2).

``priority_s = importance_s × (1 − filled_ratio_s) × staleness_s`` with
``staleness_s = 1 − exp(−Δt_s / τ)``, Δt_s the time since the slot was last filled (a slot
never filled is fully stale). ``share`` spreads the priorities with a softmax at temperature T
(the design's "concentrate on the top k"). A critical gap is a critical slot that is not even
provisionally filled (below ``C_MIN``) or one re-opened by a contradiction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.interview.slots import C_MIN, Slot
from core.interview.state import SessionState

TAU_STALENESS = 60.0  # seconds
SOFTMAX_T = 0.2


@dataclass(frozen=True, slots=True)
class Gap:
    slot: str
    label: str
    importance: float
    filled_ratio: float
    staleness: float
    priority: float
    share: float
    critical: bool
    filled: bool


def staleness(last_filled_ts: float | None, now: float, tau: float = TAU_STALENESS) -> float:
    if last_filled_ts is None:
        return 1.0
    dt = max(0.0, now - last_filled_ts)
    return 1.0 - math.exp(-dt / max(tau, 1e-9))


def priority(slot: Slot, now: float, tau: float = TAU_STALENESS) -> float:
    return slot.importance * (1.0 - slot.filled_ratio) * staleness(slot.last_filled_ts, now, tau)


def analyze_gaps(
    state: SessionState, now: float, tau: float = TAU_STALENESS, temperature: float = SOFTMAX_T
) -> list[Gap]:
    """Every slot's gap, highest priority first (filled slots last, priority 0)."""
    raw = []
    for slot in state.slots.values():
        p = 0.0 if slot.filled else priority(slot, now, tau)
        raw.append((slot, p, staleness(slot.last_filled_ts, now, tau)))
    open_ps = [p for _, p, _ in raw if p > 0]
    top = max(open_ps, default=0.0)
    z = sum(math.exp((p - top) / temperature) for p in open_ps) or 1.0
    gaps = [
        Gap(
            slot=s.name,
            label=s.label or s.name,
            importance=s.importance,
            filled_ratio=s.filled_ratio,
            staleness=round(st, 4),
            priority=round(p, 4),
            share=round(math.exp((p - top) / temperature) / z, 4) if p > 0 else 0.0,
            critical=s.critical,
            filled=s.filled,
        )
        for s, p, st in raw
    ]
    return sorted(gaps, key=lambda g: (-g.priority, -g.importance, g.slot))


def critical_gaps(state: SessionState) -> list[str]:
    contested = {c.slot_name for c in state.open_contradictions()}
    return [
        name
        for name, slot in state.slots.items()
        if slot.critical and (slot.filled_ratio < C_MIN or name in contested)
    ]


def missing_slots(state: SessionState) -> list[str]:
    """Unfilled slots, critical ones first."""
    slots = [s for s in state.slots.values() if not s.filled]
    return [s.name for s in sorted(slots, key=lambda s: (not s.critical, -s.importance))]
