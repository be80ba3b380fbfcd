"""Question sets: edit, validate and save customized_question_set.json; generate one from a Golden
Question Pool; run it against a RAG pipeline; compare two runs.

The draft being edited lives in ``st.session_state.qs_draft``. Every widget that shows it is keyed
with ``qs_ver``; replacing the draft (new, open, generate, or a table edit that changes order or
errors) bumps the version so that the widgets show the new draft. All user and document text is
shown through plain Streamlit text widgets (escaped); nothing is rendered as HTML.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import streamlit as st

from core.errors import ContractError, WorkbenchError
from core.question_sets.contract import (
    ARTIFACT,
    METADATA_KEYS,
    dumps_question_set,
    parse_json_bytes,
    parse_question_set,
    validate_payload,
)
from core.question_sets.diff import diff_runs
from core.question_sets.editing import (
    Draft,
    blank_draft,
    draft_from_payload,
    draft_from_set,
    draft_to_payload,
)
from core.question_sets.generation import (
    GenerationError,
    OrdinanceStructure,
    generate_question_set,
    report_bytes,
)
from core.question_sets.golden import (
    list_pools,
    load_pool,
)
from core.question_sets.runner import list_runs, read_run, run_question_set
from core.question_sets.targets import TARGET_LABELS, make_target
from ui.question_sets import (
    COL_ERRORS,
    COL_EXTRA,
    COL_ID,
    COL_ORDER,
    COL_TEXT,
    issues_frame,
    render_comparison,
    render_run,
    rows_frame,
    rows_from_frame,
    run_label,
    same_frame,
)
from ui.resources import settings as get_settings

settings = get_settings()
state = st.session_state
state.setdefault("qs_draft", blank_draft())
state.setdefault("qs_ver", 0)
state.setdefault("qs_import", None)  # what the last open/paste found
state.setdefault("qs_upload_seen", None)
state.setdefault("qs_generation", None)  # {"error": str | None, "report": GenerationReport | None}
state.setdefault("qs_last_run", None)


def replace_draft(draft: Draft) -> None:
    state.qs_draft = draft
    state.qs_ver += 1


def open_bytes(raw: bytes, name: str) -> None:
    """Open a file's bytes: show every error at once; keep the current draft if unreadable."""
    try:
        data = parse_json_bytes(raw)
    except ContractError as exc:
        state.qs_import = {"name": name, "errors": exc.errors, "notes": [], "loaded": False}
        return
    errors = validate_payload(data)
    loaded = isinstance(data, Mapping)
    notes: list = []
    if loaded:
        draft, notes = draft_from_payload(data)
        replace_draft(draft)
    state.qs_import = {
        "name": name,
        "errors": errors,
        "notes": notes,
        "loaded": loaded,
        "sha256": hashlib.sha256(raw).hexdigest(),
    }


