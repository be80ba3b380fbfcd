"""The question-set page through Streamlit's AppTest: open, edit, validate, save, generate, run, compare."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from streamlit.testing.v1 import AppTest

from core.question_sets.contract import Question, loads_question_set
from core.question_sets.runner import run_question_set
from core.question_sets.targets import FunctionTarget, RunAnswer
from core.settings import PROJECT_ROOT
from tests.conftest import make_settings
from tests.question_sets.helpers import valid_bytes, valid_payload

PAGE = str(PROJECT_ROOT / "views" / "question_sets.py")


@pytest.fixture
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("WB_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def start() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception, at.exception
    return at


def paste(at: AppTest, text: str) -> AppTest:
    at.text_area(key="qs_paste").input(text)
    at.button(key="qs_paste_open").click()
    at.run()
    assert not at.exception, at.exception
    return at


def version(at: AppTest) -> int:
    """The editor's version: the suffix of the keys of the widgets that show the draft."""
    return at.session_state["qs_editor"].version


def editor(at: AppTest):
    return at.data_editor(key=f"qs_rows_{version(at)}")


def edit_rows(at: AppTest, edited=None, added=None, deleted=None) -> AppTest:
    key = f"qs_rows_{version(at)}"
    at.session_state[key] = {
        "edited_rows": edited or {},
        "added_rows": added or [],
        "deleted_rows": deleted or [],
    }
    at.run()
    assert not at.exception, at.exception
    return at


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def test_new_set_shows_live_errors_and_cannot_be_saved(state_dir):
    at = start()
    assert at.title[0].value == "📝 質問セット"
    assert [t.label for t in at.tabs] == ["編集・検証", "プールから生成", "実行", "実行結果の比較"]
    assert at.text_input(key="qs_schema_version_0").value == "customized_question_set.v1"
    assert "空にできません" in texts(at.error)
    assert at.download_button(key="qs_download").disabled
    assert at.session_state["qs_export_bytes"] is None
    assert "エラーがあるため実行できません" in texts(at.warning)


def test_open_valid_file_round_trips_byte_identically(state_dir):
    at = start()
    at.file_uploader(key="qs_upload").set_value(
        ("customized_question_set.json", valid_bytes(), "application/json")
    )
    at.run()
    assert not at.exception
    assert "契約に適合しています" in texts(at.success)
    frame = editor(at).value
    assert frame["question_id"].tolist() == ["A-1-Q1", "A-2-Q1", "A-14-Q1"]
    assert frame["順番"].tolist() == [1, 2, 3]
    assert not at.download_button(key="qs_download").disabled
    assert at.session_state["qs_export_bytes"] == valid_bytes()
    assert "バイト単位で同一" in texts(at.caption)
    assert at.text_area(key=f"qs_meta_note_{version(at)}").value == "A-v1.1 から作成"


def test_import_shows_every_error_at_once_and_rows_carry_their_errors(state_dir):
    data = valid_payload()
    data["schema_version"] = "customized_question_set.v1.0"
    data["customized_question_set"]["questions"][1]["question_id"] = "A-1-Q1"
    data["customized_question_set"]["questions"][2]["question_text"] = ""
    data["customized_question_set"]["metadata"]["note"] = "3問を除外"
    at = paste(start(), json.dumps(data, ensure_ascii=False))
    assert "エラーが 4 件あります。編集して修正できます" in texts(at.error)
    imported = at.dataframe[0].value
    assert imported["場所（JSON パス）"].tolist() == [
        "schema_version",
        "customized_question_set.questions[1].question_id",
        "customized_question_set.questions[2].question_text",
        "customized_question_set.metadata.note",
    ]
    errors = editor(at).value["エラー"].tolist()
    assert errors[0] == "" and "重複" in errors[1] and "question_text: 空にできません" in errors[2]
    assert any("形式が不正です" in e.value for e in at.error)  # next to the field
    assert at.session_state["qs_export_bytes"] is None


