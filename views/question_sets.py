"""Question sets: edit, validate and save customized_question_set.json; generate one from a Golden
Question Pool; run it against a RAG pipeline; compare two runs.

The editor's state is ``core.question_sets.editing.Editor`` in ``st.session_state.qs_editor``:
this page hands it what the widgets return and shows what it says. Widgets that show the draft
are keyed with ``editor.version``, which changes whenever the draft is replaced.
"""

from __future__ import annotations

import streamlit as st

from core.errors import WorkbenchError
from core.question_sets.diff import diff_runs
from core.question_sets.editing import Editor, check_export, export_notice, route_issues
from core.question_sets.generation import GenerationError, generate_question_set
from core.question_sets.golden import list_pools, load_pool
from core.question_sets.runner import list_runs, read_run, run_question_set
from core.question_sets.targets import TARGET_LABELS, make_target
from ui.auth import require
from ui.question_set_generation import generation_form, pool_picker, show_generation
from ui.question_set_runs import choose_two_runs, render_comparison, render_run
from ui.question_sets import (
    header_inputs,
    metadata_inputs,
    rows_editor,
    rows_frame,
    rows_from_frame,
    save_button,
    show_field_issues,
    show_opened,
    show_validation,
    table_is_stale,
)
from ui.resources import settings as get_settings

principal = require("reviewer")
settings = get_settings()
state = st.session_state
state.setdefault("qs_editor", Editor())
state.setdefault("qs_generation", None)  # {"error": str | None, "report": GenerationReport | None}
state.setdefault("qs_last_run", None)
editor: Editor = state.qs_editor

st.title("📝 質問セット")
st.caption(
    "customized_question_set.json（評価観測用の実行入力契約・凍結）を作成・検証・保存し、"
    "RAG ページに対して実行して結果を比較します。"
)
tab_edit, tab_generate, tab_run, tab_compare = st.tabs(
    ["編集・検証", "プールから生成", "実行", "実行結果の比較"]
)

# --- edit ------------------------------------------------------------------------------------------
with tab_edit:
    col_new, col_open = st.columns([1, 3])
    if col_new.button("新規作成", key="qs_new", help="編集中の内容は破棄されます"):
        editor.new()
    upload = col_open.file_uploader(
        "ファイルを開く（customized_question_set.json）", type=["json"], key="qs_upload"
    )
    if upload is not None:
        editor.open_upload(upload.file_id, upload.getvalue(), upload.name)
    with st.expander("JSON を貼り付けて開く"):
        pasted = st.text_area("JSON テキスト", key="qs_paste", height=150)
        if st.button("貼り付けた JSON を開く", key="qs_paste_open"):
            editor.open_text(pasted)
    opened_area = st.container()  # filled below, once the draft's issues are known

    st.subheader("基本情報")
    values, slots = header_inputs(editor.draft, editor.version)
    for name, value in values.items():
        editor.set_header(name, value)
    texts, metadata_slots = metadata_inputs(editor.draft, editor.version)
    for key, text in texts.items():
        editor.set_metadata_text(key, text)

    st.subheader("質問（上から順に実行されます）")
    st.caption(
        "行の追加は表の下端の「＋」、削除は行を選んでゴミ箱から。並べ替えは「順番」の数字を書き換えます"
        "（例: 2.5 にすると 2 と 3 の間へ移動）。"
    )
    table_key = f"qs_rows_{editor.version}"
    edited = rows_editor(
        rows_frame(editor.draft.rows, route_issues(editor.issues()).rows), table_key
    )
    editor.set_rows(rows_from_frame(edited))
    issues = editor.issues()
    routing = route_issues(issues)
    if table_is_stale(table_key, edited, rows_frame(editor.draft.rows, routing.rows)):
        editor.refresh()
        st.rerun()

    show_field_issues({**slots, **metadata_slots}, routing.fields)
    with opened_area:
        show_opened(editor.opened, issues)

    st.subheader("検証と保存")
    show_validation(issues, len(editor.draft.rows))
    export = editor.export()
    state.qs_export_bytes = export
    save_button(export, export_notice(check_export(export, editor.opened)))

# --- generate ---------------------------------------------------------------------------------------
with tab_generate:
    st.caption(
        "凍結された Golden Question Pool（チェックサムで改変を検知）から、条例ごとの質問セットを"
        "生成して編集に読み込みます。除外した質問とその理由は生成レポートにだけ記録されます。"
    )
    pool_id = pool_picker(list_pools(settings.golden_dir), settings.golden_dir)
    pool = request = None
    if pool_id is not None:
        try:
            pool = load_pool(settings.golden_dir, pool_id)
        except WorkbenchError as exc:
            st.error(exc.user_message)
    if pool is not None:
        request = generation_form(pool)
    if request is not None:
        try:
            result = generate_question_set(pool, **request)
        except GenerationError as exc:
            state.qs_generation = {"error": exc.user_message, "report": exc.report}
        except WorkbenchError as exc:
            state.qs_generation = {"error": exc.user_message, "report": None}
        else:
            editor.load_set(result.question_set)
            state.qs_generation = {"error": None, "report": result.report}
            st.rerun()  # the edit tab above must show the generated set
    if state.qs_generation:
        show_generation(**state.qs_generation)

# --- run -------------------------------------------------------------------------------------------
with tab_run:
    question_set = editor.question_set()
    if question_set is None:
        st.warning(
            "編集中の質問セットにエラーがあるため実行できません。「編集・検証」タブで修正してください。"
        )
    else:
        st.text(
            f"質問セット: {question_set.question_set_id}（条例 {question_set.ordinance_id}・"
            f"質問 {len(question_set.questions)} 件）"
        )
        target_name = st.selectbox(
            "実行先", list(TARGET_LABELS), format_func=TARGET_LABELS.get, key="qs_run_target"
        )
        if st.button("実行", type="primary", key="qs_run_go"):
            try:
                target = make_target(target_name, settings, principal=principal)
            except WorkbenchError as exc:
                st.error(exc.user_message)
            else:
                bar = st.progress(0.0, text="実行しています…")

                def progress(done: int, total: int, question_id: str) -> None:
                    bar.progress(
                        done / total if total else 1.0, text=f"{done} / {total} {question_id}"
                    )

                try:
                    result = run_question_set(
                        question_set, target, settings, progress=progress, principal=principal
                    )
                except WorkbenchError as exc:
                    st.error(exc.user_message)
                else:
                    state.qs_last_run = str(result.path)
                    st.success(f"実行しました。保存先: {result.path}")
    if state.qs_last_run:
        try:
            render_run(read_run(state.qs_last_run))
        except WorkbenchError as exc:
            st.error(exc.user_message)

# --- compare ---------------------------------------------------------------------------------------
with tab_compare:
    pair = choose_two_runs([str(p) for p in list_runs(settings)[:100]])
    if pair is not None:
        try:
            comparison = diff_runs(read_run(pair[0]), read_run(pair[1]))
        except WorkbenchError as exc:
            st.error(exc.user_message)
        else:
            render_comparison(comparison)
