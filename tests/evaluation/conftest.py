"""Fixtures of the evaluation tests: hand-made answers, a small indexed corpus, generated logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.schemas.answer import Answer, Citation, Flags
from tests.conftest import copy_samples, make_settings

SMALL_RUNBOOKS = ["ransomware-isolation.md", "phishing-report.md", "vpn-login-failure.md"]

RANSOMWARE_PASSAGE = (
    "1. 感染端末を EDR でネットワーク隔離する(Microsoft Defender for Endpoint の「デバイスの分離」で"
    "「完全」を選択)。\n"
    "2. 端末の電源は切らない。メモリ上の暗号鍵やプロセス情報が失われるため、利用者にも操作しないよう伝える。\n"
    "3. 情報セキュリティ責任者とインシデント対応責任者に第一報を入れる。第一報は推測を含んでよい。"
)
PHISHING_PASSAGE = (
    "1. 除去はソフト削除(SoftDelete)を原則とし、ハード削除は行わない。\n"
    "2. 一括削除の実行前に SOC シフトリーダーの承認を得る。承認者の役割と承認時刻をチケットに残す。"
)


def citation(
    n: int, text: str, file: str = "ransomware-isolation.md", cited: bool = True
) -> Citation:
    return Citation(
        n=n,
        chunk_id=f"{file}#{n}",
        file=file,
        heading="ランサムウェア感染時の隔離手順 > 初動対応",
        score=0.9,
        bm25_score=10.0,
        vector_score=0.9,
        excerpt=text[:200],
        text=text,
        doc_hash="0" * 64,
        cited=cited,
    )


def answer(
    text: str,
    citations: list[Citation] | None = None,
    *,
    question: str = "ランサムウェアに感染した端末をどう隔離しますか",
    mode: str = "extractive",
    banner: str | None = None,
    **flags: bool,
) -> Answer:
    return Answer(
        question=question,
        answer=text,
        answer_mode=mode,
        citations=citations or [],
        flags=Flags(**flags),
        banner=banner,
    )


def write_dataset(path: Path, cases: list[dict]) -> Path:
    path.write_text(
        json.dumps(
            {"version": "1.0", "created_at": "2025-06-01T09:00:00+09:00", "test_cases": cases},
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="session")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(state folder, runbook folder): three sample runbooks indexed once for the session."""
    from core.runbooks import index_runbooks

    root = tmp_path_factory.mktemp("eval-small")
    books = root / "runbooks"
    copy_samples(books, SMALL_RUNBOOKS)
    state = root / "state"
    index_runbooks(make_settings(state, books), None)
    return state, books
