"""Score fusion: min-max-normalized weighted sum (the default) and reciprocal rank fusion.

Each strategy contributes a ranked list of (id, raw score). Weighted fusion normalizes every
list to [0, 1] by min-max over its own candidates and sums with the strategy weights (weights of
strategies that did not run are left out and the rest renormalized). RRF sums
``weight / (k + rank)``; with ``normalize`` the result is divided by its maximum possible value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

Ranked = Sequence[tuple[str, float]]


def minmax(ranked: Ranked) -> dict[str, float]:
    """Min-max normalize one strategy's scores over its candidates (a lone hit gets 1.0)."""
    if not ranked:
        return {}
    scores = [s for _, s in ranked]
    lo, hi = min(scores), max(scores)
    if hi - lo <= 1e-12:
        return {key: (1.0 if hi > 0 else 0.0) for key, _ in ranked}
    return {key: (s - lo) / (hi - lo) for key, s in ranked}


def _active_weights(
    rankings: Mapping[str, Ranked], weights: Mapping[str, float]
) -> dict[str, float]:
    active = {name: weights.get(name, 0.0) for name in rankings if weights.get(name, 0.0) > 0}
    total = sum(active.values())
    if total <= 0:  # strategies chosen explicitly without weight: count them equally
        return {name: 1.0 / len(rankings) for name in rankings} if rankings else {}
    return {name: w / total for name, w in active.items()}


def weighted_fusion(
    rankings: Mapping[str, Ranked], weights: Mapping[str, float]
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """(combined score per id, normalized score per strategy per id)."""
    active = _active_weights(rankings, weights)
    normalized = {name: minmax(ranked) for name, ranked in rankings.items()}
    combined: dict[str, float] = {}
    for name, w in active.items():
        for key, score in normalized[name].items():
            combined[key] = combined.get(key, 0.0) + w * score
    return combined, normalized


def rrf_fusion(
    rankings: Mapping[str, Ranked],
    weights: Mapping[str, float],
    k: int = 60,
    normalize: bool = True,
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """(RRF score per id, per-strategy normalized score) with weighted reciprocal ranks."""
    active = _active_weights(rankings, weights)
    combined: dict[str, float] = {}
    for name, w in active.items():
        for rank, (key, _) in enumerate(rankings[name], start=1):
            combined[key] = combined.get(key, 0.0) + w / (k + rank)
    if normalize and combined:
        best_possible = sum(w / (k + 1) for w in active.values())
        combined = {key: min(1.0, s / best_possible) for key, s in combined.items()}
    normalized = {name: minmax(ranked) for name, ranked in rankings.items()}
    return combined, normalized
