"""The search contract (seed: search-schemas.md) ported to Pydantic v2."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Annotated, Any
from uuid import UUID

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import Field, TypeAdapter, ValidationError

from core.errors import ContractError, InputError
from core.schemas.search import (
    SCHEMA_VERSION,
    SCHEMA_VERSION_INFO,
    CragScore,
    DateRange,
    HighlightOffset,
    QueryClassification,
    QueryType,
    RerankConfig,
    RRFConfig,
    SearchFilters,
    SearchOptions,
    SearchQuery,
    SearchResult,
    SearchResultItem,
    SearchStrategy,
    SearchWeights,
    StrategyMetric,
    japanese_errors,
    migrate,
    validate_contract,
)

WEIGHTS_MESSAGE = "検索重みの合計は1.0である必要があります"
DATE_MESSAGE = "開始日は終了日以前である必要があります"
OFFSET_MESSAGE = "開始位置は終了位置より小さい必要があります"
QUERY_TYPE_MESSAGE = (
    "クエリタイプは local, global, relationship, hybrid のいずれかである必要があります"
)
STRATEGY_MESSAGE = "検索戦略は keyword, semantic, graph, hybrid のいずれかである必要があります"
RESULT_TYPE_MESSAGE = "結果タイプは chunk, entity, community のいずれかである必要があります"


def errors_of(model_cls: type, data: object) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as info:
        validate_contract(model_cls, data)
    return info.value.errors


def query_payload(**overrides: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "text": "ランサムウェア感染時の初動対応",
        "type": "hybrid",
        "embedding": None,
        "filters": {"fileIds": None, "entityTypes": None, "dateRange": None},
        "options": {},
    }
    payload.update(overrides)
    return payload


def metric(count: int = 3) -> dict[str, Any]:
    return {"enabled": True, "resultCount": count, "processingTime": 1.5, "topScore": 0.9}


def item_payload(index: int = 0) -> dict[str, Any]:
    return {
        "id": f"runbooks/ransomware.md#{index}",
        "type": "chunk",
        "score": 0.8,
        "relevance": {
            "combined": 0.8,
            "keyword": 0.7,
            "semantic": 0.9,
            "graph": 0.0,
            "rerank": None,
            "crag": {
                "relevance": "correct",
                "confidence": 0.95,
                "needsWebSearch": False,
                "refinedQuery": None,
            },
        },
        "content": {
            "text": "感染端末をネットワークから隔離する。",
            "summary": None,
            "contextBefore": "## 初動",
            "contextAfter": None,
        },
        "highlights": [
            {"field": "text", "fragment": "隔離", "offsets": [{"start": 12, "end": 14}]}
        ],
        "sources": {
            "chunkId": f"runbooks/ransomware.md#{index}",
            "fileId": "runbooks/ransomware.md",
            "entityIds": ["ent-1"],
            "communityId": None,
            "relationIds": [],
        },
    }


def result_payload(items: int = 3) -> dict[str, Any]:
    query = query_payload(
        embedding=[0.25, -0.5, 1.0],
        filters={
            "fileIds": ["runbooks/ransomware.md"],
            "entityTypes": ["malware"],
            "dateRange": {"start": "2024-01-01T00:00:00Z", "end": None},
            "minRelevance": 0.3,
        },
        options={
            "limit": 10,
            "offset": 0,
            "includeMetadata": True,
            "includeHighlights": False,
            "rerankEnabled": False,
            "cragEnabled": True,
            "strategies": ["keyword", "semantic"],
            "weights": {"keyword": 0.4, "semantic": 0.6, "graph": 0.0},
        },
    )
    return {
        "query": query,
        "results": [item_payload(i) for i in range(items)],
        "totalCount": items,
        "processingTime": 12.5,
        "strategies": {"keyword": metric(), "semantic": metric(), "graph": metric(0)},
    }


# --- seed section 6.1: searchWeightsSchema ------------------------------------------------------


def test_seed_weights_accepts_sum_of_one() -> None:
    validate_contract(SearchWeights, {"keyword": 0.35, "semantic": 0.35, "graph": 0.3})


def test_seed_weights_rejects_sum_not_one() -> None:
    errors = errors_of(SearchWeights, {"keyword": 0.5, "semantic": 0.5, "graph": 0.5})
    assert errors[0][1] == WEIGHTS_MESSAGE


def test_seed_weights_accepts_within_tolerance() -> None:
    validate_contract(SearchWeights, {"keyword": 0.334, "semantic": 0.333, "graph": 0.333})


# --- seed section 6.2: dateRangeSchema ----------------------------------------------------------


def test_seed_date_range_accepts_ordered_range() -> None:
    validate_contract(DateRange, {"start": datetime(2024, 1, 1), "end": datetime(2024, 12, 31)})


def test_seed_date_range_rejects_reversed_range() -> None:
    errors = errors_of(DateRange, {"start": datetime(2024, 12, 31), "end": datetime(2024, 1, 1)})
    assert errors[0][1] == DATE_MESSAGE


def test_seed_date_range_accepts_either_end_null() -> None:
    validate_contract(DateRange, {"start": datetime(2024, 1, 1), "end": None})
    validate_contract(DateRange, {"start": None, "end": datetime(2024, 12, 31)})


# --- custom rules: passing and failing, with paths ----------------------------------------------


@pytest.mark.parametrize(
    ("weights", "ok"),
    [
        ((1.0, 0.0, 0.0), True),
        ((0.5, 0.5, 0.009), True),  # 1.009: inside the 0.01 tolerance
        ((0.33, 0.33, 0.33), False),  # 0.99 is exactly 0.01 away: the seed's '< 0.01' rejects it
        ((0.5, 0.5, 0.02), False),
        ((0.0, 0.0, 0.0), False),
    ],
)
def test_weights_sum_rule(weights: tuple[float, float, float], ok: bool) -> None:
    data = dict(zip(("keyword", "semantic", "graph"), weights, strict=True))
    if ok:
        validate_contract(SearchWeights, data)
    else:
        assert errors_of(SearchWeights, data) == [("", WEIGHTS_MESSAGE)]


@settings(max_examples=200, deadline=None)
@given(st.tuples(*[st.floats(0, 1)] * 3))
def test_weights_rule_matches_seed_formula(weights: tuple[float, float, float]) -> None:
    data = dict(zip(("keyword", "semantic", "graph"), weights, strict=True))
    expected = abs(sum(weights) - 1.0) < 0.01
    try:
        validate_contract(SearchWeights, data)
        accepted = True
    except ContractError:
        accepted = False
    assert accepted == expected


def test_weights_rule_is_reported_at_the_nested_object() -> None:
    payload = query_payload(options={"weights": {"keyword": 0.5, "semantic": 0.5, "graph": 0.5}})
    with pytest.raises(ContractError) as info:
        validate_contract(SearchQuery, payload)
    assert info.value.errors == [("options.weights", WEIGHTS_MESSAGE)]
    assert info.value.user_message == (
        "検索クエリが不正です: options.weights: 検索重みの合計は1.0である必要があります"
    )
    assert isinstance(info.value, InputError)


def test_weights_rule_does_not_run_when_a_weight_is_out_of_range() -> None:
    errors = errors_of(SearchWeights, {"keyword": 1.5, "semantic": -0.5, "graph": 0})
    assert errors == [
        ("keyword", "1以下である必要があります"),
        ("semantic", "0以上である必要があります"),
    ]


def test_date_range_equal_ends_accepted_and_nested_path() -> None:
    day = "2024-06-01T09:00:00+09:00"
    validate_contract(DateRange, {"start": day, "end": day})
    filters = {
        "fileIds": None,
        "entityTypes": None,
        "dateRange": {"start": "2024-12-31", "end": "2024-01-01"},
    }
    assert errors_of(SearchQuery, query_payload(filters=filters)) == [
        ("filters.dateRange", DATE_MESSAGE)
    ]


def test_date_range_compares_naive_as_utc() -> None:
    jst = timezone(timedelta(hours=9))
    # 2024-01-01 08:00 JST is 2023-12-31 23:00 UTC: before naive (UTC) midnight.
    validate_contract(
        DateRange, {"start": datetime(2024, 1, 1, 8, tzinfo=jst), "end": "2024-01-01"}
    )
    errors = errors_of(
        DateRange, {"start": "2024-01-01", "end": datetime(2024, 1, 1, 8, tzinfo=jst)}
    )
    assert errors == [("", DATE_MESSAGE)]
    parsed = validate_contract(DateRange, {"start": "2024-01-01", "end": None})
    assert parsed.start == datetime(2024, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize("value", [1704067200, "2024-13-01", "yesterday", True])
def test_date_range_rejects_non_dates(value: object) -> None:
    errors = errors_of(DateRange, {"start": value, "end": None})
    assert errors == [("start", "日時（ISO 8601 形式の文字列）である必要があります")]


def test_highlight_offset_rule() -> None:
    validate_contract(HighlightOffset, {"start": 0, "end": 1})
    assert errors_of(HighlightOffset, {"start": 3, "end": 3}) == [("", OFFSET_MESSAGE)]
    assert errors_of(HighlightOffset, {"start": 5, "end": 2}) == [("", OFFSET_MESSAGE)]
    assert errors_of(HighlightOffset, {"start": -1, "end": 2}) == [
        ("start", "0以上である必要があります")
    ]


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 10_000))
def test_highlight_offset_rule_property(start: int, end: int) -> None:
    try:
        validate_contract(HighlightOffset, {"start": start, "end": end})
        accepted = True
    except ContractError:
        accepted = False
    assert accepted == (start < end)


def test_highlight_offset_rule_path_inside_results() -> None:
    payload = result_payload()
    payload["results"][1]["highlights"][0]["offsets"].append({"start": 9, "end": 2})
    assert errors_of(SearchResult, payload) == [
        ("results[1].highlights[0].offsets[1]", OFFSET_MESSAGE)
    ]


# --- enums ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["LOCAL", "semantic", "", 3, None])
def test_query_type_message(bad: object) -> None:
    assert errors_of(SearchQuery, query_payload(type=bad)) == [("type", QUERY_TYPE_MESSAGE)]


def test_enums_are_str_enums_and_accept_values() -> None:
    for value in ("local", "global", "relationship", "hybrid"):
        assert validate_contract(SearchQuery, query_payload(type=value)).type == QueryType(value)
    assert QueryType.LOCAL == "local"
    assert isinstance(SearchStrategy.GRAPH, str)


def test_strategy_message_names_the_element() -> None:
    payload = query_payload(options={"strategies": ["keyword", "bm25"]})
    assert errors_of(SearchQuery, payload) == [("options.strategies[1]", STRATEGY_MESSAGE)]


def test_result_type_and_crag_relevance_messages() -> None:
    item = item_payload()
    item["type"] = "document"
    item["relevance"]["crag"]["relevance"] = "maybe"
    assert errors_of(SearchResultItem, item) == [
        ("type", RESULT_TYPE_MESSAGE),
        (
            "relevance.crag.relevance",
            "CRAG判定は correct, incorrect, ambiguous のいずれかである必要があります",
        ),
    ]


# --- global error map ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"text": 123}, ("text", "文字列である必要があります")),
        ({"text": ""}, ("text", "1文字以上である必要があります")),
        ({"text": "あ" * 1001}, ("text", "1000文字以下である必要があります")),
        ({"options": {"limit": 0}}, ("options.limit", "1以上である必要があります")),
        ({"options": {"limit": 101}}, ("options.limit", "100以下である必要があります")),
        ({"options": {"limit": 2.5}}, ("options.limit", "整数である必要があります")),
        ({"options": {"limit": "20"}}, ("options.limit", "数値である必要があります")),
        ({"options": {"limit": None}}, ("options.limit", "数値である必要があります")),
        ({"options": {"offset": -1}}, ("options.offset", "0以上である必要があります")),
        (
            {"options": {"rerankEnabled": "yes"}},
            ("options.rerankEnabled", "真偽値である必要があります"),
        ),
        ({"options": {"cragEnabled": 1}}, ("options.cragEnabled", "真偽値である必要があります")),
        ({"options": {"strategies": []}}, ("options.strategies", "1個以上の要素が必要です")),
        ({"options": {"strategies": "hybrid"}}, ("options.strategies", "配列である必要があります")),
        ({"options": []}, ("options", "オブジェクトである必要があります")),
        ({"embedding": [0.1, "x"]}, ("embedding[1]", "数値である必要があります")),
        ({"embedding": [float("nan")]}, ("embedding[0]", "有限の数値である必要があります")),
    ],
)
def test_error_map_on_query(overrides: dict[str, Any], expected: tuple[str, str]) -> None:
    assert errors_of(SearchQuery, query_payload(**overrides)) == [expected]


def test_error_map_number_fields_deep_in_results() -> None:
    payload = result_payload()
    payload["results"][2]["score"] = "0.8"
    payload["results"][2]["relevance"]["combined"] = 1.5
    payload["results"][0]["relevance"]["rerank"] = True
    payload["totalCount"] = -1
    assert errors_of(SearchResult, payload) == [
        ("results[0].relevance.rerank", "数値である必要があります"),
        ("results[2].score", "数値である必要があります"),
        ("results[2].relevance.combined", "1以下である必要があります"),
        ("totalCount", "0以上である必要があります"),
    ]


def test_required_fields_even_when_nullable() -> None:
    payload = query_payload(filters={"entityTypes": None})
    del payload["embedding"]
    assert errors_of(SearchQuery, payload) == [
        ("embedding", "必須項目です"),
        ("filters.fileIds", "必須項目です"),
        ("filters.dateRange", "必須項目です"),
    ]


def test_maximum_counterparts_and_other_types() -> None:
    def errors(annotation: Any, value: object) -> list[tuple[str, str]]:
        with pytest.raises(ValidationError) as info:
            TypeAdapter(annotation).validate_python(value)
        return japanese_errors(info.value)

    assert errors(Annotated[list[int], Field(max_length=2)], [1, 2, 3]) == [
        ("", "2個以下の要素である必要があります")
    ]
    assert errors(Annotated[float, Field(gt=0.5)], 0.5) == [("", "0.5より大きい必要があります")]
    assert errors(Annotated[float, Field(lt=2)], 3) == [("", "2より小さい必要があります")]
    assert errors(UUID, "not-a-uuid") == [("", "UUIDである必要があります")]
    assert errors(list[bool], ["maybe"]) == [("[0]", "真偽値である必要があります")]


def test_contract_error_summary_counts_the_rest() -> None:
    with pytest.raises(ContractError) as info:
        validate_contract(SearchQuery, query_payload(text="", type="x"))
    assert (
        info.value.user_message
        == "検索クエリが不正です: text: 1文字以上である必要があります（ほか1件）"
    )
    assert len(info.value.errors) == 2


def test_root_level_errors() -> None:
    with pytest.raises(ContractError) as info:
        validate_contract(SearchResult, "{not json")
    assert info.value.errors == [("", "JSONとして解析できません")]
    assert info.value.user_message == "検索結果が不正です: JSONとして解析できません"
    assert errors_of(SearchQuery, ["text"]) == [("", "オブジェクトである必要があります")]


# --- strictness, embeddings, extra keys --------------------------------------------------------


def test_no_coercion_but_integral_float_is_an_integer() -> None:
    options = validate_contract(SearchOptions, {"limit": 20.0, "offset": 3})
    assert options.limit == 20
    assert isinstance(options.limit, int)
    assert errors_of(
        SearchFilters,
        {"fileIds": None, "entityTypes": None, "dateRange": None, "minRelevance": "0.3"},
    ) == [("minRelevance", "数値である必要があります")]


def test_embedding_accepts_numpy_and_lists() -> None:
    vector = np.array([0.5, -0.25], dtype=np.float32)
    query = validate_contract(SearchQuery, query_payload(embedding=vector))
    assert query.embedding == [0.5, -0.25]
    assert validate_contract(SearchQuery, query_payload(embedding=[1, 2])).embedding == [1.0, 2.0]
    assert validate_contract(SearchQuery, query_payload()).embedding is None


def test_unknown_keys_are_dropped() -> None:
    query = validate_contract(SearchQuery, query_payload(debug=True))
    assert "debug" not in query.model_dump()


def test_snake_case_names_are_accepted_too() -> None:
    filters = validate_contract(
        SearchFilters, {"file_ids": ["a.md"], "entity_types": None, "date_range": None}
    )
    assert filters.file_ids == ["a.md"]
    assert SearchFilters(file_ids=None, entity_types=None, date_range=None).min_relevance == 0.3


def test_branded_ids_must_not_be_empty() -> None:
    payload = result_payload(items=1)
    payload["results"][0]["sources"]["fileId"] = ""
    assert errors_of(SearchResult, payload) == [
        ("results[0].sources.fileId", "1文字以上である必要があります")
    ]


# --- camelCase round trip, defaults -------------------------------------------------------------


def test_search_result_round_trip_in_camel_case() -> None:
    payload = result_payload()
    result = SearchResult.parse_json(copy.deepcopy(payload))
    dumped = result.model_dump(mode="json", by_alias=True)
    assert dumped == payload | {
        "query": payload["query"]
        | {
            "filters": payload["query"]["filters"]
            | {"dateRange": {"start": "2024-01-01T00:00:00Z", "end": None}}
        }
    }
    assert result.results[0].sources.chunk_id == "runbooks/ransomware.md#0"
    assert result.query.options.weights.semantic == 0.6
    # JSON text round trip; camelCase is also the default without by_alias.
    again = validate_contract(SearchResult, result.model_dump_json())
    assert again == result
    assert json.loads(result.model_dump_json()) == dumped
    assert "totalCount" in result.model_dump()


def test_query_defaults() -> None:
    query = SearchQuery.parse_json(query_payload())
    options = query.options
    assert (options.limit, options.offset) == (20, 0)
    assert options.include_metadata is True
    assert options.include_highlights is True
    assert options.rerank_enabled is True
    assert options.crag_enabled is False
    assert options.strategies == [SearchStrategy.HYBRID]
    assert options.weights == SearchWeights(keyword=0.35, semantic=0.35, graph=0.3)
    assert query.filters.min_relevance == 0.3
    assert query.model_dump(mode="json")["options"] == {
        "limit": 20,
        "offset": 0,
        "includeMetadata": True,
        "includeHighlights": True,
        "rerankEnabled": True,
        "cragEnabled": False,
        "strategies": ["hybrid"],
        "weights": {"keyword": 0.35, "semantic": 0.35, "graph": 0.3},
    }
    other = SearchOptions()
    other.strategies.append(SearchStrategy.GRAPH)
    assert SearchOptions().strategies == [SearchStrategy.HYBRID]


def test_config_defaults_and_bounds() -> None:
    assert RRFConfig().model_dump() == {"k": 60, "normalizeScores": True}
    assert RerankConfig().model_dump() == {
        "enabled": True,
        "model": "cross-encoder/ms-marco-MiniLM-L-6-v2",
        "topK": 50,
        "batchSize": 16,
    }
    assert errors_of(RRFConfig, {"k": 1001}) == [("k", "1000以下である必要があります")]
    assert errors_of(RerankConfig, {"topK": 0, "batchSize": 33}) == [
        ("topK", "1以上である必要があります"),
        ("batchSize", "32以下である必要があります"),
    ]


def test_other_models_validate() -> None:
    classification = validate_contract(
        QueryClassification,
        {
            "originalQuery": "Emotetの横展開は?",
            "type": "relationship",
            "confidence": 0.7,
            "extractedEntities": ["Emotet"],
            "suggestedWeights": {"keyword": 0.2, "semantic": 0.3, "graph": 0.5},
            "expandedQueries": [],
        },
    )
    assert classification.suggested_weights.graph == 0.5
    assert errors_of(StrategyMetric, metric() | {"processingTime": -0.1}) == [
        ("processingTime", "0以上である必要があります")
    ]
    assert errors_of(
        CragScore,
        {"relevance": "ambiguous", "confidence": 2, "needsWebSearch": True, "refinedQuery": None},
    ) == [("confidence", "1以下である必要があります")]


# --- versioning ---------------------------------------------------------------------------------


def test_version_metadata() -> None:
    assert SCHEMA_VERSION == "1.0.0"
    assert SCHEMA_VERSION_INFO.version == SCHEMA_VERSION
    assert SCHEMA_VERSION_INFO.release_date == "2025-12-18"
    assert SCHEMA_VERSION_INFO.changes[0] == "初版リリース"


def test_migrate_passes_current_version_through() -> None:
    payload = query_payload()
    migrated = migrate(payload, "1.0.0")
    assert migrated == payload
    assert migrated is not payload
    assert migrate(payload, "v1.0.0", "1.0.0") == payload
    validate_contract(SearchQuery, migrated)


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("2.0.0", "未対応のスキーマバージョンです: 2.0.0（対応バージョン: 1.0.0）"),
        ("0.9.1", "未対応のスキーマバージョンです: 0.9.1（対応バージョン: 1.0.0）"),
        ("1.0", "スキーマバージョンの形式が不正です: '1.0'（例: 1.0.0）"),
    ],
)
def test_migrate_refuses_unknown_versions(version: str, message: str) -> None:
    with pytest.raises(ContractError) as info:
        migrate(query_payload(), version)
    assert info.value.user_message == message
    assert info.value.errors == [("fromVersion", message)]


def test_migrate_refuses_unknown_target_and_non_objects() -> None:
    with pytest.raises(ContractError) as target:
        migrate(query_payload(), "1.0.0", "1.1.0")
    assert target.value.errors == [
        ("toVersion", "未対応のスキーマバージョンです: 1.1.0（対応バージョン: 1.0.0）")
    ]
    with pytest.raises(ContractError) as info:
        migrate(["not", "a", "dict"], "1.0.0")  # type: ignore[arg-type]
    assert info.value.user_message == "移行するデータはオブジェクトである必要があります"