def test_unreadable_input_keeps_the_current_draft(state_dir):
    at = paste(start(), valid_bytes().decode())
    for broken, needle in (
        ("{not json", "JSON として解析できません"),
        ("[1, 2]", "ルートは JSON オブジェクト"),
    ):
        paste(at, broken)
        assert needle in " ".join(at.dataframe[0].value["内容"].tolist())
        assert editor(at).value["question_id"].tolist() == ["A-1-Q1", "A-2-Q1", "A-14-Q1"]
    at.file_uploader(key="qs_upload").set_value(("sjis.json", "{\"a\": \"条例\"}".encode("cp932"), "application/json"))  # fmt: skip
    at.run()
    assert "UTF-8 として読めません" in " ".join(at.dataframe[0].value["内容"].tolist())
    assert "編集中の内容はそのままです" in texts(at.error)
    assert at.session_state["qs_export_bytes"] == valid_bytes()


def test_edit_add_delete_and_reorder_rows(state_dir):
    at = paste(start(), valid_bytes().decode())
    # edit a text: the export follows
    edit_rows(at, edited={0: {"question_text": "目的は何ですか。"}})
    exported = json.loads(at.session_state["qs_export_bytes"])
    assert (
        exported["customized_question_set"]["questions"][0]["question_text"] == "目的は何ですか。"
    )
    # add a row: it is empty (errors shown in its row) until filled
    edit_rows(at, added=[{"question_id": "A-16-Q1"}])
    frame = editor(at).value
    assert frame["question_id"].tolist() == ["A-1-Q1", "A-2-Q1", "A-14-Q1", "A-16-Q1"]
    assert frame["順番"].tolist() == [1, 2, 3, 4]
    assert "question_text: 空にできません" in frame["エラー"].tolist()[3]
    assert at.session_state["qs_export_bytes"] is None
    edit_rows(at, edited={3: {"question_text": "全体の構成は？"}})
    assert at.session_state["qs_export_bytes"] is not None
    # reorder: move the last row between the first and the second
    edit_rows(at, edited={3: {"順番": 1.5}})
    assert editor(at).value["question_id"].tolist() == ["A-1-Q1", "A-16-Q1", "A-2-Q1", "A-14-Q1"]
    assert editor(at).value["順番"].tolist() == [1, 2, 3, 4]
    # delete a row; make a duplicate id and see it next to the row
    edit_rows(at, deleted=[2])
    edit_rows(at, edited={2: {"question_id": "A-1-Q1"}})
    frame = editor(at).value
    assert frame["question_id"].tolist() == ["A-1-Q1", "A-16-Q1", "A-1-Q1"]
    assert "重複" in frame["エラー"].tolist()[2]
    edit_rows(at, edited={2: {"question_id": "A-14-Q1"}})
    exported = json.loads(at.session_state["qs_export_bytes"])
    ids = [q["question_id"] for q in exported["customized_question_set"]["questions"]]
    assert ids == ["A-1-Q1", "A-16-Q1", "A-14-Q1"]
    assert at.session_state["qs_export_bytes"].endswith(b"}\n")


def test_header_and_metadata_edits_are_validated_live(state_dir):
    at = paste(start(), valid_bytes().decode())
    ver = version(at)
    at.text_input(key=f"qs_ordinance_id_{ver}").input("")
    at.text_area(key=f"qs_meta_note_{ver}").input("全問 PASS")
    at.run()
    errors = texts(at.error)
    assert "空にできません" in errors and "metadata には評価結果" in errors
    at.text_input(key=f"qs_ordinance_id_{ver}").input("k999")
    at.text_area(key=f"qs_meta_note_{ver}").input("")
    at.run()
    exported = json.loads(at.session_state["qs_export_bytes"])
    body = exported["customized_question_set"]
    assert body["ordinance_id"] == "k999" and "note" not in body["metadata"]