def show_issues(issues: list) -> None:
    st.dataframe(issues_frame(issues), hide_index=True)


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
    with col_new:
        if st.button("新規作成", key="qs_new", help="編集中の内容は破棄されます"):
            replace_draft(blank_draft())
            state.qs_import = None
    with col_open:
        upload = st.file_uploader(
            "ファイルを開く（customized_question_set.json）", type=["json"], key="qs_upload"
        )
    if upload is not None and upload.file_id != state.qs_upload_seen:
        state.qs_upload_seen = upload.file_id
        open_bytes(upload.getvalue(), upload.name)
    with st.expander("JSON を貼り付けて開く"):
        pasted = st.text_area("JSON テキスト", key="qs_paste", height=150)
        if st.button("貼り付けた JSON を開く", key="qs_paste_open"):
            open_bytes(pasted.encode("utf-8", errors="surrogatepass"), "貼り付けた JSON")

    imported = state.qs_import
    if imported:
        if imported["errors"]:
            tail = (
                "編集して修正できます。"
                if imported["loaded"]
                else "読み込めなかったため、編集中の内容はそのままです。"
            )
            st.error(
                f"「{imported['name']}」にはエラーが {len(imported['errors'])} 件あります。{tail}"
            )
            show_issues(imported["errors"])
        else:
            st.success(f"「{imported['name']}」を開きました。契約に適合しています。")
        if imported["notes"]:
            st.warning("編集できるように変換した値があります（保存前に確認してください）。")
            show_issues(imported["notes"])

    draft: Draft = state.qs_draft
    ver = state.qs_ver
    slots: dict[str, Any] = {}

    st.subheader("基本情報")
    header = [
        ("schema_version", "schema_version（契約バージョン）"),
        ("ordinance_id", "ordinance_id（条例 ID）"),
        ("question_set_id", "question_set_id（人間向けの表示名。機械判定には使われません）"),
        ("source_golden_question_pool", "source_golden_question_pool（派生元のプール）"),
    ]
    columns = st.columns(2)
    for i, (name, label) in enumerate(header):
        with columns[i % 2]:
            value = st.text_input(label, value=getattr(draft, name), key=f"qs_{name}_{ver}")
            setattr(draft, name, value)
            slots[name if name == "schema_version" else f"{ARTIFACT}.{name}"] = st.empty()

    with st.expander("metadata（任意・非契約）", expanded=draft.metadata is not None):
        st.caption(
            "生成元・生成日時・補足などの任意情報です。評価結果・正誤判断・除外理由・"
            "PASS / FAIL / Gate の判定は書けません（下流はこの項目に依存しません）。"
        )
        meta = dict(draft.metadata or {})
        changed = False
        for key in METADATA_KEYS:
            label = {
                "generated_by": "generated_by（生成元）",
                "generated_at": "generated_at（生成日時、ISO-8601。例: 2026-01-02T09:00:00+09:00）",
                "note": "note（補足）",
            }[key]
            current = meta.get(key)
            if current is not None and not isinstance(current, str):
                st.text_input(
                    label,
                    value=json.dumps(current, ensure_ascii=False),
                    disabled=True,
                    key=f"qs_meta_{key}_{ver}",
                )
            else:
                widget = st.text_area if key == "note" else st.text_input
                typed = widget(label, value=current or "", key=f"qs_meta_{key}_{ver}")
                if typed != (current or ""):
                    changed = True
                    if typed:
                        meta[key] = typed
                    else:
                        meta.pop(key, None)
            slots[f"{ARTIFACT}.metadata.{key}"] = st.empty()
        if changed:
            draft.metadata = meta or None
        others = {k: v for k, v in meta.items() if k not in METADATA_KEYS}
        if others:
            st.caption("その他の metadata 項目（そのまま保存されます）")
            st.json(others)
        slots[f"{ARTIFACT}.metadata"] = st.empty()

    st.subheader("質問（上から順に実行されます）")
    st.caption(
        "行の追加は表の下端の「＋」、削除は行を選んでゴミ箱から。並べ替えは「順番」の数字を書き換えます"
        "（例: 2.5 にすると 2 と 3 の間へ移動）。"
    )
    issues = validate_payload(draft_to_payload(draft))
    frame = rows_frame(draft.rows, issues)
    edited = st.data_editor(
        frame,
        key=f"qs_rows_{ver}",
        num_rows="dynamic",
        hide_index=True,
        column_config={
            COL_ORDER: st.column_config.NumberColumn("順番", step=0.5, width="small"),
            COL_ID: st.column_config.TextColumn("question_id", width="medium"),
            COL_TEXT: st.column_config.TextColumn("question_text（質問文）", width="large"),
            COL_ERRORS: st.column_config.TextColumn("エラー", disabled=True, width="medium"),
            COL_EXTRA: None,
        },
    )
    draft.rows = rows_from_frame(edited)
    payload = draft_to_payload(draft)
    issues = validate_payload(payload)
    delta = state.get(f"qs_rows_{ver}") or {}
    has_delta = any(delta.get(k) for k in ("edited_rows", "added_rows", "deleted_rows"))
    if has_delta or not same_frame(edited, rows_frame(draft.rows, issues)):
        # Fold the edits into the draft and show a fresh table (new order, numbering, errors):
        # the editor never accumulates edits on top of data that already contains them.
        state.qs_ver += 1
        st.rerun()

    other_issues = []
    by_slot: dict[str, list[str]] = {}
    for path, message in issues:
        if path in slots:
            by_slot.setdefault(path, []).append(message)
        elif not path.startswith(f"{ARTIFACT}.questions["):
            other_issues.append((path, message))
    for path, messages in by_slot.items():
        slots[path].error("／".join(messages))

    st.subheader("検証と保存")
    if issues:
        st.error(
            f"エラーが {len(issues)} 件あります（質問のエラーは表の「エラー」列にも表示しています）。"
        )
        show_issues(issues)
    else:
        st.success(f"契約に適合しています（質問 {len(draft.rows)} 件）。")

    export: bytes | None = None
    if not issues:
        try:
            export = dumps_question_set(parse_question_set(payload))
        except ContractError as exc:  # not expected: the same payload was just validated
            st.error(exc.user_message)
    state.qs_export_bytes = export
    st.download_button(
        "保存（JSON をダウンロード）",
        data=export or b"",
        file_name="customized_question_set.json",
        mime="application/json",
        disabled=export is None,
        on_click="ignore",
        key="qs_download",
    )
    if export is None:
        st.caption("エラーをすべて解消すると保存できます。")
    else:
        st.caption("UTF-8・契約のキー順・インデント2・末尾改行の正規形式で保存します。")
        if imported and imported.get("sha256"):
            if hashlib.sha256(export).hexdigest() == imported["sha256"]:
                st.caption("開いたファイルから変更はありません（保存内容はバイト単位で同一です）。")
            elif imported["loaded"] and not imported["errors"]:
                st.info(
                    "開いたファイルとは書式またはキー順が異なるため、正規形式に整えて保存します。"
                )

