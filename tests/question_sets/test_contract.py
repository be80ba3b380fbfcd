"""The customized_question_set.json contract: every rule passing and failing, reading, export."""

from __future__ import annotations

import json
import os

import pytest

from core.errors import ContractError, InputError
from core.question_sets import contract, jsonfile
from core.question_sets.contract import (
    dumps_question_set,
    forbidden_wording,
    is_canonical,
    loads_question_set,
    parse_json_bytes,
    parse_question_set,
    read_question_set,
    save_question_set,
    validate_payload,
)
from tests.question_sets.helpers import has_japanese, to_bytes, valid_bytes, valid_payload

Q = "customized_question_set"


def errors_of(data) -> dict[str, str]:
    return dict(validate_payload(data))


def test_the_designs_minimal_example_is_valid():
    minimal = {
        "schema_version": "customized_question_set.v1",
        "customized_question_set": {
            "ordinance_id": "k518RG00000022",
            "question_set_id": "cqset-k518RG00000022-A-v1.1",
            "source_golden_question_pool": "A-v1.1",
            "questions": [
                {
                    "question_id": "A-1-Q1",
                    "question_text": "この条例の目的を分かりやすく説明してください。",
                }
            ],
        },
    }
    assert validate_payload(minimal) == []
    qs = parse_question_set(minimal)
    assert qs.metadata is None and qs.question_ids == ["A-1-Q1"]
    assert validate_payload(valid_payload()) == []


# --- schema_version -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "version",
    ["customized_question_set.v1.0", "customized_question_set.v1.2.3", "customized_question_set.1",
     "customized_question_set-v1", "v1", "customized_question_set.V1", "customized_question_set.v01"],
)  # fmt: skip
def test_schema_version_form_is_artifact_dot_v_major_only(version):
    data = valid_payload()
    data["schema_version"] = version
    errors = errors_of(data)
    assert "形式が不正です" in errors["schema_version"]
    assert "customized_question_set.v1" in errors["schema_version"]


@pytest.mark.parametrize("version", ["", "   ", "\u3000"])
def test_an_empty_schema_version_is_called_empty_not_malformed(version):
    data = valid_payload()
    data["schema_version"] = version
    message = errors_of(data)["schema_version"]
    assert message.startswith("空にできません") and "customized_question_set.v1" in message
    assert "形式が不正" not in message and "「」" not in message


def test_other_versions_are_named_unsupported_and_reported_alone():
    data = valid_payload()
    data["schema_version"] = "customized_question_set.v2"
    data[Q]["questions"] = []  # a v2 body is not judged by v1 rules
    issues = validate_payload(data)
    assert len(issues) == 1
    assert issues[0][0] == "schema_version"
    assert (
        "未対応のスキーマバージョン" in issues[0][1]
        and "customized_question_set.v2" in issues[0][1]
    )
    data["schema_version"] = "other_artifact.v1"
    assert "未対応" in errors_of(data)["schema_version"]


@pytest.mark.parametrize("value", [1, 1.0, None, True, ["customized_question_set.v1"], {}])
def test_schema_version_must_be_a_string(value):
    data = valid_payload()
    data["schema_version"] = value
    assert "文字列である必要があります" in errors_of(data)["schema_version"]


def test_missing_schema_version_is_reported_with_the_body_checks():
    data = valid_payload()
    del data["schema_version"]
    data[Q]["questions"][1]["question_id"] = "A-1-Q1"
    errors = errors_of(data)
    assert errors["schema_version"].startswith("必須項目です")
    assert f"{Q}.questions[1].question_id" in errors


# --- root and the set object --------------------------------------------------------------------------


@pytest.mark.parametrize("root", [[], "x", 1, None, True, [valid_payload()]])
def test_root_must_be_an_object(root):
    issues = validate_payload(root)
    assert len(issues) == 1 and issues[0][0] == "" and "オブジェクト" in issues[0][1]


def test_customized_question_set_is_required_and_an_object():
    data = valid_payload()
    del data[Q]
    assert errors_of(data) == {Q: "必須項目です"}
    data[Q] = ["not", "an", "object"]
    assert "オブジェクトである必要があります" in errors_of(data)[Q]


@pytest.mark.parametrize("key", ["ordinance_id", "question_set_id", "source_golden_question_pool"])
def test_required_strings_of_the_set(key):
    data = valid_payload()
    del data[Q][key]
    assert errors_of(data) == {f"{Q}.{key}": "必須項目です"}
    for bad, message in ((123, "文字列である必要があります"), (None, "文字列である必要があります"),
                         ("", "空にできません"), ("  ", "空にできません"),
                         ("a\x00b", "制御文字")):  # fmt: skip
        data[Q][key] = bad
        assert message in errors_of(data)[f"{Q}.{key}"]


