"""The search contract: ``SearchQuery`` in, ``SearchResult`` out (seed: search-schemas.md, v1.0.0).

A port of the seed's Zod schemas to Pydantic v2. JSON uses the contract's camelCase names
(``fileIds``, ``minRelevance``); Python attributes are snake_case. Both spellings are accepted on
input, and ``model_dump()`` / ``model_dump_json()`` emit camelCase.

Semantics follow Zod, not Pydantic's lax defaults: strings, numbers and booleans are not coerced
from one another, a field without a default is required even when it is nullable, and unknown keys
are dropped. Every validation message is Japanese: ``validate_contract`` raises
``core.errors.ContractError`` whose ``errors`` are ``(camelCase path, message)`` pairs.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Self, TypeVar

from pydantic import (
    AfterValidator,
    AllowInfNan,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError, PydanticKnownError

from core.errors import ContractError
from core.schemas.messages import japanese_errors

# --- version metadata (seed section 5) ---------------------------------------------------------

SCHEMA_VERSION = "1.0.0"


@dataclass(frozen=True, slots=True)
class SchemaVersionInfo:
    version: str
    release_date: str
    changes: tuple[str, ...]


SCHEMA_VERSION_INFO = SchemaVersionInfo(
    version=SCHEMA_VERSION,
    release_date="2025-12-18",
    changes=(
        "初版リリース",
        "全25型のスキーマ定義",
        "カスタムバリデーション（searchWeights、dateRange）",
    ),
)
SUPPORTED_SCHEMA_VERSIONS: tuple[str, ...] = (SCHEMA_VERSION,)

# --- primitive field types (Zod semantics: no coercion between str / number / bool) ----------


def _integral_float_to_int(value: object) -> object:
    # JSON has one number type: 20.0 is an integer to Zod's .int(), so accept it as 20.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _array_to_list(value: object) -> object:
    # The seed's Float32Array: accept numpy (or any array with .tolist()) as well as lists.
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and not isinstance(value, list | tuple):
        return tolist()
    return value


def _reject_numeric_datetime(value: object) -> object:
    # Zod's z.date() takes no epoch numbers; in JSON a date is an ISO 8601 string.
    if isinstance(value, int | float):
        raise PydanticKnownError("datetime_type")
    return value


def _assume_utc(value: datetime) -> datetime:
    # A JavaScript Date is an instant and new Date("2024-01-01") is UTC midnight: read naive
    # datetimes as UTC so that any two values compare.
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


Str = Annotated[str, Strict()]
Bool = Annotated[bool, Strict()]
Number = Annotated[float, Strict(), AllowInfNan(False)]
Int = Annotated[int, Strict(), BeforeValidator(_integral_float_to_int)]
UnitInterval = Annotated[Number, Field(ge=0, le=1)]
NonNegativeNumber = Annotated[Number, Field(ge=0)]
NonNegativeInt = Annotated[Int, Field(ge=0)]
Timestamp = Annotated[
    datetime, BeforeValidator(_reject_numeric_datetime), AfterValidator(_assume_utc)
]
Embedding = Annotated[list[Number], BeforeValidator(_array_to_list)]

# The seed imports these from "../branded-schemas", which it does not define. Here they are
# non-empty strings: chunk and document ids in this project are paths and "jawiki:<title>".
FileId = Annotated[Str, Field(min_length=1)]
ChunkId = Annotated[Str, Field(min_length=1)]
EntityId = Annotated[Str, Field(min_length=1)]
CommunityId = Annotated[Str, Field(min_length=1)]

# --- enums (seed 2.1): each carries the seed's own message for any bad value ------------------


class QueryType(StrEnum):
    LOCAL = "local"
    GLOBAL = "global"
    RELATIONSHIP = "relationship"
    HYBRID = "hybrid"


class SearchStrategy(StrEnum):
    KEYWORD = "keyword"
    SEMANTIC = "semantic"
    GRAPH = "graph"
    HYBRID = "hybrid"


class SearchResultType(StrEnum):
    CHUNK = "chunk"
    ENTITY = "entity"
    COMMUNITY = "community"


class CragRelevance(StrEnum):
    CORRECT = "correct"
    INCORRECT = "incorrect"
    AMBIGUOUS = "ambiguous"


def _enum_with_message(message: str) -> WrapValidator:
    def validate(value: object, handler: ValidatorFunctionWrapHandler) -> object:
        try:
            return handler(value)
        except ValidationError:
            raise PydanticCustomError("contract_enum", message) from None

    return WrapValidator(validate)


QueryTypeField = Annotated[
    QueryType,
    _enum_with_message(
        "クエリタイプは local, global, relationship, hybrid のいずれかである必要があります"
    ),
]
SearchStrategyField = Annotated[
    SearchStrategy,
    _enum_with_message(
        "検索戦略は keyword, semantic, graph, hybrid のいずれかである必要があります"
    ),
]
SearchResultTypeField = Annotated[
    SearchResultType,
    _enum_with_message("結果タイプは chunk, entity, community のいずれかである必要があります"),
]
# The seed gives this enum no message of its own; this one follows the other three.
CragRelevanceField = Annotated[
    CragRelevance,
    _enum_with_message("CRAG判定は correct, incorrect, ambiguous のいずれかである必要があります"),
]

# --- base model ---------------------------------------------------------------------------------


class ContractModel(BaseModel):
    """Base of every contract model: camelCase JSON, snake_case attributes, unknown keys dropped."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
        extra="ignore",
    )

    contract_label: ClassVar[str] = "入力データ"  # names the payload in ContractError summaries

    @classmethod
    def parse_json(cls, data: object) -> Self:
        """Validate a dict or JSON text; raise ContractError with Japanese messages."""
        return validate_contract(cls, data)


