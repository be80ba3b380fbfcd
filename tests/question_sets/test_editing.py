"""The question-set editor without Streamlit: opening, transitions, routing issues to fields,
the export check, and what the editor says about what it opened."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.question_sets.contract import (
    MAX_FILE_BYTES,
    canonical_bytes,
    loads_question_set,
    parse_json_bytes,
    validate_payload,
)
from core.question_sets.draft import DraftRow, blank_draft
from core.question_sets.editing import (
    FIELD_PATHS,
    Editor,
    ExportCheck,
    check_export,
    export_notice,
    field_of_path,
    opened_notices,
    read_draft,
    route_issues,
    row_of_path,
)
from core.question_sets.golden import looks_like_pool
from tests.question_sets.helpers import GOLDEN_DIR, has_japanese, valid_bytes, valid_payload

Q = "customized_question_set"
POOL_BYTES = (GOLDEN_DIR / "A-v1.1.json").read_bytes()


def opened_editor(raw: bytes = b"", name: str = "set.json") -> Editor:
    editor = Editor()
    editor.open_bytes(raw or valid_bytes(), name)
    return editor


def messages(notices) -> str:
    return "\n".join(n.text for n in notices)


# --- transitions -------------------------------------------------------------------------------------


def test_a_new_editor_holds_a_blank_draft_that_cannot_be_exported():
    editor = Editor()
    assert editor.draft == blank_draft() and editor.version == 0 and editor.opened is None
    paths = [p for p, _ in editor.issues()]
    assert f"{Q}.ordinance_id" in paths and f"{Q}.questions[0].question_text" in paths
    assert editor.export() is None and editor.question_set() is None


def test_opening_a_valid_file_replaces_the_draft_and_exports_the_same_bytes():
    editor = Editor()
    opened = editor.open_bytes(valid_bytes(), "set.json")
    assert opened.loaded and not opened.issues and not opened.notes
    assert editor.version == 1 and editor.opened is opened
    assert [r.question_id for r in editor.draft.rows] == ["A-1-Q1", "A-2-Q1", "A-14-Q1"]
    assert editor.issues() == []
    assert editor.export() == valid_bytes()
    assert editor.question_set() == loads_question_set(valid_bytes())
    assert messages(opened_notices(opened, editor.issues())) == (
        "「set.json」を開きました。契約に適合しています。"
    )


def test_an_unloadable_file_leaves_the_draft_and_its_version_alone():
    editor = opened_editor()
    draft, version = editor.draft, editor.version
    opened = editor.open_bytes(b"{not json", "broken.json")
    assert not opened.loaded and editor.draft is draft and editor.version == version
    assert editor.opened is opened and opened.issues[0][0] == ""
    text = messages(opened_notices(opened, editor.issues()))
    assert (
        "「broken.json」にはエラーが 1 件あります" in text and "編集中の内容はそのままです" in text
    )
    assert editor.export() == valid_bytes()  # the work is still there


def test_an_upload_is_opened_once_however_often_the_uploader_hands_it_over():
    editor = Editor()
    assert editor.open_upload("file-1", valid_bytes(), "set.json") is not None
    editor.set_header("ordinance_id", "edited")
    assert editor.open_upload("file-1", valid_bytes(), "set.json") is None
    assert editor.draft.ordinance_id == "edited" and editor.version == 1
    assert editor.open_upload("file-2", valid_bytes(), "set.json") is not None
    assert editor.draft.ordinance_id == "k518RG00000022" and editor.version == 2


def test_new_and_load_set_replace_the_draft_and_forget_the_opened_file():
    editor = opened_editor()
    editor.new()
    assert editor.draft == blank_draft() and editor.opened is None and editor.version == 2
    editor.load_set(loads_question_set(valid_bytes()))
    assert editor.export() == valid_bytes() and editor.opened is None and editor.version == 3
    assert check_export(editor.export(), editor.opened) is None


def test_refresh_changes_only_the_version():
    editor = opened_editor()
    before = copy.deepcopy(editor.draft)
    editor.refresh()
    assert editor.version == 2 and editor.draft == before and editor.opened is not None


def test_pasted_lone_surrogates_are_named_not_a_crash():
    data = valid_payload()
    data[Q]["questions"][0]["question_text"] = "\ud800"
    editor = Editor()
    opened = editor.open_text(json.dumps(data))  # ASCII escapes: parses to a lone surrogate
    assert opened.loaded and opened.name == "貼り付けた JSON"
    assert any("サロゲート" in m for p, m in editor.issues() if p.endswith("question_text"))
    draft = editor.draft
    opened = editor.open_text('{"a": "\ud800"}')  # the character itself, as a text area holds it
    assert not opened.loaded and "UTF-8 として読めません" in opened.issues[0][1]
    assert editor.draft is draft


def test_header_edits_and_unknown_fields():
    editor = opened_editor()
    editor.set_header("ordinance_id", "")
    editor.set_header("schema_version", "customized_question_set.v1")
    assert editor.issues() == [(f"{Q}.ordinance_id", "空にできません")]
    with pytest.raises(ValueError):
        editor.set_header("questions", "x")


def test_metadata_text_edits():
    editor = opened_editor()
    editor.set_metadata_text("note", "補足を書き換えた")
    assert editor.draft.metadata["note"] == "補足を書き換えた"
    editor.set_metadata_text("note", "")
    assert "note" not in editor.draft.metadata
    for key in ("generated_by", "generated_at"):
        editor.set_metadata_text(key, "")
    assert editor.draft.metadata is None  # an emptied metadata object is dropped
    exported = json.loads(editor.export())
    assert "metadata" not in exported[Q]

    data = valid_payload()
    data[Q]["metadata"] = {}
    editor = opened_editor(canonical_bytes(data))
    editor.set_metadata_text("note", "")  # untouched field: {} stays {}
    assert editor.export() == canonical_bytes(data)

    data[Q]["metadata"] = {"note": ["a", "b"]}
    editor = opened_editor(canonical_bytes(data))
    editor.set_metadata_text("note", "")  # a non-text value is shown read-only: never changed
    assert editor.draft.metadata == {"note": ["a", "b"]}


def test_row_edits_go_into_the_export():
    editor = opened_editor()
    editor.set_rows([*editor.draft.rows, DraftRow("A-16-Q1", "全体の構成は？")])
    ids = [q.question_id for q in loads_question_set(editor.export()).questions]
    assert ids == ["A-1-Q1", "A-2-Q1", "A-14-Q1", "A-16-Q1"]


# --- one list of issues -------------------------------------------------------------------------------


def test_counts_agree_for_a_file_that_loads_with_missing_parts():
    raw = b'{"schema_version": "customized_question_set.v1"}'
    file_issues = validate_payload(parse_json_bytes(raw))
    assert file_issues == [(Q, "必須項目です")]  # the file has one problem ...
    editor = Editor()
    opened = editor.open_bytes(raw, "part.json")
    issues = editor.issues()  # ... which the draft shows as the fields to fill
    assert len(issues) == 4 and not opened.issues
    text = messages(opened_notices(opened, issues))
    assert f"エラーが {len(issues)} 件あります" in text
    routing = route_issues(issues)
    assert set(routing.fields) == {"ordinance_id", "question_set_id", "source_golden_question_pool"}


def related(a: str, b: str) -> bool:
    """Equal paths, or one inside the other."""
    short, long = sorted((a, b), key=len)
    return long == short or long.startswith((f"{short}.", f"{short}[")) or short == ""


scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=6)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)  # fmt: skip
SPOTS = [
    ("schema_version",), (Q,), (Q, "ordinance_id"), (Q, "questions"), (Q, "questions", 0),
    (Q, "questions", 1, "question_id"), (Q, "metadata"), (Q, "metadata", "note"),
]  # fmt: skip


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SPOTS), values, st.booleans(), st.booleans())
def test_every_problem_of_a_loaded_file_is_in_the_draft_or_named_by_a_note(
    spot, value, delete, duplicate
):
    data = valid_payload()
    holder = data
    for part in spot[:-1]:
        holder = holder[part]
    if delete:
        del holder[spot[-1]]
    else:
        holder[spot[-1]] = value
    text = json.dumps(data, ensure_ascii=False)
    if duplicate:  # the same key twice: the draft keeps the last value
        text = text.replace('"ordinance_id": ', '"ordinance_id": "first", "ordinance_id": ', 1)
    raw = text.encode("utf-8", errors="surrogatepass")
    file_issues = validate_payload(parse_json_bytes(raw))
    editor = Editor()
    opened = editor.open_bytes(raw, "x.json")
    assert opened.loaded
    shown = [p for p, _ in editor.issues()] + [p for p, _ in opened.notes]
    for path, message in file_issues:
        assert any(related(path, other) for other in shown), (path, message, shown)
    if not file_issues:
        assert editor.issues() == [] and not opened.notes


def test_duplicate_keys_are_noted():
    raw = valid_bytes().replace(b'"ordinance_id": ', b'"ordinance_id": "x", "ordinance_id": ', 1)
    opened = Editor().open_bytes(raw, "dup.json")
    assert opened.notes == (
        (f"{Q}.ordinance_id", "キーが重複していたため、最後の値を読み込みました"),
    )
    assert opened.canonical_sha256 is None  # the file itself was not valid


# --- routing ------------------------------------------------------------------------------------------


def test_every_field_routes_its_own_path():
    for name, path in FIELD_PATHS.items():
        assert field_of_path(path) == name
        assert route_issues([(path, "m")]).fields == {name: ["m"]}


@pytest.mark.parametrize(
    ("path", "field"),
    [
        (f"{Q}.metadata.note[0]", "metadata.note"),
        (f"{Q}.metadata.generated_at", "metadata.generated_at"),
        (f"{Q}.metadata.score", "metadata"),  # a key without a field of its own
        (f"{Q}.metadata.extra.judge", "metadata"),
        (f"{Q}.metadataX", None),
        (f"{Q}.questions", None),
        (f"{Q}.unknown", None),
        ("", None),
        ("x", None),
    ],
)
def test_paths_to_fields(path, field):
    assert field_of_path(path) == field


@pytest.mark.parametrize(
    ("path", "row"),
    [
        (f"{Q}.questions[0]", 0),
        (f"{Q}.questions[12].question_text", 12),
        (f"{Q}.questions[abc].question_id", None),
        (f"{Q}.questions[", None),
        (f"{Q}.questions", None),
        (f"{Q}.questionsX[1]", None),
        ("questions[1]", None),
    ],
)
def test_paths_to_rows(path, row):
    assert row_of_path(path) == row


def test_each_kind_of_issue_goes_to_one_place():
    data = valid_payload()
    data["schema_version"] = ""
    data["x"] = "\ud800"
    data[Q]["question_set_id"] = 7
    data[Q]["questions"][1] = "not an object"
    data[Q]["questions"][2]["question_id"] = "A-1-Q1"
    data[Q]["questions"].append({"question_id": "A-3", "question_text": ""})
    data[Q]["metadata"] = {"note": "全問 PASS", "generated_at": "昨日", "score": 1}
    issues = validate_payload(data)
    routing = route_issues(issues)
    assert routing.fields["schema_version"][0].startswith("空にできません")
    assert "文字列である必要があります" in routing.fields["question_set_id"][0]
    assert "metadata には" in routing.fields["metadata.note"][0]
    assert "ISO-8601" in routing.fields["metadata.generated_at"][0]
    assert any("score" in m for m in routing.fields["metadata"])
    assert routing.rows[1] == ["オブジェクトである必要があります（文字列 です）"]
    assert routing.rows[2][0].startswith("question_id: question_id「A-1-Q1」が重複")
    assert routing.rows[3] == ["question_text: 空にできません"]
    assert [p for p, _ in routing.elsewhere] == ["x"]
    placed = sum(map(len, routing.fields.values())) + sum(map(len, routing.rows.values()))
    assert placed + len(routing.elsewhere) == len(issues)


# --- the export check ---------------------------------------------------------------------------------


def test_export_of_the_opened_canonical_file_is_unchanged():
    editor = opened_editor()
    check = check_export(editor.export(), editor.opened)
    assert check is ExportCheck.UNCHANGED
    assert "バイト単位で同一" in export_notice(check).text


def test_a_valid_file_in_another_form_is_reformatted_until_it_is_edited():
    data = valid_payload()
    data[Q] = dict(reversed(list(data[Q].items())))  # other key order, no indentation
    raw = json.dumps(data, ensure_ascii=False).encode()
    editor = opened_editor(raw)
    assert editor.export() != raw
    check = check_export(editor.export(), editor.opened)
    assert check is ExportCheck.REFORMATTED and "正規形式" in export_notice(check).text
    editor.set_header("ordinance_id", "k999")
    assert check_export(editor.export(), editor.opened) is ExportCheck.EDITED
    assert export_notice(ExportCheck.EDITED) is None


def test_a_hash_mismatch_by_one_byte_is_an_edit():
    editor = opened_editor()
    editor.set_header("ordinance_id", "k518RG00000023")  # one byte differs from the file
    export = editor.export()
    assert len(export) == len(valid_bytes()) and export != valid_bytes()
    assert check_export(export, editor.opened) is ExportCheck.EDITED


def test_no_check_without_an_export_or_a_loaded_file():
    editor = opened_editor()
    assert check_export(None, editor.opened) is None
    assert check_export(valid_bytes(), None) is None
    editor.open_bytes(b"[]", "list.json")
    assert check_export(editor.export(), editor.opened) is None
    # a file opened with issues and then fixed is an edit of that file
    broken = valid_payload()
    broken[Q]["ordinance_id"] = ""
    editor = opened_editor(canonical_bytes(broken))
    assert editor.opened.canonical_sha256 is None and editor.export() is None
    editor.set_header("ordinance_id", "k1")
    assert check_export(editor.export(), editor.opened) is ExportCheck.EDITED


# --- malformed input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        (b"", "ファイルが空です"),
        (b"{not json", "JSON として解析できません"),
        ('{"a": "条例"}'.encode("cp932"), "UTF-8 として読めません"),
        ('{"a": 1}'.encode("utf-16"), "UTF-16"),
        (b'{"a": NaN}', "NaN"),
        (b"[1, 2]", "ルートは JSON オブジェクト"),
        (b'"text"', "ルートは JSON オブジェクト"),
        (b"[" * 100_000 + b"]" * 100_000, "入れ子が深すぎます"),
        (b" " * (MAX_FILE_BYTES + 1), "ファイルが大きすぎます"),
    ],
)
def test_malformed_input_is_refused_with_a_message_and_the_draft_kept(raw, needle):
    editor = opened_editor()
    opened = editor.open_bytes(raw, "bad.json")
    assert not opened.loaded and opened.issues and opened.sha256 is None
    text = " ".join(m for _, m in opened.issues)
    assert needle in text and has_japanese(text)
    assert editor.export() == valid_bytes() and editor.version == 1


def test_a_body_that_is_not_an_object_loads_with_a_note():
    opened, draft = read_draft(b'{"schema_version": "customized_question_set.v1", "%s": 5}' % Q.encode(), "b.json")  # fmt: skip
    assert opened.loaded and draft is not None
    assert opened.notes == ((Q, "オブジェクトではないため、内容を読み込めませんでした"),)


def test_non_text_values_are_converted_and_noted():
    data = valid_payload()
    data[Q]["questions"][0]["question_id"] = 101
    editor = opened_editor(canonical_bytes(data))
    assert editor.draft.rows[0].question_id == "101"
    assert editor.opened.notes == (
        (f"{Q}.questions[0].question_id", "文字列ではない値を文字列として読み込みました"),
    )
    assert editor.issues() == []  # converted: nothing left to fix, but the note says what changed


# --- a pool is not a set ------------------------------------------------------------------------------


def test_a_pool_opened_as_a_set_is_refused_with_a_hint_to_the_generate_tab():
    editor = opened_editor()
    opened = editor.open_bytes(POOL_BYTES, "A-v1.1.json")
    assert opened.is_pool and not opened.loaded
    assert editor.export() == valid_bytes() and editor.version == 1
    notices = opened_notices(opened, editor.issues())
    assert [n.level for n in notices] == ["error", "info"]
    assert "Golden Question Pool" in notices[0].text and "「A-v1.1.json」" in notices[0].text
    assert "「プールから生成」タブ" in notices[1].text
    assert "エラーが" not in messages(notices)


def test_looks_like_pool():
    pool = json.loads(POOL_BYTES)
    assert looks_like_pool(pool)
    broken = {**pool, "title": 3, "features": []}  # a malformed pool is still a pool
    assert looks_like_pool(broken)
    assert not looks_like_pool(valid_payload())
    assert not looks_like_pool({"pool_id": "A", "questions": [{"question_text": "x"}]})
    assert not looks_like_pool({"pool_id": "A", "questions": "x"})
    assert not looks_like_pool([pool])
    both = {**valid_payload(), "pool_id": "A", "questions": pool["questions"]}
    assert not looks_like_pool(both)
    opened = Editor().open_bytes(canonical_bytes(both), "both.json")
    assert opened.loaded and not opened.is_pool  # it carries a set: it is opened as one
