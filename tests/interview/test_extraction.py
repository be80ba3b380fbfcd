"""Rule-based extraction (Stage02 offline) and answer patterns."""

from __future__ import annotations

from typing import get_args

import pytest

from core.interview.answers import AnswerKind, choose_side, classify_answer, detect_language
from core.interview.domains import FieldKind, FieldSpec, get_domain
from core.interview.extraction import extract_answer, extract_topic, split_for_bundle
from core.interview.normalizers import normalize
from core.interview.parsing import FIELD_PARSERS, extract_field, parse_value

from .conftest import APPENDIX_G

PM = {s.name: s for s in get_domain("postmortem").slots}


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("", AnswerKind.EMPTY),
        ("  。", AnswerKind.EMPTY),
        ("わからない", AnswerKind.UNKNOWN),
        ("すみません、覚えていません", AnswerKind.UNKNOWN),
        ("I don't know", AnswerKind.UNKNOWN),
        ("特になし", AnswerKind.NONE),
        ("ブロッカーは特にありません", AnswerKind.NONE),
        ("None", AnswerKind.NONE),
        ("終了", AnswerKind.ABORT),
        ("原因は不明ですが、設定変更が怪しいと考えています", AnswerKind.CONTENT),
    ],
)
def test_answer_kinds(text, kind):
    assert classify_answer(text) == kind


def test_language_and_sides():
    assert detect_language("The payment API timed out for two hours") == "English"
    assert detect_language("決済APIでタイムアウト") == "Japanese"
    assert choose_side("後者が正しいです") == "new"
    assert choose_side("最初の方です") == "old"
    assert choose_side("どちらとも言えない") is None


def test_appendix_g_answers_fill_their_slots():
    for slot, answer in APPENDIX_G.items():
        value = parse_value(PM[slot], answer)
        assert value.normalized_match == 1.0, slot
    capa = parse_value(PM["capa"], APPENDIX_G["capa"]).items[0]
    assert capa == {
        "action": "設定値の再検証と自動テスト追加",
        "owner": "SRE",
        "due": "2週間",
        "success": "失敗率<1%",
    }
    detection = parse_value(PM["detection"], APPENDIX_G["detection"])
    assert detection.fields["ttd"] == "5分" and detection.norm["ttd"] == 300


def test_incidental_values_are_kept():
    result = extract_answer(APPENDIX_G["summary"], PM, ["summary"])
    slots = {c.slot: c for c in result.candidates}
    assert slots["summary"].mode == "targeted"
    assert slots["timeline"].mode == "incidental"  # 14:30 is a first timeline event
    assert slots["timeline"].items[0]["t"] == "14:30"


def test_bundle_split_by_cues():
    specs = [PM["root_cause"], PM["contributing_factors"]]
    parts = split_for_bundle(
        "根本原因は設定値の不整合です。監視の閾値が高すぎたことも要因として重なった", specs
    )
    assert "設定値" in parts["root_cause"] and "閾値" in parts["contributing_factors"]


def test_unknown_none_and_english():
    assert extract_answer("わからない", PM, ["impact"]).unanswered == ["impact"]
    none = extract_answer("特になし", PM, ["contributing_factors", "capa"])
    assert [c.slot for c in none.candidates] == ["contributing_factors"]
    assert none.unanswered == ["capa"]
    english = extract_answer(
        "About 20,000 requests per minute failed for about 45 minutes", PM, ["impact"]
    )
    impact = english.candidates[0]
    assert english.language == "English"
    assert impact.fields["duration"] == "約45分" and impact.normalized_match == 1.0


def test_topic_fields():
    recipe = {s.name: s for s in get_domain("recipe").slots}
    got = extract_topic("チキンカレー（4人分）", recipe)[0]
    assert got.fields == {"servings": "4人分", "dish": "チキンカレー"}
    daily = {s.name: s for s in get_domain("daily_work").slots}
    assert extract_topic("4月12日の日報", daily)[0].fields["period"] == "4月12日"


def test_very_long_answer_is_cut_for_extraction_only():
    text = "14:30 検知。" + "あ" * 10000
    result = extract_answer(text, PM, ["timeline"])
    assert result.truncated
    assert result.candidates[0].items[0]["t"] == "14:30"


def test_every_field_kind_has_a_parser():
    # ``remainder`` is what the other fields leave over: parse_fields computes it itself.
    assert set(FIELD_PARSERS) == set(get_args(FieldKind)) - {"remainder"}
    spec = FieldSpec(name="rest", label="残り", kind="remainder")
    assert extract_field(spec, "残りの文章") is None


def test_field_parsers_read_their_own_kind():
    text = normalize(
        "毎日9時に約2時間、500人が対象。担当は田中さん。https://example.com/runbook を参照"
    )
    hits = {
        kind: extract_field(FieldSpec(name=kind, label=kind, kind=kind), text)
        for kind in ("time", "duration", "magnitude", "owner", "url")
    }
    assert hits["time"].norm == 9 * 60
    assert hits["duration"].norm == 2 * 3600
    assert hits["magnitude"].display.endswith("500人")
    assert "田中" in hits["owner"].display
    assert hits["url"].norm == "https://example.com/runbook"
    # each span covers the words the parser read
    assert [text[a:b] for a, b in hits["time"].spans] == ["9時"]
    assert [text[a:b] for a, b in hits["duration"].spans] == ["2時間"]
    assert [text[a:b] for a, b in hits["magnitude"].spans] == ["500人"]
    assert [text[a:b] for a, b in hits["owner"].spans] == ["担当は田中さん"]