def test_the_runbook_pool_is_the_default_and_generates_without_ordinance_fields(state_dir):
    at = start()
    assert at.selectbox(key="qs_gen_pool").value == "RB-v1.0"
    assert not [t for t in at.text_input if t.key == "qs_gen_name"]
    at.text_input(key="qs_gen_oid").input("runbooks")
    at.radio(key="qs_gen_feature_RB-v1.0_ddos").set_value("なし")
    at.form_submit_button[0].click()
    at.run()
    assert not at.exception
    assert "24 問から 22 問を採用、2 問を除外しました" in texts(at.success)
    exported = loads_question_set(at.session_state["qs_export_bytes"])
    assert exported.question_set_id == "cqset-runbooks-RB-v1.0"
    assert not any("DDoS" in q.question_text for q in exported.questions)


def test_generate_from_a_pool_into_the_editor(state_dir):
    at = start()
    at.selectbox(key="qs_gen_pool").set_value("A-v1.1").run()
    at.text_input(key="qs_gen_oid").input("k518RG00000022")
    at.text_input(key="qs_gen_name").input("架空市情報セキュリティ条例")
    at.radio(key="qs_gen_feature_A-v1.1_penalties").set_value("なし")
    at.radio(key="qs_gen_feature_A-v1.1_fees").set_value("あり")
    at.form_submit_button[0].click()
    at.run()
    assert not at.exception
    assert "27 問から 25 問を採用、2 問を除外しました" in texts(at.success)
    report = [d for d in at.dataframe if "除外理由" in d.value.columns]
    assert report[0].value["question_id"].tolist() == ["A-11-Q1", "A-11-Q2"]
    exported = loads_question_set(at.session_state["qs_export_bytes"])
    assert exported.question_set_id == "cqset-k518RG00000022-A-v1.1"
    assert len(exported.questions) == 25
    assert exported.questions[0].question_text.startswith("架空市情報セキュリティ条例")
    assert "除外" not in at.session_state["qs_export_bytes"].decode()


def test_a_tampered_pool_is_shown_as_an_error(state_dir, tmp_path, monkeypatch):
    import shutil

    from tests.question_sets.helpers import GOLDEN_DIR

    golden = tmp_path / "golden"
    golden.mkdir()
    for name in ("A-v1.1.json", "A-v1.1.json.sha256"):
        shutil.copy2(GOLDEN_DIR / name, golden / name)
    with (golden / "A-v1.1.json").open("ab") as fh:
        fh.write(b"\n")
    monkeypatch.setenv("WB_GOLDEN_DIR", str(golden))
    at = start()
    assert "チェックサムが記録値と一致しません" in texts(at.error)
    assert "使える Golden Question Pool がありません" in texts(at.info)


def test_run_with_progress_and_compare_two_runs(state_dir, small_settings, monkeypatch):
    from core.question_sets import targets
    from tests.question_sets.test_runner import search_target

    answers = {"n": 0}

    def fake_make_target(name, settings, pipelines=None, principal=None):
        answers["n"] += 1
        limit = 3 if answers["n"] == 1 else 1
        return search_target(small_settings, limit=limit, name=name)

    monkeypatch.setattr(targets, "make_target", fake_make_target)
    payload = valid_payload()
    payload["customized_question_set"]["questions"] = [
        {"question_id": "RB-1", "question_text": "VPN に接続できないときの確認手順は？"},
        {"question_id": "RB-2", "question_text": "フィッシングメールを受け取ったら？"},
    ]
    at = paste(start(), json.dumps(payload, ensure_ascii=False))
    assert "比較には実行結果が2件以上必要です" in texts(at.info)
    at.button(key="qs_run_go").click()
    at.run()
    assert not at.exception
    assert "実行しました" in texts(at.success)
    assert at.progress and at.progress[0].value == 100
    table = next(d for d in at.dataframe if "回答（冒頭）" in d.value.columns).value
    assert table["question_id"].tolist() == ["RB-1", "RB-2"]
    assert table["引用数"].tolist() == [3, 3]
    assert any("引用元: vpn-login-failure.md" in t.value for t in at.text)

    at.button(key="qs_run_go").click()
    at.run()
    assert not at.exception
    compare = next(d for d in at.dataframe if "状態" in d.value.columns).value
    assert compare["状態"].tolist() == ["変化あり", "変化あり"]
    assert all("引用が変わりました" in c for c in compare["変化"].tolist())
    assert [m.value for m in at.metric if m.label == "変化あり"] == ["2"]