# --- query (seed 2.2) ---------------------------------------------------------------------------


class DateRange(ContractModel):
    contract_label: ClassVar[str] = "日付範囲"

    start: Timestamp | None
    end: Timestamp | None

    @model_validator(mode="after")
    def _start_not_after_end(self) -> Self:
        # Either end may be null: an open interval.
        if self.start is not None and self.end is not None and self.start > self.end:
            raise ValueError("開始日は終了日以前である必要があります")
        return self


WEIGHT_SUM_TOLERANCE = 0.01


class SearchWeights(ContractModel):
    contract_label: ClassVar[str] = "検索重み"

    keyword: UnitInterval
    semantic: UnitInterval
    graph: UnitInterval

    @model_validator(mode="after")
    def _sum_is_one(self) -> Self:
        total = self.keyword + self.semantic + self.graph
        if not abs(total - 1.0) < WEIGHT_SUM_TOLERANCE:
            raise ValueError("検索重みの合計は1.0である必要があります")
        return self


def _default_weights() -> SearchWeights:
    return SearchWeights(keyword=0.35, semantic=0.35, graph=0.3)


class SearchFilters(ContractModel):
    contract_label: ClassVar[str] = "検索フィルタ"

    file_ids: list[FileId] | None
    entity_types: list[Str] | None
    date_range: DateRange | None
    min_relevance: UnitInterval = 0.3


class SearchOptions(ContractModel):
    contract_label: ClassVar[str] = "検索オプション"

    limit: Annotated[Int, Field(ge=1, le=100)] = 20
    offset: NonNegativeInt = 0
    include_metadata: Bool = True
    include_highlights: Bool = True
    rerank_enabled: Bool = True
    crag_enabled: Bool = False
    strategies: Annotated[list[SearchStrategyField], Field(min_length=1)] = Field(
        default_factory=lambda: [SearchStrategy.HYBRID]
    )
    weights: SearchWeights = Field(default_factory=_default_weights)


class SearchQuery(ContractModel):
    contract_label: ClassVar[str] = "検索クエリ"

    text: Annotated[Str, Field(min_length=1, max_length=1000)]
    type: QueryTypeField
    embedding: Embedding | None
    filters: SearchFilters
    options: SearchOptions


class QueryClassification(ContractModel):
    contract_label: ClassVar[str] = "クエリ分類"

    original_query: Str
    type: QueryTypeField
    confidence: UnitInterval
    extracted_entities: list[Str]
    suggested_weights: SearchWeights
    expanded_queries: list[Str]


# --- result (seed 2.3) --------------------------------------------------------------------------


class HighlightOffset(ContractModel):
    contract_label: ClassVar[str] = "ハイライト位置"

    start: NonNegativeInt
    end: NonNegativeInt

    @model_validator(mode="after")
    def _start_before_end(self) -> Self:
        if not self.start < self.end:
            raise ValueError("開始位置は終了位置より小さい必要があります")
        return self


class Highlight(ContractModel):
    contract_label: ClassVar[str] = "ハイライト"

    field: Str
    fragment: Str
    offsets: list[HighlightOffset]


class SearchResultContent(ContractModel):
    contract_label: ClassVar[str] = "検索結果の本文"

    text: Str
    summary: Str | None
    context_before: Str | None
    context_after: Str | None


class CragScore(ContractModel):
    contract_label: ClassVar[str] = "CRAG評価"

    relevance: CragRelevanceField
    confidence: UnitInterval
    needs_web_search: Bool
    refined_query: Str | None


class RelevanceScore(ContractModel):
    contract_label: ClassVar[str] = "関連度スコア"

    combined: UnitInterval
    keyword: UnitInterval
    semantic: UnitInterval
    graph: UnitInterval
    rerank: UnitInterval | None
    crag: CragScore | None


class SearchResultSources(ContractModel):
    contract_label: ClassVar[str] = "検索結果の出典"

    chunk_id: ChunkId | None
    file_id: FileId | None
    entity_ids: list[EntityId]
    community_id: CommunityId | None
    relation_ids: list[Str]


class SearchResultItem(ContractModel):
    contract_label: ClassVar[str] = "検索結果項目"

    id: Str
    type: SearchResultTypeField
    score: UnitInterval
    relevance: RelevanceScore
    content: SearchResultContent
    highlights: list[Highlight]
    sources: SearchResultSources


