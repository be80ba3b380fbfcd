"""Belief update in logit space with the CI shrink (design 10.4).

``b' = σ(logit(b) + Δ)``. Δ comes from the evidence features (cosine, source_trust, recency,
logic_ok, redundancy, polarity_sign) either heuristically — weighted mean of the features,
signed by polarity (support / refute) and scaled — or from a calibrated logistic regression
(``Δ = intercept + Σ w_i·f_i``). The credible interval shrinks: ``width' = width / (1 + |Δ|)``,
never below 0.05, centred on ``b'`` and clipped to [0, 1].
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

MIN_WIDTH = 0.05
_EPS = 1e-6


@dataclass(frozen=True, slots=True)
class EvidenceFeatures:
    cosine: float = 0.0  # similarity of the evidence to the hypothesis
    source_trust: float = 1.0
    recency: float = 1.0
    logic_ok: float = 1.0  # 0 when the evidence contradicts what is known
    redundancy: float = 0.0  # 1 when it repeats what is known
    polarity_sign: int = 1  # +1 supports, -1 refutes


@dataclass(frozen=True, slots=True)
class BeliefWeights:
    """The design's initial weights; ``mode="lr"`` uses them as calibrated coefficients."""

    cosine: float = 0.6
    source_trust: float = 0.3
    recency: float = 0.2
    logic_ok: float = 0.4
    redundancy: float = -0.2
    scale: float = 2.0
    intercept: float = 0.0
    mode: str = "heuristic"  # heuristic | lr
    extra: dict[str, float] = field(default_factory=dict)


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def logit(p: float) -> float:
    p = min(1.0 - _EPS, max(_EPS, p))
    return math.log(p / (1.0 - p))


def delta(features: EvidenceFeatures, weights: BeliefWeights | None = None) -> float:
    w = weights or BeliefWeights()
    terms = [
        (w.cosine, features.cosine),
        (w.source_trust, features.source_trust),
        (w.recency, features.recency),
        (w.logic_ok, features.logic_ok),
        (w.redundancy, features.redundancy),
    ]
    if w.mode == "lr":
        return w.intercept + sum(wi * fi for wi, fi in terms) * features.polarity_sign
    norm = sum(abs(wi) for wi, _ in terms) or 1.0
    mean = sum(wi * fi for wi, fi in terms) / norm
    return (1 if features.polarity_sign >= 0 else -1) * w.scale * abs(mean)


def update(belief: float, ci: tuple[float, float], d: float) -> tuple[float, tuple[float, float]]:
    """The updated belief and its credible interval."""
    new_belief = sigmoid(logit(belief) + d)
    width = max(MIN_WIDTH, (ci[1] - ci[0]) / (1.0 + abs(d)))
    low = max(0.0, new_belief - width / 2)
    high = min(1.0, new_belief + width / 2)
    return round(new_belief, 6), (round(low, 6), round(high, 6))


def bigram_cosine(a: str, b: str) -> float:
    """Character-bigram cosine: a cheap, offline similarity for Japanese text."""

    def grams(s: str) -> dict[str, int]:
        s = "".join(s.split())
        out: dict[str, int] = {}
        for i in range(len(s) - 1):
            out[s[i : i + 2]] = out.get(s[i : i + 2], 0) + 1
        return out

    ga, gb = grams(a), grams(b)
    if not ga or not gb:
        return 0.0
    dot = sum(v * gb.get(k, 0) for k, v in ga.items())
    return dot / math.sqrt(sum(v * v for v in ga.values()) * sum(v * v for v in gb.values()))