def test_questions_required_array_with_at_least_one():
    data = valid_payload()
    del data[Q]["questions"]
    assert "必須項目です" in errors_of(data)[f"{Q}.questions"]
    data[Q]["questions"] = {"question_id": "A"}
    assert "配列である必要があります" in errors_of(data)[f"{Q}.questions"]
    data[Q]["questions"] = []
    assert errors_of(data) == {f"{Q}.questions": "質問は1件以上必要です"}


def test_question_items_need_id_and_text_strings_with_paths():
    data = valid_payload()
    data[Q]["questions"] = [
        {"question_id": "A-1-Q1", "question_text": "ok"},
        "not an object",
        {"question_text": "no id"},
        {"question_id": 7, "question_text": ""},
    ]
    errors = errors_of(data)
    assert "オブジェクトである必要があります" in errors[f"{Q}.questions[1]"]
    assert errors[f"{Q}.questions[2].question_id"] == "必須項目です"
    assert "文字列" in errors[f"{Q}.questions[3].question_id"]
    assert errors[f"{Q}.questions[3].question_text"] == "空にできません"
    assert len(validate_payload(data)) == 4  # every error at once


def test_question_ids_are_unique():
    data = valid_payload()
    data[Q]["questions"][2]["question_id"] = "A-1-Q1"
    issues = validate_payload(data)
    assert issues == [
        (
            f"{Q}.questions[2].question_id",
            f"question_id「A-1-Q1」が重複しています（{Q}.questions[0] と同じ）",
        )
    ]
    # ids differing only in case or spacing are different ids
    data[Q]["questions"][2]["question_id"] = "a-1-q1"
    assert validate_payload(data) == []


def test_question_order_is_preserved():
    data = valid_payload()
    data[Q]["questions"].reverse()
    qs = parse_question_set(data)
    assert qs.question_ids == ["A-14-Q1", "A-2-Q1", "A-1-Q1"]
    out = json.loads(dumps_question_set(qs))
    assert [q["question_id"] for q in out[Q]["questions"]] == ["A-14-Q1", "A-2-Q1", "A-1-Q1"]


# --- metadata ---------------------------------------------------------------------------------------------


def test_metadata_is_optional_and_must_be_an_object():
    data = valid_payload()
    del data[Q]["metadata"]
    assert validate_payload(data) == []
    data[Q]["metadata"] = {}
    assert validate_payload(data) == []
    for bad in (None, "note", [1]):
        data[Q]["metadata"] = bad
        assert "オブジェクトである必要があります" in errors_of(data)[f"{Q}.metadata"]


@pytest.mark.parametrize("key", ["generated_by", "generated_at", "note"])
def test_metadata_fields_are_strings(key):
    data = valid_payload()
    data[Q]["metadata"][key] = 5
    assert "文字列である必要があります" in errors_of(data)[f"{Q}.metadata.{key}"]


@pytest.mark.parametrize(
    ("stamp", "ok"),
    [("2026-01-02T09:00:00+09:00", True), ("2026-01-02T00:00:00Z", True), ("2026-01-02", True),
     ("2026-01-02 09:00:00", True), ("2026/01/02", False), ("昨日", False), ("", False),
     ("2026-13-01", False)],
)  # fmt: skip
def test_generated_at_is_iso_8601(stamp, ok):
    data = valid_payload()
    data[Q]["metadata"]["generated_at"] = stamp
    path = f"{Q}.metadata.generated_at"
    assert (path not in errors_of(data)) is ok
    if not ok:
        assert "ISO-8601" in errors_of(data)[path]


@pytest.mark.parametrize(
    "note",
    ["評価結果: 18/20", "全問 PASS", "Gate 判定: FAIL", "A-11 は罰則がないため除外", "正誤: 正解 12 件",
     "score 0.82", "3 questions were excluded", "evaluation done", "judged correct by reviewer",
     "合否は未定", "スコア 0.9", "結果: NG", "failed the gate", "ＰＡＳＳ"],
)  # fmt: skip
def test_note_must_not_carry_evaluation_verdicts_or_exclusions(note):
    data = valid_payload()
    data[Q]["metadata"]["note"] = note
    message = errors_of(data)[f"{Q}.metadata.note"]
    assert "metadata には評価結果・正誤判断・除外理由・判定" in message


@pytest.mark.parametrize(
    "note",
    ["A-v1.1 から作成", "Generated from pool A-v1.1 for the 2026 review", "担当: 情報政策課",
     "passage と password の表記を統一", "第3章を参照", "bypass を含む質問文を修正", ""],
)  # fmt: skip
def test_ordinary_notes_pass(note):
    data = valid_payload()
    data[Q]["metadata"]["note"] = note
    assert validate_payload(data) == []