class StrategyMetric(ContractModel):
    contract_label: ClassVar[str] = "検索戦略の指標"

    enabled: Bool
    result_count: NonNegativeInt
    processing_time: NonNegativeNumber
    top_score: UnitInterval


class SearchStrategyMetrics(ContractModel):
    contract_label: ClassVar[str] = "検索戦略の指標一覧"

    keyword: StrategyMetric
    semantic: StrategyMetric
    graph: StrategyMetric


class SearchResult(ContractModel):
    contract_label: ClassVar[str] = "検索結果"

    query: SearchQuery
    results: list[SearchResultItem]
    total_count: NonNegativeInt
    processing_time: NonNegativeNumber
    strategies: SearchStrategyMetrics


# --- configuration (seed 2.4) -------------------------------------------------------------------


class RRFConfig(ContractModel):
    contract_label: ClassVar[str] = "RRF設定"

    k: Annotated[Int, Field(ge=1, le=1000)] = 60
    normalize_scores: Bool = True


class RerankConfig(ContractModel):
    contract_label: ClassVar[str] = "リランク設定"

    enabled: Bool = True
    model: Str = "cross-encoder/ms-marco-MiniLM-L-6-v2"
    top_k: Annotated[Int, Field(ge=1, le=100)] = 50
    batch_size: Annotated[Int, Field(ge=1, le=32)] = 16


def _summary(label: str, errors: list[tuple[str, str]]) -> str:
    path, message = errors[0]
    text = f"{label}が不正です: {path}: {message}" if path else f"{label}が不正です: {message}"
    return text if len(errors) == 1 else f"{text}（ほか{len(errors) - 1}件）"


ModelT = TypeVar("ModelT", bound=ContractModel)


def validate_contract(model_cls: type[ModelT], data: object) -> ModelT:
    """Validate ``data`` (a mapping, a model or JSON text) against ``model_cls``.

    Raises ContractError whose ``user_message`` is a one-line Japanese summary naming the first
    bad field and whose ``errors`` list every ``(path, message)``.
    """
    try:
        if isinstance(data, str | bytes | bytearray):
            return model_cls.model_validate_json(data)
        return model_cls.model_validate(data)
    except ValidationError as exc:
        errors = japanese_errors(exc)
        raise ContractError(_summary(model_cls.contract_label, errors), errors) from exc


# --- versioning (seed 5.4) ------------------------------------------------------------------------

_SEMVER = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)$")


def _check_version(version: object, path: str) -> str:
    match = _SEMVER.match(version) if isinstance(version, str) else None
    if match is None:
        message = f"スキーマバージョンの形式が不正です: {version!r}（例: {SCHEMA_VERSION}）"
        raise ContractError(message, [(path, message)])
    normalized = ".".join(match.groups())
    if normalized not in SUPPORTED_SCHEMA_VERSIONS:
        supported = ", ".join(SUPPORTED_SCHEMA_VERSIONS)
        message = f"未対応のスキーマバージョンです: {normalized}（対応バージョン: {supported}）"
        raise ContractError(message, [(path, message)])
    return normalized


def migrate(
    data: Mapping[str, Any], from_version: str, to_version: str = SCHEMA_VERSION
) -> dict[str, Any]:
    """Bring a payload written for ``from_version`` of the contract to ``to_version``.

    Only 1.0.0 exists, so it is passed through (as a deep copy); an unknown or malformed version
    is refused with ContractError. Validate the result with ``validate_contract``.
    """
    if not isinstance(data, Mapping):
        message = "移行するデータはオブジェクトである必要があります"
        raise ContractError(message, [("", message)])
    source = _check_version(from_version, "fromVersion")
    target = _check_version(to_version, "toVersion")
    if source != target:  # no migration steps exist yet (1.0.0 is the only version)
        message = f"スキーマ {source} から {target} への移行手順がありません"
        raise ContractError(message, [("fromVersion", message)])
    return copy.deepcopy(dict(data))


__all__ = [
    "SCHEMA_VERSION",
    "SCHEMA_VERSION_INFO",
    "SUPPORTED_SCHEMA_VERSIONS",
    "WEIGHT_SUM_TOLERANCE",
    "ContractModel",
    "CragRelevance",
    "CragScore",
    "DateRange",
    "Highlight",
    "HighlightOffset",
    "QueryClassification",
    "QueryType",
    "RRFConfig",
    "RelevanceScore",
    "RerankConfig",
    "SchemaVersionInfo",
    "SearchFilters",
    "SearchOptions",
    "SearchQuery",
    "SearchResult",
    "SearchResultContent",
    "SearchResultItem",
    "SearchResultSources",
    "SearchResultType",
    "SearchStrategy",
    "SearchStrategyMetrics",
    "SearchWeights",
    "StrategyMetric",
    "japanese_errors",
    "migrate",
    "validate_contract",
]
