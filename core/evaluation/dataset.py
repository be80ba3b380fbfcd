"""The evaluation dataset ``eval/eval_dataset.json`` (design section 7.1), validated on load.

A case names its category, the query (and, for a follow-up, the conversation before it) and
what a correct answer over the sample runbooks looks like: the files it cites, keywords it
contains, text it must not contain, its flags, a sentence of the expected response and the
danger warning. Every expectation is optional; ``None`` means "not checked", while an empty
``expected_citations`` list means "must cite nothing" (refusals and clarifications).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.errors import ContractError, InputError
from core.schemas.messages import japanese_errors

Category = Literal[
    "normal", "insufficient_evidence", "dangerous", "ambiguous", "conversation", "composite"
]
CATEGORIES: tuple[str, ...] = get_args(Category)
CATEGORY_LABELS: dict[str, str] = {
    "normal": "通常",
    "insufficient_evidence": "根拠不足",
    "dangerous": "危険操作",
    "ambiguous": "曖昧",
    "conversation": "会話継続",
    "composite": "複合",
}
MIN_CASES_PER_CATEGORY = 3
MAX_DATASET_BYTES = 5 * 1024 * 1024


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant"]
    content: str = ""


class ExpectedFlags(BaseModel):
    model_config = ConfigDict(extra="forbid")

    insufficient_evidence: bool | None = None
    dangerous_operation: bool | None = None
    ambiguous_query: bool | None = None

    def given(self) -> dict[str, bool]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


class EvalCase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.\-]+$")
    category: Category
    query: str = Field(min_length=1, max_length=1000)
    expected_citations: list[str] | None = None
    expected_keywords: list[str] = Field(default_factory=list)
    should_not_contain: list[str] = Field(default_factory=list)
    conversation_context: list[Turn] | None = None
    expected_flags: ExpectedFlags = Field(default_factory=ExpectedFlags)
    expected_response_contains: str | list[str] | None = None
    expected_warning: str | None = None
    note: str | None = None  # why the expectation holds, for reviewers

    @field_validator("expected_keywords", "should_not_contain", "expected_citations")
    @classmethod
    def _no_blank_items(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and any(not item.strip() for item in value):
            raise ValueError("空の文字列は指定できません")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> EvalCase:
        if self.category == "conversation" and not self.conversation_context:
            raise ValueError("conversation のケースには conversation_context が必要です")
        context = self.conversation_context or []
        if context and context[0].role != "user":
            raise ValueError("conversation_context は user の発話から始めてください")
        return self

    @property
    def response_contains(self) -> list[str]:
        value = self.expected_response_contains
        if value is None:
            return []
        return [value] if isinstance(value, str) else list(value)

    @property
    def expects_refusal(self) -> bool:
        """The runbooks do not answer this: the pipeline should refuse (insufficient evidence)."""
        flag = self.expected_flags.insufficient_evidence
        return flag if flag is not None else self.category == "insufficient_evidence"

    @property
    def expects_answer(self) -> bool:
        """An answerable case: the answer should cite the expected runbooks."""
        return bool(self.expected_citations) and not self.expects_refusal

    @property
    def expects_danger(self) -> bool | None:
        """Whether the danger banner is expected; None when the case does not say."""
        if self.expected_flags.dangerous_operation is not None:
            return self.expected_flags.dangerous_operation
        if self.expected_warning:
            return True
        return None


class EvalDataset(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: str = Field(min_length=1)
    created_at: str = Field(min_length=1)
    description: str | None = None
    test_cases: list[EvalCase] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> EvalDataset:
        dup = [k for k, n in Counter(c.id for c in self.test_cases).items() if n > 1]
        if dup:
            raise ValueError(f"id が重複しています: {', '.join(dup)}")
        return self

    def by_category(self) -> dict[str, int]:
        counts = Counter(c.category for c in self.test_cases)
        return {c: counts.get(c, 0) for c in CATEGORIES}

    def coverage_warnings(self) -> list[str]:
        """Japanese warnings for categories with fewer than the required cases."""
        return [
            f"カテゴリ「{CATEGORY_LABELS[c]}」（{c}）のケースが {n} 件です"
            f"（{MIN_CASES_PER_CATEGORY} 件以上を推奨）。"
            for c, n in self.by_category().items()
            if n < MIN_CASES_PER_CATEGORY
        ]


def _issues(exc: ValidationError) -> list[tuple[str, str]]:
    return japanese_errors(exc, camel=False)


def parse_dataset(data: object, label: str = "評価データセット") -> EvalDataset:
    try:
        return EvalDataset.model_validate(data)
    except ValidationError as exc:
        issues = _issues(exc)
        path, message = issues[0]
        summary = (
            f"{label}が不正です: {path}: {message}" if path else f"{label}が不正です: {message}"
        )
        if len(issues) > 1:
            summary += f"（ほか{len(issues) - 1}件）"
        raise ContractError(summary, issues) from exc


def read_dataset_bytes(path: str | Path) -> bytes:
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise InputError(f"評価データセット「{p}」が見つかりません。") from exc
    if size > MAX_DATASET_BYTES:
        raise InputError(f"評価データセット「{p.name}」が大きすぎます（{size:,} バイト）。")
    try:
        return p.read_bytes()
    except OSError as exc:
        raise InputError(f"評価データセット「{p}」を読み込めません。", detail=str(exc)) from exc


def load_dataset(path: str | Path) -> tuple[EvalDataset, str]:
    """The validated dataset and the sha256 of its bytes. Raises a Japanese InputError."""
    raw = read_dataset_bytes(path)
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(f"評価データセット「{Path(path).name}」は UTF-8 ではありません。") from exc
    except json.JSONDecodeError as exc:
        raise InputError(
            f"評価データセット「{Path(path).name}」を JSON として読み込めません"
            f"（{exc.lineno} 行 {exc.colno} 列）。"
        ) from exc
    return parse_dataset(data, f"評価データセット「{Path(path).name}」"), hashlib.sha256(
        raw
    ).hexdigest()