def test_compare_shows_added_and_removed_questions(state_dir):
    settings = make_settings(state_dir)
    qs = loads_question_set(valid_bytes())
    run_question_set(qs, FunctionTarget("runbook", lambda t: RunAnswer("<b>回答</b>")), settings)
    other = replace(qs, questions=(*qs.questions[:2], Question("A-99", "新しい質問")))
    run_question_set(other, FunctionTarget("runbook", lambda t: RunAnswer("<b>回答</b>")), settings)
    at = start()
    compare = next(d for d in at.dataframe if "状態" in d.value.columns).value
    assert compare["状態"].tolist() == ["変化なし", "変化なし", "削除", "追加"]
    assert "質問セットの実行内容（質問 ID・質問文など）が異なります" in texts(at.warning)
    assert any(t.value == "<b>回答</b>" for t in at.text)  # plain text, never HTML
    assert not at.html


# --- reported problems (issue 16): counts, the empty version, a pool, long messages ---------------


def test_uploading_a_pool_points_to_the_generate_tab_and_keeps_the_draft(state_dir):
    from tests.question_sets.helpers import GOLDEN_DIR

    at = paste(start(), valid_bytes().decode())
    at.file_uploader(key="qs_upload").set_value(
        ("A-v1.1.json", (GOLDEN_DIR / "A-v1.1.json").read_bytes(), "application/json")
    )
    at.run()
    assert not at.exception
    errors = texts(at.error)
    assert "「A-v1.1.json」は Golden Question Pool" in errors and "エラーが 2 件" not in errors
    assert "「プールから生成」タブ" in texts(at.info)
    assert editor(at).value["question_id"].tolist() == ["A-1-Q1", "A-2-Q1", "A-14-Q1"]
    assert at.session_state["qs_export_bytes"] == valid_bytes()


def test_the_opened_file_and_the_draft_report_the_same_issues(state_dir):
    at = paste(start(), '{"schema_version": ""}')
    counts = [e.value for e in at.error if "件あります" in e.value]
    assert counts[0].startswith("「貼り付けた JSON」を開きました。エラーが 5 件あります")
    assert counts[1].startswith("エラーが 5 件あります（")
    schema_error = next(e.value for e in at.error if "customized_question_set.v1" in e.value)
    assert schema_error.startswith("空にできません") and "「」" not in schema_error
    # an edit changes both counts together
    at.text_input(key=f"qs_ordinance_id_{version(at)}").input("k1")
    at.run()
    counts = [e.value for e in at.error if "件あります" in e.value]
    assert "エラーが 4 件あります" in counts[0] and counts[1].startswith("エラーが 4 件あります（")


def test_long_messages_can_be_read_whole(state_dir):
    data = valid_payload()
    data["schema_version"] = "customized_question_set.v1.0"
    at = paste(start(), json.dumps(data, ensure_ascii=False))
    message = next(e for e in at.error if "形式が不正です" in e.value).value  # next to the field
    assert len(message) > 60
    full = [t.value for x in at.expander if x.label == "全文を表示" for t in x.text]
    assert f"schema_version\n{message}" in full


def test_a_deeply_nested_paste_is_a_japanese_error_and_keeps_the_draft(state_dir):
    from tests.question_sets.test_cli import deep_set

    at = paste(start(), valid_bytes().decode())
    paste(at, deep_set(950))
    assert not at.exception
    assert "入れ子が深すぎます" in " ".join(at.dataframe[0].value["内容"].tolist())
    assert editor(at).value["question_id"].tolist() == ["A-1-Q1", "A-2-Q1", "A-14-Q1"]