@pytest.mark.parametrize(
    "key",
    ["evaluation_result", "score", "passFail", "gate", "excluded_questions", "exclusion_reason",
     "is_correct", "verdict", "評価", "除外理由", "judge_model", "pass_rate", "accuracy", "正誤"],
)  # fmt: skip
def test_metadata_keys_must_not_carry_evaluation(key):
    data = valid_payload()
    data[Q]["metadata"][key] = "x"
    assert "キー名" in errors_of(data)[f"{Q}.metadata.{key}"]


def test_forbidden_content_is_found_at_any_depth_of_metadata():
    data = valid_payload()
    data[Q]["metadata"]["tool"] = {"name": "converter", "history": [{"result": "ok"}, "all PASS"]}
    errors = errors_of(data)
    assert f"{Q}.metadata.tool.history[0].result" in errors
    assert f"{Q}.metadata.tool.history[1]" in errors
    assert f"{Q}.metadata.tool" not in errors


def test_unknown_metadata_keys_without_verdicts_are_accepted():
    data = valid_payload()
    data[Q]["metadata"]["tool_version"] = "1.4.0"
    data[Q]["metadata"]["author"] = {"team": "情報政策課"}
    assert validate_payload(data) == []


def test_forbidden_wording_helper():
    assert forbidden_wording("passage password bypass compass") == []
    assert forbidden_wording("PASS") == ["PASS"]
    assert forbidden_wording("passRate", is_key=True) == ["pass"]
    assert forbidden_wording("generated_by", is_key=True) == []


# --- unknown keys -------------------------------------------------------------------------------------


def test_unknown_optional_keys_are_accepted_and_kept_in_order():
    data = valid_payload()
    data["x_root"] = {"b": 1, "a": [1, 2]}
    data[Q]["x_set"] = "kept"
    data[Q]["questions"][0]["x_hint"] = {"lang": "ja"}
    data[Q]["metadata"]["x_meta"] = 1
    assert validate_payload(data) == []
    out = json.loads(dumps_question_set(parse_question_set(data)))
    assert list(out) == ["schema_version", Q, "x_root"]
    assert list(out[Q]) == [
        "ordinance_id", "question_set_id", "source_golden_question_pool", "questions", "metadata",
        "x_set",
    ]  # fmt: skip
    assert out[Q]["questions"][0] == {
        "question_id": "A-1-Q1",
        "question_text": data[Q]["questions"][0]["question_text"],
        "x_hint": {"lang": "ja"},
    }
    assert list(out[Q]["metadata"]) == ["generated_by", "generated_at", "note", "x_meta"]
    assert out["x_root"] == {"b": 1, "a": [1, 2]}


# --- reading ----------------------------------------------------------------------------------------------


def read_error(raw: bytes) -> str:
    with pytest.raises(ContractError) as info:
        loads_question_set(raw)
    assert info.value.errors and info.value.errors[0][0] == ""
    assert has_japanese(info.value.user_message)
    return info.value.user_message


def test_not_json_gets_a_clear_message_with_the_position():
    message = read_error(b'{"schema_version": "customized_question_set.v1",\n  "x": }')
    assert (
        "JSON として解析できません" in message and "2 行" in message and "値が必要です" in message
    )
    assert "「,」が必要です" in read_error(b'{"a": 1 "b": 2}')
    assert "余分なデータ" in read_error(b"{} {}")


def test_not_utf8_gets_a_clear_message():
    raw = json.dumps(valid_payload(), ensure_ascii=False).encode("cp932")
    message = read_error(raw)
    assert "UTF-8 として読めません" in message and "Shift_JIS" in message
    assert "UTF-16" in read_error(json.dumps(valid_payload()).encode("utf-16"))


def test_very_large_files_are_refused_before_parsing(tmp_path):
    big = b" " * (contract.MAX_FILE_BYTES + 1)
    assert "大きすぎます" in read_error(big)
    path = tmp_path / "big.json"
    path.write_bytes(big)
    with pytest.raises(ContractError, match="大きすぎます"):
        read_question_set(path)


def test_empty_nan_duplicate_keys_deep_nesting_and_surrogates():
    assert "空です" in read_error(b"")
    assert "NaN" in read_error(b'{"a": NaN}')
    assert "桁数" in read_error(b'{"a": ' + b"1" * 5000 + b"}")
    assert "入れ子が深すぎます" in read_error(b"[" * 100_000 + b"]" * 100_000)
    dup = to_bytes(valid_payload()).replace(
        b'"ordinance_id": "k518RG00000022",',
        b'"ordinance_id": "k518RG00000022",\n    "ordinance_id": "other",',
    )
    with pytest.raises(ContractError) as info:
        loads_question_set(dup)
    assert (f"{Q}.ordinance_id", "キーが重複しています（どの値が使われるか解析器によって異なります）") in info.value.errors  # fmt: skip
    lone = to_bytes(valid_payload()).replace("目的".encode(), b"\\ud800")
    with pytest.raises(ContractError) as info:
        loads_question_set(lone)
    assert info.value.errors[0][0] == f"{Q}.questions[0].question_text"
    assert "サロゲート" in info.value.errors[0][1]


