"""Slot (design 10.1) and how full it is (design 10.2).

``filled_ratio = clamp(w_conf·confidence + w_norm·normalized_match + w_src·source_trust, 0, 1)``
and ``filled`` is derived: ``filled_ratio >= THETA_FILLED``. A slot between ``C_MIN`` and
``THETA_FILLED`` is provisionally filled (a follow-up question is preferred).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from core.interview.domains import SlotSpec

THETA_FILLED = 0.75
C_MIN = 0.5
W_CONF, W_NORM, W_SRC = 0.25, 0.6, 0.15

SourceKind = Literal["user", "retrieval", "model_infer", "mixed"]
SOURCE_TRUST: dict[str, float] = {"user": 1.0, "retrieval": 0.7, "model_infer": 0.5, "mixed": 0.85}

# Confidence of a value by how it was obtained.
CONF_TARGETED = 1.0  # the answer to a question about this slot
CONF_BUNDLED = 0.85  # one part of the answer to a bundled question
CONF_INCIDENTAL = 0.5  # mentioned while answering another question


class Slot(BaseModel):
    """One slot of a session's SlotRegistry (the design's canonical Slot, plus counters)."""

    model_config = ConfigDict(extra="ignore")

    name: str
    description: str
    type: str | None = None
    importance: float = Field(ge=0.0, le=1.0)  # effective: adapted each turn (design 10.7)
    filled_ratio: float = Field(default=0.0, ge=0.0, le=1.0)
    last_filled_ts: float | None = None
    evidence_ids: list[str] = Field(default_factory=list)
    source_kind: SourceKind = "user"
    # operational extras (not in the design's schema, needed by VoI and the UI)
    label: str = ""
    critical: bool = False
    asked_count: int = 0
    unanswered_count: int = 0
    search_attempts: int = 0
    base_importance: float = Field(default=0.0, ge=0.0, le=1.0)  # the domain's importance

    @model_validator(mode="before")
    @classmethod
    def _base(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("base_importance") is None:
            data = {**data, "base_importance": data.get("importance", 0.0)}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def filled(self) -> bool:
        return self.filled_ratio >= THETA_FILLED

    @property
    def provisional(self) -> bool:
        return C_MIN <= self.filled_ratio < THETA_FILLED


def slot_from_spec(spec: SlotSpec) -> Slot:
    return Slot(
        name=spec.name,
        description=spec.description,
        type=spec.type,
        importance=spec.importance,
        label=spec.label,
        critical=spec.critical,
    )


def filled_ratio(confidence: float, normalized_match: float, source_kind: str) -> float:
    value = (
        W_CONF * confidence + W_NORM * normalized_match + W_SRC * SOURCE_TRUST.get(source_kind, 0.5)
    )
    return round(min(1.0, max(0.0, value)), 4)


def combine_sources(kinds: list[str]) -> SourceKind:
    distinct = set(kinds)
    if not distinct:
        return "user"
    if len(distinct) == 1:
        return distinct.pop()  # type: ignore[return-value]
    return "mixed"


def coverage(slots: dict[str, Slot]) -> float:
    """Critical-slot coverage: filled critical slots / critical slots (KPI slot_coverage)."""
    critical = [s for s in slots.values() if s.critical]
    if not critical:
        return 1.0
    return sum(1 for s in critical if s.filled) / len(critical)