# --- generate ---------------------------------------------------------------------------------------
with tab_generate:
    st.caption(
        "凍結された Golden Question Pool（チェックサムで改変を検知）から、条例ごとの質問セットを"
        "生成して編集に読み込みます。除外した質問とその理由は生成レポートにだけ記録されます。"
    )
    entries = list_pools(settings.golden_dir)
    for entry in entries:
        if not entry.ok:
            st.error(entry.message)
    usable = {e.pool_id: e for e in entries if e.ok}
    if not usable:
        st.info(f"使える Golden Question Pool がありません（{settings.golden_dir}）。")
    else:
        pool_id = st.selectbox(
            "Golden Question Pool",
            list(usable),
            format_func=lambda i: f"{i}（{usable[i].title}・{usable[i].question_count} 問）",
            key="qs_gen_pool",
        )
        pool = None
        try:
            pool = load_pool(settings.golden_dir, pool_id)
        except WorkbenchError as exc:
            st.error(exc.user_message)
        if pool is not None:
            with st.form("qs_gen_form"):
                ordinance_id = st.text_input("ordinance_id（条例 ID、必須）", key="qs_gen_oid")
                ordinance_name = st.text_input(
                    "条例の名称（質問文に差し込まれます。空欄なら「この条例」）", key="qs_gen_name"
                )
                set_id = st.text_input(
                    "question_set_id（空欄なら cqset-<条例ID>-<プール>）", key="qs_gen_set_id"
                )
                st.markdown("**条例の構造**（「なし」とした要素を問う質問は除外されます）")
                choices = {
                    feature: st.radio(
                        label,
                        ["未指定", "あり", "なし"],
                        horizontal=True,
                        key=f"qs_gen_feature_{pool_id}_{feature}",
                    )
                    for feature, label in pool.features.items()
                }
                submitted = st.form_submit_button("生成して編集に読み込む", type="primary")
            if submitted:
                structure = OrdinanceStructure(
                    features={f: c == "あり" for f, c in choices.items() if c != "未指定"}
                )
                try:
                    result = generate_question_set(
                        pool,
                        ordinance_id.strip(),
                        ordinance_name=ordinance_name or None,
                        structure=structure,
                        question_set_id=set_id or None,
                    )
                except GenerationError as exc:
                    state.qs_generation = {"error": exc.user_message, "report": exc.report}
                except WorkbenchError as exc:
                    state.qs_generation = {"error": exc.user_message, "report": None}
                else:
                    replace_draft(draft_from_set(result.question_set))
                    state.qs_import = None
                    state.qs_generation = {"error": None, "report": result.report}
                    st.rerun()  # the edit tab above must show the generated set

    generation = state.qs_generation
    if generation:
        report = generation["report"]
        if generation["error"]:
            st.error(generation["error"])
        elif report is not None:
            st.success(
                f"{report.summary_ja()}「編集・検証」タブに読み込みました（保存はそちらから）。"
            )
        if report is not None:
            st.markdown("**生成レポート**（質問セットには含まれません）")
            if report.excluded:
                st.dataframe(
                    [
                        {"question_id": x.question_id, "分類": x.category, "除外理由": x.reason}
                        for x in report.excluded
                    ],
                    hide_index=True,
                )
            else:
                st.caption("除外した質問はありません。")
            st.download_button(
                "生成レポートをダウンロード",
                data=report_bytes(report),
                file_name="generation_report.json",
                mime="application/json",
                on_click="ignore",
                key="qs_report_download",
            )


# --- run -------------------------------------------------------------------------------------------------


with tab_run:
    if issues:
        st.warning(
            "編集中の質問セットにエラーがあるため実行できません。「編集・検証」タブで修正してください。"
        )
    else:
        question_set = parse_question_set(payload)
        st.text(
            f"質問セット: {question_set.question_set_id}（条例 {question_set.ordinance_id}・"
            f"質問 {len(question_set.questions)} 件）"
        )
        target_name = st.selectbox(
            "実行先", list(TARGET_LABELS), format_func=TARGET_LABELS.get, key="qs_run_target"
        )
        if st.button("実行", type="primary", key="qs_run_go"):
            try:
                target = make_target(target_name, settings)
            except WorkbenchError as exc:
                st.error(exc.user_message)
            else:
                bar = st.progress(0.0, text="実行しています…")

                def progress(done: int, total: int, question_id: str) -> None:
                    bar.progress(
                        done / total if total else 1.0, text=f"{done} / {total} {question_id}"
                    )

                try:
                    result = run_question_set(question_set, target, settings, progress=progress)
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

# --- compare ----------------------------------------------------------------------------------------------


with tab_compare:
    runs = [str(p) for p in list_runs(settings)[:100]]
    if len(runs) < 2:
        st.info("比較には実行結果が2件以上必要です。「実行」タブで質問セットを実行してください。")
    else:
        labels = {p: run_label(p) for p in runs}
        col_a, col_b = st.columns(2)
        run_a = col_a.selectbox(
            "比較元（前）", runs, index=1, format_func=labels.get, key="qs_cmp_a"
        )
        run_b = col_b.selectbox(
            "比較先（後）", runs, index=0, format_func=labels.get, key="qs_cmp_b"
        )
        if run_a == run_b:
            st.info("異なる2つの実行結果を選んでください。")
        else:
            try:
                comparison = diff_runs(read_run(run_a), read_run(run_b))
            except WorkbenchError as exc:
                st.error(exc.user_message)
            else:
                render_comparison(comparison)
