"""Streamlit widgets of generating a question set from a Golden Question Pool: choosing a pool,
the generation form, and the outcome with its report (the report is never part of the set)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from core.question_sets.generation import GenerationReport, OrdinanceStructure, report_bytes
from core.question_sets.golden import DEFAULT_POOL_ID, GoldenPool, PoolEntry

FEATURE_CHOICES = ("未指定", "あり", "なし")


def pool_picker(entries: list[PoolEntry], golden_dir: Path) -> str | None:
    """The usable pools to choose from (each unusable one is named with its reason)."""
    for entry in entries:
        if not entry.ok:
            st.error(entry.message)
    usable = {e.pool_id: e for e in entries if e.ok}
    if not usable:
        st.info(f"使える Golden Question Pool がありません（{golden_dir}）。")
        return None
    ids = list(usable)
    return st.selectbox(
        "Golden Question Pool",
        ids,
        index=ids.index(DEFAULT_POOL_ID) if DEFAULT_POOL_ID in usable else 0,
        format_func=lambda i: f"{i}（{usable[i].title}・{usable[i].question_count} 問）",
        key="qs_gen_pool",
    )


def structure_of(choices: dict[str, str]) -> OrdinanceStructure:
    """The ordinance structure from the radio choices (「未指定」 leaves a feature unknown)."""
    return OrdinanceStructure(
        features={f: c == "あり" for f, c in choices.items() if c != FEATURE_CHOICES[0]}
    )


def generation_form(pool: GoldenPool) -> dict[str, Any] | None:
    """The form; once submitted, the keyword arguments of ``generate_question_set``."""
    about_ordinance = "ordinance_name" in pool.placeholders
    with st.form("qs_gen_form"):
        if about_ordinance:
            ordinance_id = st.text_input("ordinance_id（条例 ID、必須）", key="qs_gen_oid")
            ordinance_name = st.text_input(
                "条例の名称（質問文に差し込まれます。空欄なら「この条例」）", key="qs_gen_name"
            )
        else:  # a pool over a corpus (e.g. the sample runbooks): the id names the corpus
            ordinance_id = st.text_input(
                "ordinance_id（対象の ID、必須。例: runbooks）",
                key="qs_gen_oid",
            )
            ordinance_name = ""
        set_id = st.text_input(
            "question_set_id（空欄なら cqset-<条例ID>-<プール>）", key="qs_gen_set_id"
        )
        st.markdown(
            "**条例の構造**（「なし」とした要素を問う質問は除外されます）"
            if about_ordinance
            else "**対象にあるもの**（「なし」とした要素を問う質問は除外されます）"
        )
        choices = {
            feature: st.radio(
                label,
                FEATURE_CHOICES,
                horizontal=True,
                key=f"qs_gen_feature_{pool.pool_id}_{feature}",
            )
            for feature, label in pool.features.items()
        }
        submitted = st.form_submit_button("生成して編集に読み込む", type="primary")
    if not submitted:
        return None
    return {
        "ordinance_id": ordinance_id.strip(),
        "ordinance_name": ordinance_name or None,
        "structure": structure_of(choices),
        "question_set_id": set_id or None,
    }


def show_generation(error: str | None, report: GenerationReport | None) -> None:
    """The outcome of the last generation, with its report and the report's download."""
    if error:
        st.error(error)
    elif report is not None:
        st.success(f"{report.summary_ja()}「編集・検証」タブに読み込みました（保存はそちらから）。")
    if report is None:
        return
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


__all__ = ["generation_form", "pool_picker", "show_generation", "structure_of"]
