"""Question similarity for duplicate detection (QCheck DUP and the KPI duplicate_rate):
a difflib ratio >= θ1 (0.8) or a character 3-gram Jaccard distance <= θ2 (0.3)."""

from __future__ import annotations

import difflib

from core.interview.normalizers import normalize

DUP_RATIO = 0.8  # θ1: difflib ratio
DUP_NGRAM_DISTANCE = 0.3  # θ2: Jaccard distance of character 3-grams


def _grams(text: str, n: int = 3) -> set[str]:
    s = "".join(normalize(text).split())
    return {s[i : i + n] for i in range(max(1, len(s) - n + 1))}


def similarity(a: str, b: str) -> tuple[float, float]:
    """(difflib ratio, Jaccard distance of character 3-grams)."""
    na, nb = normalize(a), normalize(b)
    ratio = difflib.SequenceMatcher(None, na, nb).ratio()
    ga, gb = _grams(na), _grams(nb)
    union = ga | gb
    distance = 1.0 - (len(ga & gb) / len(union) if union else 1.0)
    return ratio, distance


def is_duplicate(core: str, asked: list[str]) -> bool:
    for previous in asked:
        ratio, distance = similarity(core, previous)
        if ratio >= DUP_RATIO or distance <= DUP_NGRAM_DISTANCE:
            return True
    return False
