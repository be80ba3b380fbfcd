"""Golden Question Pools (frozen by checksum) and generating a customized set for an ordinance."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.errors import ContractError
from core.question_sets.contract import dumps_question_set, validate_payload
from core.question_sets.generation import (
    GenerationError,
    OrdinanceStructure,
    default_report_path,
    generate_question_set,
    parse_structure,
    read_structure,
)
from core.question_sets.golden import (
    GoldenPoolError,
    freeze_pool,
    list_pools,
    load_pool,
)
from tests.question_sets.helpers import GOLDEN_DIR, STRUCTURE_EXAMPLE

# The shipped pool is frozen: this pin fails if its file and its .sha256 are both edited.
A_V1_1_SHA256 = "da9423f8e940c79f7752bf18b8b639fa118c4ebc074a89ae7cf4797855e1b3a6"
NOW = datetime(2026, 1, 2, 0, 0, tzinfo=UTC)


@pytest.fixture
def pool():
    return load_pool(GOLDEN_DIR, "A-v1.1")


@pytest.fixture
def golden_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "golden"
    folder.mkdir()
    for name in ("A-v1.1.json", "A-v1.1.json.sha256"):
        shutil.copy2(GOLDEN_DIR / name, folder / name)
    return folder


def test_the_shipped_pool_is_verified_and_covers_an_ordinance(pool):
    assert pool.sha256 == A_V1_1_SHA256
    assert len(pool.questions) >= 20
    categories = {q.category for q in pool.questions}
    for needed in ("目的", "定義", "適用範囲", "責務", "義務", "罰則", "施行期日", "経過措置",
                   "規則への委任", "報告・立入検査", "手数料"):  # fmt: skip
        assert needed in categories
    assert all("{ordinance_name}" in q.template for q in pool.questions)
    assert len({q.question_id for q in pool.questions}) == len(pool.questions)
    assert "A-v1.1" in [e.pool_id for e in list_pools(GOLDEN_DIR) if e.ok]


def test_a_tampered_pool_is_refused_in_japanese(golden_copy):
    path = golden_copy / "A-v1.1.json"
    path.write_bytes(path.read_bytes().replace("目的".encode(), "目標".encode(), 1))
    with pytest.raises(GoldenPoolError) as info:
        load_pool(golden_copy, "A-v1.1")
    assert "チェックサムが記録値と一致しません" in info.value.user_message
    [entry] = list_pools(golden_copy)
    assert not entry.ok and "一致しません" in entry.message


def test_a_single_changed_byte_is_detected(golden_copy):
    path = golden_copy / "A-v1.1.json"
    path.write_bytes(path.read_bytes() + b"\n")
    with pytest.raises(GoldenPoolError, match="一致しません"):
        load_pool(golden_copy, "A-v1.1")


def test_an_unrecorded_or_unreadable_checksum_is_refused(golden_copy):
    (golden_copy / "A-v1.1.json.sha256").write_text("not a checksum\n")
    with pytest.raises(GoldenPoolError, match="チェックサムファイルが読めません"):
        load_pool(golden_copy, "A-v1.1")
    (golden_copy / "A-v1.1.json.sha256").unlink()
    with pytest.raises(GoldenPoolError, match="チェックサムが記録されていません"):
        load_pool(golden_copy, "A-v1.1")


@pytest.mark.parametrize("pool_id", ["../A-v1.1", "A/v1", "", ".hidden", "A v1"])
def test_pool_ids_cannot_escape_the_golden_folder(pool_id):
    with pytest.raises(GoldenPoolError, match="ID が不正です"):
        load_pool(GOLDEN_DIR, pool_id)


def test_a_missing_pool(golden_copy):
    with pytest.raises(GoldenPoolError, match="見つかりません"):
        load_pool(golden_copy, "B-v9")


def write_pool(folder: Path, pool_id: str, questions: list[dict], features=None) -> Path:
    path = folder / f"{pool_id}.json"
    data = {
        "pool_id": pool_id,
        "title": "テスト",
        "placeholders": {"ordinance_name": "条例名"},
        "features": features or {"penalties": "罰則", "fees": "手数料"},
        "questions": questions,
    }
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_freezing_a_new_pool_records_once(tmp_path):
    path = write_pool(
        tmp_path,
        "T-v1",
        [
            {
                "question_id": "T-1",
                "template": "{ordinance_name}の罰則は？",
                "requires": ["penalties"],
            }
        ],
    )
    digest = freeze_pool(path)
    assert (tmp_path / "T-v1.json.sha256").read_text() == f"{digest}  T-v1.json\n"
    assert load_pool(tmp_path, "T-v1").sha256 == digest
    with pytest.raises(GoldenPoolError, match="既に凍結されています"):
        freeze_pool(path)


def test_a_malformed_pool_is_refused(tmp_path):
    path = write_pool(
        tmp_path,
        "T-v1",
        [
            {"question_id": "T-1", "template": "{unknown}の罰則は？", "requires": ["nothing"]},
            {"question_id": "T-1", "template": ""},
        ],
    )
    with pytest.raises(GoldenPoolError) as info:
        freeze_pool(path)
    message = info.value.user_message
    assert "未定義のプレースホルダー" in message and "features に無い" in message
    assert "重複" in message


# --- generation ---------------------------------------------------------------------------------------


def test_generation_without_structure_keeps_every_question(pool):
    result = generate_question_set(pool, "k518RG00000022", now=NOW)
    qs = result.question_set
    assert qs.question_set_id == "cqset-k518RG00000022-A-v1.1"
    assert qs.source_golden_question_pool == "A-v1.1"
    assert qs.question_ids == [q.question_id for q in pool.questions]
    assert qs.questions[0].question_text == "この条例の目的を分かりやすく説明してください。"
    assert qs.metadata == {"generated_by": "soc-workbench", "generated_at": "2026-01-02T00:00:00+00:00"}  # fmt: skip
    assert not result.report.excluded and not result.report.structure_given
    assert validate_payload(json.loads(dumps_question_set(qs))) == []


def test_generation_substitutes_names_and_drops_unsupported_questions(pool):
    structure = read_structure(STRUCTURE_EXAMPLE)
    result = generate_question_set(pool, "k518RG00000022", structure=structure, now=NOW)
    qs, report = result.question_set, result.report
    name = "○○市情報セキュリティ対策推進条例"
    assert all(q.question_text.startswith(name) or name in q.question_text for q in qs.questions)
    assert "{" not in "".join(q.question_text for q in qs.questions)
    dropped = {x.question_id for x in report.excluded}
    assert dropped == {"A-7-Q1", "A-7-Q2", "A-8-Q1", "A-8-Q2", "A-11-Q1", "A-11-Q2", "A-15-Q1", "A-15-Q2"}  # fmt: skip
    assert not dropped & set(qs.question_ids)
    # the pool's ids and order are kept
    pool_order = [q.question_id for q in pool.questions]
    assert qs.question_ids == [i for i in pool_order if i not in dropped]
    penalty = next(x for x in report.excluded if x.question_id == "A-11-Q1")
    assert penalty.missing_features == ("penalties",) and "罰則" in penalty.reason
    # the reasons live in the report only, never in the set
    exported = dumps_question_set(qs).decode()
    assert "除外" not in exported and "penalties" not in exported
    assert set(qs.metadata) == {"generated_by", "generated_at"}


def test_name_option_overrides_the_structure_and_is_inserted_literally(pool):
    structure = OrdinanceStructure(ordinance_name="構造側の名前")
    result = generate_question_set(
        pool, "X1", ordinance_name="{ordinance_name}条例", structure=structure
    )
    assert result.question_set.questions[0].question_text.startswith("{ordinance_name}条例の目的")
    result = generate_question_set(pool, "X1", structure=structure)
    assert result.question_set.questions[0].question_text.startswith("構造側の名前の目的")


def test_unspecified_features_keep_their_questions_and_are_reported(pool):
    result = generate_question_set(
        pool, "X1", structure=OrdinanceStructure(features={"fees": False})
    )
    assert {x.question_id for x in result.report.excluded} == {"A-8-Q1", "A-8-Q2"}
    assert "penalties" in result.report.unspecified_features
    assert "fees" not in result.report.unspecified_features
    assert "A-11-Q1" in result.question_set.question_ids


def test_generation_fails_fast_when_no_question_remains(tmp_path):
    write_pool(
        tmp_path,
        "T-v1",
        [
            {
                "question_id": "T-1",
                "template": "{ordinance_name}の罰則は？",
                "requires": ["penalties"],
            },
            {
                "question_id": "T-2",
                "template": "{ordinance_name}の手数料は？",
                "requires": ["fees"],
            },
        ],
    )
    freeze_pool(tmp_path / "T-v1.json")
    pool = load_pool(tmp_path, "T-v1")
    structure = OrdinanceStructure(features={"penalties": False, "fees": False})
    with pytest.raises(GenerationError) as info:
        generate_question_set(pool, "X1", structure=structure)
    assert "1件も残りません" in info.value.user_message
    assert info.value.report is not None and len(info.value.report.excluded) == 2
    # one feature present is enough for one question
    ok = generate_question_set(pool, "X1", structure=OrdinanceStructure(features={"fees": True, "penalties": False}))  # fmt: skip
    assert ok.question_set.question_ids == ["T-2"]


def test_generation_input_errors(pool):
    with pytest.raises(GenerationError, match="条例 ID"):
        generate_question_set(pool, "  ")
    with pytest.raises(GenerationError, match="一致しません"):
        generate_question_set(pool, "X1", structure=OrdinanceStructure(ordinance_id="X2"))
    with pytest.raises(GenerationError, match="penalty"):
        generate_question_set(pool, "X1", structure=OrdinanceStructure(features={"penalty": False}))
    with pytest.raises(ContractError):  # the result must satisfy the contract
        generate_question_set(pool, "bad\x00id")


def test_question_set_id_can_be_given(pool):
    result = generate_question_set(pool, "X1", question_set_id="私の質問セット")
    assert result.question_set.question_set_id == "私の質問セット"
    assert result.report.question_set_id == "私の質問セット"


def test_structure_file_errors(tmp_path):
    bad = {"ordinance_id": 5, "features": {"penalties": "no", "fees": True}}
    with pytest.raises(ContractError) as info:
        parse_structure(bad)
    assert [p for p, _ in info.value.errors] == ["ordinance_id", "features.penalties"]
    assert info.value.user_message.startswith("条例構造ファイルが不正です")
    path = tmp_path / "s.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ContractError, match="JSON として解析できません"):
        read_structure(path)


def test_report_path_and_content(pool):
    assert default_report_path(Path("/x/cqset.json")) == Path("/x/cqset.generation_report.json")
    report = generate_question_set(
        pool, "X1", structure=OrdinanceStructure(features={"fees": False}), now=NOW
    ).report.to_dict()
    assert report["report_format"] == "question_set_generation_report.v1"
    assert report["pool_sha256"] == A_V1_1_SHA256
    assert report["excluded"][0]["question_id"] == "A-8-Q1"
