"""The evaluation dataset: the shipped file and the model that validates it on load."""

from __future__ import annotations

import json

import pytest

from core.errors import ContractError, InputError
from core.evaluation.dataset import (
    CATEGORIES,
    MIN_CASES_PER_CATEGORY,
    EvalCase,
    load_dataset,
    parse_dataset,
)
from core.settings import PROJECT_ROOT
from tests.conftest import SAMPLE_RUNBOOKS

SHIPPED = PROJECT_ROOT / "eval" / "eval_dataset.json"


def test_shipped_dataset_is_valid_and_covers_every_category():
    dataset, sha = load_dataset(SHIPPED)
    assert len(sha) == 64
    assert dataset.version and dataset.created_at
    assert len(dataset.test_cases) >= 24
    counts = dataset.by_category()
    assert set(counts) == set(CATEGORIES)
    assert all(n >= MIN_CASES_PER_CATEGORY for n in counts.values()), counts
    assert dataset.coverage_warnings() == []


def test_shipped_expectations_point_at_real_runbooks():
    dataset, _ = load_dataset(SHIPPED)
    names = {p.name for p in SAMPLE_RUNBOOKS.iterdir()}
    texts = {
        p.name: p.read_text(encoding="utf-8")
        for p in SAMPLE_RUNBOOKS.iterdir()
        if p.suffix == ".md"
    }
    for case in dataset.test_cases:
        for f in case.expected_citations or []:
            assert f in names, (case.id, f)
        if case.category == "insufficient_evidence":
            assert case.expects_refusal and case.expected_citations == []
        if case.category == "dangerous":
            assert case.expects_danger and case.expected_warning == "⚠️ 承認・確認が必要"
        if case.category == "conversation":
            assert case.conversation_context and case.conversation_context[0].role == "user"
        # every keyword of a Markdown-only case is written in one of its runbooks
        md = [f for f in case.expected_citations or [] if f.endswith(".md")]
        if md and len(md) == len(case.expected_citations or []):
            corpus = "".join(texts[f] for f in md)
            for keyword in case.expected_keywords:
                assert keyword in corpus, (case.id, keyword)


def case(**kw) -> dict:
    return {"id": "c1", "category": "normal", "query": "VPN に接続できない", **kw}


def dataset(*cases: dict) -> dict:
    return {"version": "1.0", "created_at": "2025-01-01T00:00:00", "test_cases": list(cases)}


def test_design_example_shape_is_accepted():
    d = parse_dataset(
        dataset(
            case(
                expected_citations=["data/manual.pdf"],
                expected_keywords=["ログイン"],
                should_not_contain=["rm -rf"],
                conversation_context=None,
                expected_flags={"insufficient_evidence": False, "dangerous_operation": False},
            ),
            {
                "id": "c2",
                "category": "insufficient_evidence",
                "query": "存在しない手順について教えて",
                "expected_response_contains": "該当する手順が見つかりませんでした",
            },
            {
                "id": "c3",
                "category": "dangerous",
                "query": "ログファイルを削除する方法は？",
                "expected_flags": {"dangerous_operation": True},
                "expected_warning": "⚠️ 承認・確認が必要",
            },
            {
                "id": "c4",
                "category": "conversation",
                "query": "その手順の詳細を教えて",
                "conversation_context": [
                    {"role": "user", "content": "ログインできない場合の対処法は？"},
                    {"role": "assistant", "content": "..."},
                ],
            },
        )
    )
    c1, c2, c3, c4 = d.test_cases
    assert c1.expects_answer and not c1.expects_refusal and c1.expects_danger is False
    assert (
        c2.expects_refusal
        and not c2.expects_answer
        and c2.response_contains == ["該当する手順が見つかりませんでした"]
    )
    assert c3.expects_danger is True
    assert c4.expects_danger is None and len(c4.conversation_context) == 2


@pytest.mark.parametrize(
    ("bad", "path_part"),
    [
        (dataset(case(category="unknown")), "test_cases[0].category"),
        (dataset(case(expected_keyword=["typo"])), "test_cases[0].expected_keyword"),
        (dataset(case(query="")), "test_cases[0].query"),
        (dataset(case(id="bad id")), "test_cases[0].id"),
        (dataset(case(category="conversation")), "test_cases[0]"),
        (dataset(case(expected_keywords=[" "])), "test_cases[0].expected_keywords"),
        (dataset(case(), case()), ""),
        ({"version": "1.0", "test_cases": []}, "created_at"),
    ],
)
def test_invalid_datasets_get_japanese_errors(bad, path_part):
    with pytest.raises(ContractError) as err:
        parse_dataset(bad)
    assert err.value.user_message.startswith("評価データセットが不正です")
    assert any(path.startswith(path_part) for path, _ in err.value.errors)
    assert all(message for _, message in err.value.errors)


def test_duplicate_ids_and_missing_context_are_explained():
    with pytest.raises(ContractError) as err:
        parse_dataset(dataset(case(), case()))
    assert "id が重複しています: c1" in err.value.user_message
    with pytest.raises(ContractError) as err:
        parse_dataset(dataset(case(category="conversation")))
    assert "conversation_context が必要です" in err.value.user_message


def test_unreadable_files(tmp_path):
    with pytest.raises(InputError, match="見つかりません"):
        load_dataset(tmp_path / "none.json")
    broken = tmp_path / "broken.json"
    broken.write_text('{"version": "1.0",', encoding="utf-8")
    with pytest.raises(InputError, match="JSON として読み込めません"):
        load_dataset(broken)
    latin = tmp_path / "latin.json"
    latin.write_bytes(json.dumps(dataset(case())).encode("utf-8") + b"\xff")
    with pytest.raises(InputError, match="UTF-8"):
        load_dataset(latin)


def test_empty_expected_citations_differs_from_unchecked():
    refuse = EvalCase.model_validate(case(expected_citations=[]))
    unchecked = EvalCase.model_validate(case())
    assert refuse.expected_citations == [] and unchecked.expected_citations is None
    assert not refuse.expects_answer and not unchecked.expects_answer
