"""Shared builders for the question-set tests."""

from __future__ import annotations

import copy
import json
from typing import Any

from core.question_sets.contract import canonical_bytes
from core.settings import PROJECT_ROOT

GOLDEN_DIR = PROJECT_ROOT / "data" / "golden"
STRUCTURE_EXAMPLE = GOLDEN_DIR / "examples" / "ordinance-structure.example.json"

VALID: dict[str, Any] = {
    "schema_version": "customized_question_set.v1",
    "customized_question_set": {
        "ordinance_id": "k518RG00000022",
        "question_set_id": "cqset-k518RG00000022-A-v1.1",
        "source_golden_question_pool": "A-v1.1",
        "questions": [
            {
                "question_id": "A-1-Q1",
                "question_text": "この条例の目的を分かりやすく説明してください。",
            },
            {"question_id": "A-2-Q1", "question_text": "この条例で定義されている用語は何ですか。"},
            {"question_id": "A-14-Q1", "question_text": "この条例はいつから施行されますか。"},
        ],
        "metadata": {
            "generated_by": "reiki-rag-converter",
            "generated_at": "2026-01-02T09:00:00+09:00",
            "note": "A-v1.1 から作成",
        },
    },
}


def valid_payload() -> dict[str, Any]:
    return copy.deepcopy(VALID)


def valid_bytes() -> bytes:
    return canonical_bytes(valid_payload())


def to_bytes(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, indent=2).encode() + b"\n"


def has_japanese(text: str) -> bool:
    return any("\u3040" <= ch <= "\u30ff" or "\u4e00" <= ch <= "\u9fff" for ch in text)
