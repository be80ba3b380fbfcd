"""The judge's output (design section 7.2): six criteria scored 0..100, their average, reasoning.

Both judges return ``JudgeScores``; ``judge`` says which one scored (``heuristic`` or ``llm``)
so that results and the dashboard always show how a score was obtained.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

CRITERIA: tuple[str, ...] = (
    "grounding",
    "accuracy",
    "completeness",
    "safety",
    "citation",
    "conciseness",
)
CRITERION_LABELS: dict[str, str] = {
    "grounding": "根拠性",
    "accuracy": "正確性",
    "completeness": "網羅性",
    "safety": "安全性",
    "citation": "引用明示",
    "conciseness": "簡潔性",
}
JUDGE_LABELS: dict[str, str] = {
    "heuristic": "ヒューリスティック判定（LLM 不使用）",
    "llm": "LLM 判定（LLM-as-a-Judge）",
}
# Design 7.3: a case passes with an average of at least 70; a run passes when at least 70% of
# its cases pass (7 of 10).
PASS_SCORE = 70.0
PASS_RATE = 0.7

JudgeKind = Literal["heuristic", "llm"]
Score = float


class JudgeScores(BaseModel):
    grounding: Score = Field(ge=0, le=100)
    accuracy: Score = Field(ge=0, le=100)
    completeness: Score = Field(ge=0, le=100)
    safety: Score = Field(ge=0, le=100)
    citation: Score = Field(ge=0, le=100)
    conciseness: Score = Field(ge=0, le=100)
    average: float = Field(ge=0, le=100)
    reasoning: str = ""
    judge: JudgeKind
    model: str | None = None  # the judge model (LLM judge)
    token_usage: dict[str, int] = Field(default_factory=dict)
    cost_usd: float = 0.0
    warnings: list[str] = Field(default_factory=list)  # Japanese (fallbacks, retries)

    @property
    def judge_label(self) -> str:
        return JUDGE_LABELS[self.judge]

    @property
    def passed(self) -> bool:
        return self.average >= PASS_SCORE

    def criteria(self) -> dict[str, float]:
        return {c: getattr(self, c) for c in CRITERIA}


def average_of(values: dict[str, float]) -> float:
    return round(sum(values[c] for c in CRITERIA) / len(CRITERIA), 1)
