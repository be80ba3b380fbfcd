"""Generating a customized question set for one ordinance from a verified Golden Question Pool.

The ordinance structure (an input of generation, JSON) says which features the ordinance has::

    {
      "ordinance_id": "k518RG00000022",           # optional; must match the requested id
      "ordinance_name": "○○市情報セキュリティ対策推進条例",  # optional; --name overrides it
      "features": {"penalties": false, "fees": true}
    }

A question is dropped only when one of its ``requires`` features is explicitly ``false``; a
feature left out is unknown and the question is kept (the report lists such features). Without
a structure every question is kept. The reasons for each drop go to the ``GenerationReport``,
never into the set's ``metadata``. When no question remains, generation fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.errors import ContractError, InputError
from core.question_sets.contract import (
    Issue,
    Question,
    QuestionSet,
    canonical_bytes,
    dumps_question_set,
    parse_json_bytes,
    read_bytes,
    summarize,
    write_atomic,
)
from core.question_sets.golden import PLACEHOLDER, GoldenPool

DEFAULT_ORDINANCE_NAME = "この条例"
GENERATED_BY = "soc-workbench"


class GenerationError(InputError):
    """Generation cannot produce a set; ``report`` says why when it got that far."""

    def __init__(self, user_message: str, report: GenerationReport | None = None) -> None:
        super().__init__(user_message)
        self.report = report


# --- ordinance structure -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OrdinanceStructure:
    """Which features the ordinance has (``features``: name -> present?); names are optional."""

    features: dict[str, bool] = field(default_factory=dict)
    ordinance_id: str | None = None
    ordinance_name: str | None = None


def parse_structure(data: Any) -> OrdinanceStructure:
    """An OrdinanceStructure from parsed JSON; ContractError (Japanese, with paths) otherwise."""
    issues: list[Issue] = []
    if not isinstance(data, Mapping):
        issues.append(("", "ルートは JSON オブジェクトである必要があります"))
        raise ContractError(summarize(issues, "条例構造ファイル"), issues)
    for key in ("ordinance_id", "ordinance_name"):
        value = data.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            issues.append((key, "空でない文字列である必要があります"))
    features = data.get("features", {})
    if not isinstance(features, Mapping):
        issues.append(
            ("features", "構造要素名から true / false へのオブジェクトである必要があります")
        )
        features = {}
    for name, present in features.items():
        if not isinstance(present, bool):
            issues.append((f"features.{name}", "true または false である必要があります"))
    if issues:
        raise ContractError(summarize(issues, "条例構造ファイル"), issues)
    return OrdinanceStructure(
        features=dict(features),
        ordinance_id=data.get("ordinance_id"),
        ordinance_name=data.get("ordinance_name"),
    )


def read_structure(path: str | Path) -> OrdinanceStructure:
    return parse_structure(parse_json_bytes(read_bytes(path)))


# --- generation ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExcludedQuestion:
    question_id: str
    category: str
    missing_features: tuple[str, ...]
    reason: str


@dataclass(frozen=True, slots=True)
class GenerationReport:
    """Why the set looks the way it does. Kept apart from the set: never in its metadata."""

    pool_id: str
    pool_sha256: str
    ordinance_id: str
    ordinance_name: str
    question_set_id: str
    generated_at: str
    structure_given: bool
    included: tuple[str, ...]
    excluded: tuple[ExcludedQuestion, ...]
    unspecified_features: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["report_format"] = "question_set_generation_report.v1"
        return {"report_format": data.pop("report_format"), **data}

    def summary_ja(self) -> str:
        text = (
            f"{self.pool_id} の {len(self.included) + len(self.excluded)} 問から "
            f"{len(self.included)} 問を採用、{len(self.excluded)} 問を除外しました。"
        )
        if not self.structure_given:
            text += "（条例構造の指定なし: 全問を採用）"
        elif self.unspecified_features:
            text += f"（構造の指定がない要素: {', '.join(self.unspecified_features)} は「あり」として扱いました）"
        return text


@dataclass(frozen=True, slots=True)
class GenerationResult:
    question_set: QuestionSet
    report: GenerationReport


def default_question_set_id(ordinance_id: str, pool_id: str) -> str:
    return f"cqset-{ordinance_id}-{pool_id}"


def fill_template(template: str, values: Mapping[str, str]) -> str:
    """Replace ``{name}`` placeholders literally (no format-string features)."""
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def generate_question_set(
    pool: GoldenPool,
    ordinance_id: str,
    *,
    ordinance_name: str | None = None,
    structure: OrdinanceStructure | None = None,
    question_set_id: str | None = None,
    now: datetime | None = None,
) -> GenerationResult:
    """Customize ``pool`` for one ordinance; GenerationError when nothing usable remains."""
    if not isinstance(ordinance_id, str) or not ordinance_id.strip():
        raise GenerationError("条例 ID（ordinance_id）を指定してください。")
    if structure is not None and structure.ordinance_id not in (None, ordinance_id):
        raise GenerationError(
            f"条例構造ファイルの ordinance_id「{structure.ordinance_id}」が指定された条例 ID"
            f"「{ordinance_id}」と一致しません。別の条例のファイルではありませんか。"
        )
    name = (ordinance_name or "").strip() or (
        structure.ordinance_name if structure and structure.ordinance_name else None
    )
    name = name or DEFAULT_ORDINANCE_NAME
    features = structure.features if structure is not None else {}
    unknown = [f for f in features if f not in pool.features]
    if unknown:
        raise GenerationError(
            f"条例構造ファイルに {pool.pool_id} に無い構造要素があります: {', '.join(unknown)}"
            f"（使える要素: {', '.join(pool.features)}）"
        )
    set_id = question_set_id
    if set_id is None or not set_id.strip():
        set_id = default_question_set_id(ordinance_id, pool.pool_id)
    stamp = (now or datetime.now(UTC)).isoformat(timespec="seconds")
    values = {"ordinance_name": name}

    included: list[Question] = []
    excluded: list[ExcludedQuestion] = []
    for pq in pool.questions:
        missing = tuple(f for f in pq.requires if features.get(f) is False)
        if missing:
            labels = "、".join(f"{pool.features[f]}（{f}）" for f in missing)
            excluded.append(
                ExcludedQuestion(
                    pq.question_id,
                    pq.category,
                    missing,
                    f"条例構造で「なし」とされた要素を問う: {labels}",
                )
            )
        else:
            included.append(Question(pq.question_id, fill_template(pq.template, values)))
    used = {f for pq in pool.questions for f in pq.requires}
    report = GenerationReport(
        pool_id=pool.pool_id,
        pool_sha256=pool.sha256,
        ordinance_id=ordinance_id,
        ordinance_name=name,
        question_set_id=set_id,
        generated_at=stamp,
        structure_given=structure is not None,
        included=tuple(q.question_id for q in included),
        excluded=tuple(excluded),
        unspecified_features=tuple(f for f in pool.features if f in used and f not in features)
        if structure is not None
        else (),
    )
    if not included:
        raise GenerationError(
            f"条例の構造上、{pool.pool_id} の質問が1件も残りません（{len(excluded)} 問すべて除外）。"
            "質問セットは生成しませんでした。条例構造ファイルを確認してください。",
            report,
        )
    qs = QuestionSet(
        ordinance_id=ordinance_id,
        question_set_id=set_id,
        source_golden_question_pool=pool.pool_id,
        questions=tuple(included),
        metadata={"generated_by": GENERATED_BY, "generated_at": stamp},
    )
    dumps_question_set(qs)  # the result must satisfy the contract (raises ContractError if not)
    return GenerationResult(qs, report)


def report_bytes(report: GenerationReport) -> bytes:
    return canonical_bytes(report.to_dict())


def save_report(report: GenerationReport, path: str | Path) -> Path:
    return write_atomic(path, report_bytes(report))


def default_report_path(out: Path) -> Path:
    """``cqset.json`` -> ``cqset.generation_report.json`` beside it."""
    out = Path(out)
    return out.with_name(f"{out.stem}.generation_report.json")


__all__ = [
    "DEFAULT_ORDINANCE_NAME",
    "ExcludedQuestion",
    "GenerationError",
    "GenerationReport",
    "GenerationResult",
    "OrdinanceStructure",
    "default_question_set_id",
    "default_report_path",
    "fill_template",
    "generate_question_set",
    "parse_structure",
    "read_structure",
    "report_bytes",
    "save_report",
]