def test_a_utf8_bom_is_accepted_and_not_written_back():
    raw = b"\xef\xbb\xbf" + valid_bytes()
    qs = loads_question_set(raw)
    assert dumps_question_set(qs) == valid_bytes()
    assert not is_canonical(raw)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(InputError, match="見つかりません"):
        read_question_set(tmp_path / "nope.json")
    with pytest.raises(InputError, match="ファイルではありません"):
        read_question_set(tmp_path)


def test_all_errors_are_japanese_and_summarized():
    data = valid_payload()
    data["schema_version"] = "customized_question_set.v1.1"
    data[Q]["ordinance_id"] = ""
    data[Q]["questions"][1]["question_id"] = "A-1-Q1"
    data[Q]["metadata"]["note"] = "PASS"
    with pytest.raises(ContractError) as info:
        parse_question_set(data)
    assert [p for p, _ in info.value.errors] == [
        "schema_version",
        f"{Q}.ordinance_id",
        f"{Q}.questions[1].question_id",
        f"{Q}.metadata.note",
    ]
    assert all(has_japanese(m) for _, m in info.value.errors)
    assert info.value.user_message.startswith("質問セットが不正です: schema_version:")
    assert info.value.user_message.endswith("（ほか3件）")


# --- canonical export and the round trip ---------------------------------------------------------------


def test_canonical_form_key_order_indent_non_ascii_trailing_newline():
    data = valid_payload()
    shuffled = {Q: dict(reversed(list(data[Q].items()))), "schema_version": data["schema_version"]}
    shuffled[Q]["questions"] = [dict(reversed(list(q.items()))) for q in data[Q]["questions"]]
    out = dumps_question_set(parse_question_set(shuffled))
    text = out.decode("utf-8")
    assert out == valid_bytes()
    assert text.startswith('{\n  "schema_version": "customized_question_set.v1",\n  "customized_question_set": {\n    "ordinance_id"')  # fmt: skip
    assert "この条例の目的" in text and "\\u" not in text
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert "\r" not in text and not out.startswith(b"\xef\xbb\xbf")


def test_round_trip_is_byte_identical_when_nothing_changed():
    raw = valid_bytes()
    assert dumps_question_set(loads_question_set(raw)) == raw
    assert is_canonical(raw)
    loose = json.dumps(valid_payload(), ensure_ascii=True).encode()  # one line, escaped
    assert not is_canonical(loose)
    assert dumps_question_set(loads_question_set(loose)) == raw


def test_save_writes_the_canonical_bytes(tmp_path):
    path = tmp_path / "out" / "customized_question_set.json"
    save_question_set(loads_question_set(valid_bytes()), path)
    assert path.read_bytes() == valid_bytes()
    assert [p.name for p in path.parent.iterdir()] == ["customized_question_set.json"]


def test_a_failed_save_never_leaves_a_half_written_file(tmp_path, monkeypatch):
    path = tmp_path / "customized_question_set.json"
    path.write_bytes(b"previous content")
    qs = loads_question_set(valid_bytes())

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(jsonfile.os, "replace", broken_replace)
    with pytest.raises(InputError, match="保存できませんでした"):
        save_question_set(qs, path)
    assert path.read_bytes() == b"previous content"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temp file left


def test_a_save_interrupted_while_writing_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "customized_question_set.json"
    path.write_bytes(b"previous content")
    real_fsync = os.fsync

    def crash(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(jsonfile.os, "fsync", crash)
    with pytest.raises(KeyboardInterrupt):
        save_question_set(loads_question_set(valid_bytes()), path)
    monkeypatch.setattr(jsonfile.os, "fsync", real_fsync)
    assert path.read_bytes() == b"previous content"
    assert list(tmp_path.iterdir()) == [path]


def test_an_invalid_set_is_never_saved(tmp_path):
    qs = loads_question_set(valid_bytes())
    from dataclasses import replace

    broken = replace(qs, questions=())
    path = tmp_path / "x.json"
    with pytest.raises(ContractError):
        save_question_set(broken, path)
    assert not path.exists()


def test_parse_json_bytes_returns_plain_values():
    data = parse_json_bytes(valid_bytes())
    assert data == valid_payload()
