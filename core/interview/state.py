"""SessionState: everything one interview knows (design 10.1), persisted after every turn.

The design's fields come first (user_id, topic, language, messages, goal_kind, slots — the
SlotRegistry —, hypothesis, last_question, last_supports, belief_updated, created_at); the
rest is what the turn loop needs to resume exactly where it stopped (the pending question's
target slots, facts and approvals, contradictions, the question and VoI logs, the stop, the
measurements behind the adapted VoI parameters).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.interview.domains import GoalKind, SlotSpec
from core.interview.slots import Slot, SourceKind

StopReason = Literal["kpi_met", "voi_low", "timeout", "user_abort"]
STOP_LABELS: dict[str, str] = {
    "kpi_met": "重要項目がそろいました（ハード停止）",
    "voi_low": "これ以上の質問の価値が小さくなりました（ソフト停止）",
    "timeout": "ターン数の上限に達しました",
    "user_abort": "ユーザーが中断しました",
}


class Adaptation(BaseModel):
    """What the session measured (persisted with the session, in every WAL snapshot)."""

    model_config = ConfigDict(extra="ignore")

    answer_ema_s: float | None = None
    answer_samples: int = 0
    search_ema_s: float | None = None
    search_samples: int = 0
    recent: list[bool] = Field(default_factory=list)  # last answers, True = unanswered
    qpp: dict[str, float] = Field(default_factory=dict)  # slot -> QPP of its last search
    filled: list[str] = Field(default_factory=list)  # slots filled at the last update
    importance_turn: int = 0  # the turn of the last importance update (once per turn)


class Message(BaseModel):
    timestamp: str
    question: str | None
    answer: str
    turn: int = 0
    targets: list[str] = Field(default_factory=list)
    kind: str = "content"
    language: str = "Japanese"


class Hypothesis(BaseModel):
    id: str
    text: str
    belief: float = Field(default=0.5, ge=0.0, le=1.0)
    belief_ci: tuple[float, float] = (0.0, 1.0)
    action_cost: float = 0.0
    slots: list[str] = Field(default_factory=list)


class Fact(BaseModel):
    """A value of a slot with its provenance (design 12.1 Fact, plus the parsed fields)."""

    id: str
    text: str
    belief: float = Field(default=0.5, ge=0.0, le=1.0)
    impact: Literal["normal", "critical"] = "normal"
    status: Literal["pending", "confirmed", "rejected"] = "confirmed"
    slot_name: str
    fields: dict[str, Any] = Field(default_factory=dict)
    norm: dict[str, Any] = Field(default_factory=dict)  # comparable values of the fields
    items: list[dict[str, Any]] = Field(default_factory=list)
    rejected_fields: list[str] = Field(default_factory=list)  # lost a contradiction check
    mode: str = "targeted"  # targeted | bundled | incidental | topic | retrieval | inferred | llm
    confidence: float = 1.0
    normalized_match: float = 0.0
    source_kind: SourceKind = "user"
    provenance: str = ""
    turn: int = 0
    ts: float = 0.0
    superseded_by: str | None = None
    is_none: bool = False


class Approval(BaseModel):
    id: str
    fact_id: str
    decision: Literal["pending", "confirmed", "rejected"] = "pending"
    approver: str | None = None
    ts: float | None = None


class Contradiction(BaseModel):
    id: str
    slot_name: str
    field: str
    old_value: str
    new_value: str
    old_fact_id: str
    new_fact_id: str
    turn: int
    resolved: bool = False
    resolution: str | None = None


class ActionScore(BaseModel):
    action: Literal["ask", "search"]
    slots: list[str]
    voi: float
    gain: float
    value: float
    cost: float
    priority: float = 0.0
    clarify: str | None = None  # contradiction id for a clarification question
    prob: float = 0.0  # the adapted P(answerable) (ask) or retrievability (search)


class Decision(BaseModel):
    action: Literal["ask", "search", "none"]
    slots: list[str] = Field(default_factory=list)
    voi: float = 0.0
    reason: str = ""
    candidates: list[ActionScore] = Field(default_factory=list)
    max_voi: float = 0.0
    median_voi: float = 0.0
    policy: str = "heuristic_voi"
    clarify: str | None = None
    adapted: dict[str, Any] = Field(default_factory=dict)  # the online estimates (10.7 / 10.8)


class QCheckResult(BaseModel):
    specificity: float
    tacit_power: float
    status: Literal["ok", "warn", "ng", "dup", "ux"]
    reasons: list[str] = Field(default_factory=list)
    regenerated: bool = False
    fallback: bool = False
    compressed: bool = False
    appended_criterion: bool = False


class QCheckEvent(BaseModel):
    """One generated candidate and its verdict (KPI qcheck_fail_rate = failed / generated)."""

    turn: int
    slots: list[str]
    text: str
    status: str
    reasons: list[str] = Field(default_factory=list)
    failed: bool = False


class QuestionRecord(BaseModel):
    turn: int
    ts: float
    text: str
    core: str  # without the acknowledgement preface: what duplicates are checked on
    slots: list[str]
    action: str
    voi: float
    source: str  # template | followup | bundle | clarify | llm | fallback | infer
    qcheck: QCheckResult
    filled_at_ask: list[str] = Field(default_factory=list)


class VoITrace(BaseModel):
    turn: int
    action: str
    slots: list[str]
    voi: float
    median_voi: float
    max_voi: float


class StopInfo(BaseModel):
    reason: StopReason
    label: str
    missing: list[str] = Field(default_factory=list)
    coverage: float = 0.0
    turn: int = 0
    ts: float = 0.0
    max_voi: float | None = None


class SessionState(BaseModel):
    model_config = ConfigDict(extra="ignore")

    session_id: str
    user_id: str
    topic: str
    language: Literal["Japanese", "English"] = "Japanese"
    messages: list[Message] = Field(default_factory=list)
    goal_kind: GoalKind
    slots: dict[str, Slot]
    hypothesis: Hypothesis
    last_question: str | None = None
    last_supports: list[str] = Field(default_factory=list)
    belief_updated: bool = False
    created_at: str
    # --- operational state ------------------------------------------------------------
    status: Literal["active", "stopped"] = "active"
    turn: int = 0
    updated_at: str = ""
    policy: str = "heuristic_voi"
    pending_targets: list[str] = Field(default_factory=list)
    pending_clarify: str | None = None
    facts: dict[str, Fact] = Field(default_factory=dict)
    approvals: dict[str, Approval] = Field(default_factory=dict)
    contradictions: list[Contradiction] = Field(default_factory=list)
    questions: list[QuestionRecord] = Field(default_factory=list)
    qcheck_log: list[QCheckEvent] = Field(default_factory=list)
    voi_trace: list[VoITrace] = Field(default_factory=list)
    last_decision: Decision | None = None
    stop: StopInfo | None = None
    document: str | None = None
    extra_slots: list[SlotSpec] = Field(default_factory=list)  # proposed by the LLM (Stage04)
    adaptation: Adaptation = Field(default_factory=Adaptation)  # online estimates (10.7 / 10.8)
    warnings: list[str] = Field(default_factory=list)
    version: int = 0  # the store's row version (optimistic concurrency)

    def current_facts(self, slot_name: str) -> list[Fact]:
        """The slot's live facts (not superseded, not rejected), oldest first."""
        slot = self.slots.get(slot_name)
        if slot is None:
            return []
        out = []
        for fid in slot.evidence_ids:
            fact = self.facts.get(fid)
            if fact and fact.superseded_by is None and fact.status != "rejected":
                out.append(fact)
        return out

    def open_contradictions(self) -> list[Contradiction]:
        return [c for c in self.contradictions if not c.resolved]
