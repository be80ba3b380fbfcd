"""``VoIParams``: the value-of-information parameters (design 10.3 / 10.8).

The design's initial values (P(answerable)=0.6, retrievability=0.7, cost_ask=1.0,
cost_search=0.5, synergy 0.15, τ_stop=0.08) are priors: ``core.interview.adaptation`` turns
them into the session's adapted values, ``core.interview.voi`` scores the actions with them, and
the policy and the stop rule read their thresholds here.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.interview.gap import TAU_STALENESS


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
    unanswered_decay: float = 0.5  # the fixed rule when ``adaptive`` is off
    tau_staleness: float = TAU_STALENESS
    top_k: int | None = None  # consider only the k highest gap priorities (None: all)
    focus_temperature: float | None = None  # softmax focus on the top gaps (None: off)
    max_searches_per_turn: int = 5
    adaptive: bool = True  # online estimates (design 10.7 / 10.8); False: the fixed priors
